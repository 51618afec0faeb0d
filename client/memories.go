package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// Add stores one or more memories in one transaction. Each memory without
// an idempotency key gets one, so a retry after a 503 or a lost answer
// stores it once.
func (c *Client) Add(ctx context.Context, ms ...NewMemory) (WriteResponse, error) {
	batch := withKeys(ms)
	var out WriteResponse
	_, err := c.send(ctx, call{method: http.MethodPost, path: "/v1/memories", body: map[string]any{"memories": batch}}, &out)
	return out, err
}

// AddAsync queues memories to be written by a worker (202 and a job). The
// call's idempotency key makes a resubmission return the first job.
func (c *Client) AddAsync(ctx context.Context, ms ...NewMemory) (Job, error) {
	var out Job
	_, err := c.send(ctx, call{method: http.MethodPost, path: "/v1/memories", query: url.Values{"async": {"true"}},
		body: map[string]any{"memories": ms}, header: idempotent()}, &out)
	return out, err
}

func withKeys(ms []NewMemory) []NewMemory {
	key := NewIdempotencyKey()
	out := make([]NewMemory, len(ms))
	for i, m := range ms {
		if m.IdempotencyKey == "" {
			m.IdempotencyKey = key + ":" + strconv.Itoa(i)
		}
		out[i] = m
	}
	return out
}

func idempotent() http.Header {
	return http.Header{"Idempotency-Key": {NewIdempotencyKey()}}
}

// Get returns one memory.
func (c *Client) Get(ctx context.Context, id string) (Memory, error) {
	var out Memory
	_, err := c.send(ctx, call{method: http.MethodGet, path: "/v1/memories" + pathOf(id)}, &out)
	return out, err
}

// List returns one page of the memories the caller may read, newest first.
func (c *Client) List(ctx context.Context, o ListOptions) (Page, error) {
	q := url.Values{}
	for k, v := range map[string]string{"user_id": o.UserID, "type": o.Type, "kind": o.Kind, "status": o.Status, "cursor": o.Cursor} {
		if v != "" {
			q.Set(k, v)
		}
	}
	if !o.From.IsZero() {
		q.Set("from", o.From.Format(time.RFC3339))
	}
	if !o.To.IsZero() {
		q.Set("to", o.To.Format(time.RFC3339))
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	var out Page
	_, err := c.send(ctx, call{method: http.MethodGet, path: "/v1/memories", query: q}, &out)
	return out, err
}

// Update writes a new version of a memory. ifMatch > 0 must be the current
// version, or the call fails with code conflict.
func (c *Client) Update(ctx context.Context, id string, ifMatch int, u UpdateRequest) (Memory, error) {
	cl := call{method: http.MethodPatch, path: "/v1/memories" + pathOf(id), body: u}
	if ifMatch > 0 {
		cl.header = http.Header{"If-Match": {fmt.Sprintf("%q", strconv.Itoa(ifMatch))}}
	}
	var out Memory
	_, err := c.send(ctx, cl, &out)
	return out, err
}

// History returns a memory's versions, newest first.
func (c *Client) History(ctx context.Context, id string) ([]Memory, error) {
	var out struct {
		Memories []Memory `json:"memories"`
	}
	_, err := c.send(ctx, call{method: http.MethodGet, path: "/v1/memories" + pathOf(id, "history")}, &out)
	return out.Memories, err
}

// Confirm makes a candidate memory active (its user, or an admin).
func (c *Client) Confirm(ctx context.Context, id string) (Memory, error) {
	var out Memory
	_, err := c.send(ctx, call{method: http.MethodPost, path: "/v1/memories" + pathOf(id, "confirm")}, &out)
	return out, err
}

// Delete erases a memory with every version the caller may delete.
func (c *Client) Delete(ctx context.Context, id string) (Receipt, error) {
	return c.DeleteBecause(ctx, id, "")
}

// DeleteBecause is Delete with a reason (at most 200 characters), which
// the tombstones and the audit trail keep; empty gives the service's own.
func (c *Client) DeleteBecause(ctx context.Context, id, reason string) (Receipt, error) {
	var q url.Values
	if reason != "" {
		q = url.Values{"reason": {reason}}
	}
	var out Receipt
	_, err := c.send(ctx, call{method: http.MethodDelete, path: "/v1/memories" + pathOf(id), query: q}, &out)
	return out, err
}

// DeleteUser erases a user everywhere (admins, and the user themself).
func (c *Client) DeleteUser(ctx context.Context, userID string) (Receipt, error) {
	var out Receipt
	_, err := c.send(ctx, call{method: http.MethodDelete, path: "/v1/users" + pathOf(userID)}, &out)
	return out, err
}

// Recall returns the memories that matter for a query, with a context
// block ready for a prompt.
func (c *Client) Recall(ctx context.Context, r RecallRequest) (RecallResult, error) {
	var out RecallResult
	_, err := c.send(ctx, call{method: http.MethodPost, path: "/v1/recall", body: r}, &out)
	return out, err
}

// Ingest extracts memories from conversation turns now and returns them.
func (c *Client) Ingest(ctx context.Context, r IngestRequest) (IngestResult, error) {
	var out IngestResult
	_, err := c.send(ctx, call{method: http.MethodPost, path: "/v1/ingest", query: url.Values{"sync": {"true"}}, body: r}, &out)
	return out, err
}

// IngestAsync queues conversation turns for extraction (202 and a job).
func (c *Client) IngestAsync(ctx context.Context, r IngestRequest) (Job, error) {
	var out Job
	h := idempotent()
	if r.IdempotencyKey != "" {
		h.Set("Idempotency-Key", r.IdempotencyKey)
	}
	_, err := c.send(ctx, call{method: http.MethodPost, path: "/v1/ingest", body: r, header: h}, &out)
	return out, err
}

// Job returns a queued job's status.
func (c *Client) Job(ctx context.Context, id string) (Job, error) {
	var out Job
	_, err := c.send(ctx, call{method: http.MethodGet, path: "/v1/jobs" + pathOf(id)}, &out)
	return out, err
}

// WaitJob polls a job every interval until it is done or failed, or ctx
// ends.
func (c *Client) WaitJob(ctx context.Context, id string, interval time.Duration) (Job, error) {
	for {
		j, err := c.Job(ctx, id)
		if err != nil || j.Status != "queued" && j.Status != "running" {
			return j, err
		}
		select {
		case <-ctx.Done():
			return j, ctx.Err()
		case <-time.After(interval):
		}
	}
}

// WhoAmI returns the principal the key stands for.
func (c *Client) WhoAmI(ctx context.Context) (Principal, error) {
	var out Principal
	_, err := c.send(ctx, call{method: http.MethodGet, path: "/v1/whoami"}, &out)
	return out, err
}
