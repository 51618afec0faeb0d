// Package client is a Go client for Mneme's REST API: typed requests and
// answers, errors that carry the API's stable code and HTTP status, retries
// with backoff when the service answers 503, and idempotency keys on every
// write so that a retried write stores its memories once.
package client

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Options tunes a Client; the zero value is usable.
type Options struct {
	// HTTPClient sends the requests (default: one with a 30s timeout).
	HTTPClient *http.Client
	// MaxRetries is how often a request answered 503 is sent again
	// (default 3; negative: never).
	MaxRetries int
	// Backoff is the wait before the first retry; it doubles each time,
	// with jitter, up to MaxBackoff (defaults 200ms and 5s). A Retry-After
	// header, when longer, wins.
	Backoff, MaxBackoff time.Duration
}

// Client talks to one Mneme deployment with one API key (or bearer token).
// It is safe for concurrent use.
type Client struct {
	base       string
	key        string
	http       *http.Client
	retries    int
	backoff    time.Duration
	maxBackoff time.Duration
}

// New returns a client of the API at baseURL (such as
// http://127.0.0.1:8080) that authenticates with apiKey.
func New(baseURL, apiKey string, opts *Options) *Client {
	var o Options
	if opts != nil {
		o = *opts
	}
	c := &Client{base: strings.TrimRight(baseURL, "/"), key: apiKey, http: o.HTTPClient,
		retries: o.MaxRetries, backoff: o.Backoff, maxBackoff: o.MaxBackoff}
	if c.http == nil {
		c.http = &http.Client{Timeout: 30 * time.Second}
	}
	switch {
	case opts == nil || o.MaxRetries == 0:
		c.retries = 3
	case o.MaxRetries < 0:
		c.retries = 0
	}
	if c.backoff <= 0 {
		c.backoff = 200 * time.Millisecond
	}
	if c.maxBackoff <= 0 {
		c.maxBackoff = 5 * time.Second
	}
	return c
}

// Error is an answer with an error status: the API's stable code (such as
// not_found, forbidden, unavailable), its message and request id.
type Error struct {
	Status    int
	Code      string
	Message   string
	RequestID string
	// RetryAfter is how long the service asked the caller to wait (its
	// Retry-After header) before trying again, as on rate_limited; 0 when
	// it did not say.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("mneme: HTTP %d", e.Status)
	}
	return fmt.Sprintf("mneme: %s: %s (HTTP %d, request %s)", e.Code, e.Message, e.Status, e.RequestID)
}

// Code returns the API code of err, or "" when err is not an *Error.
func Code(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// call is one request: its body is encoded once and sent again as is on a
// retry; headers are added to every attempt.
type call struct {
	method, path string
	query        url.Values
	body         any
	header       http.Header
}

// Do sends a request to path (such as /v1/grants) with body encoded as
// JSON when it is not nil, and decodes the answer into out when it is not
// nil (a *json.RawMessage keeps it as sent). Typed methods cover the memory
// API; Do serves the rest.
func (c *Client) Do(ctx context.Context, method, path string, body, out any) error {
	_, err := c.send(ctx, call{method: method, path: path, body: body}, out)
	return err
}

func (c *Client) send(ctx context.Context, cl call, out any) (http.Header, error) {
	var raw []byte
	if cl.body != nil {
		var err error
		if raw, err = json.Marshal(cl.body); err != nil {
			return nil, fmt.Errorf("mneme: encode request: %w", err)
		}
	}
	target := c.base + cl.path
	if len(cl.query) > 0 {
		target += "?" + cl.query.Encode()
	}
	for attempt := 0; ; attempt++ {
		header, err := c.once(ctx, cl, target, raw, out)
		var e *Error
		if attempt >= c.retries || !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable {
			return header, err
		}
		if err := c.sleep(ctx, attempt, header); err != nil {
			return header, err
		}
	}
}

func (c *Client) once(ctx context.Context, cl call, target string, raw []byte, out any) (http.Header, error) {
	var body io.Reader
	if raw != nil {
		body = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, cl.method, target, body)
	if err != nil {
		return nil, err
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	if raw != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	for k, vs := range cl.header {
		req.Header[k] = vs
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("mneme: %s %s: %w", cl.method, cl.path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.Header, fmt.Errorf("mneme: %s %s: read answer: %w", cl.method, cl.path, err)
	}
	if resp.StatusCode >= 300 {
		e := &Error{Status: resp.StatusCode, RequestID: resp.Header.Get("X-Request-ID")}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			e.RetryAfter = time.Duration(s) * time.Second
		}
		var body struct {
			Code      string `json:"code"`
			Message   string `json:"message"`
			RequestID string `json:"request_id"`
		}
		if json.Unmarshal(data, &body) == nil {
			e.Code, e.Message = body.Code, body.Message
			if body.RequestID != "" {
				e.RequestID = body.RequestID
			}
		}
		return resp.Header, e
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return resp.Header, fmt.Errorf("mneme: %s %s: decode answer: %w", cl.method, cl.path, err)
		}
	}
	return resp.Header, nil
}

// sleep waits before retry attempt+1: exponential backoff with jitter, or
// the server's Retry-After when longer.
func (c *Client) sleep(ctx context.Context, attempt int, header http.Header) error {
	d := c.backoff << attempt
	if d > c.maxBackoff || d <= 0 {
		d = c.maxBackoff
	}
	d = d/2 + rand.N(d/2+1)
	if s, err := strconv.Atoi(header.Get("Retry-After")); err == nil && time.Duration(s)*time.Second > d {
		d = time.Duration(s) * time.Second
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// NewIdempotencyKey returns a fresh random key for a write.
func NewIdempotencyKey() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	return "go-" + hex.EncodeToString(b[:])
}

func pathOf(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString("/")
		b.WriteString(url.PathEscape(p))
	}
	return b.String()
}
