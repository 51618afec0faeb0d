package handlers

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"mneme/memory"
)

// batchRequest creates several memories in one transaction.
type batchRequest struct {
	Memories []memory.NewMemory `json:"memories"`
}

type memoriesResponse struct {
	Memories []memory.Memory `json:"memories"`
}

// writeResponse answers a batch write: the memories stored or reinforced, in
// request order, and one result per memory sent.
type writeResponse struct {
	Memories []memory.Memory      `json:"memories"`
	Results  []memory.WriteResult `json:"results"`
}

func (a *api) createMemories(c *gin.Context) error {
	body, err := a.readBody(c)
	if err != nil {
		return err
	}
	var batch []memory.NewMemory
	batched, mixed := isBatch(body)
	if mixed {
		// Decoded as one memory, it would be refused for an unknown field
		// "memories", which tells the client nothing of the rule.
		return &badRequest{"bad_json", `a batch body holds only "memories": put user_id and the other fields in each memory`}
	}
	if batched {
		var req batchRequest
		if err := decodeStrict(body, &req); err != nil {
			return err
		}
		batch = req.Memories
		if batch == nil {
			return memory.Invalid("memories", "at least one memory is required")
		}
	} else {
		var one memory.NewMemory
		if err := decodeStrict(body, &one); err != nil {
			return err
		}
		batch = []memory.NewMemory{one}
	}
	// Queued or not, the memories carry the keys the header makes: a retry
	// in the other mode then finds them stored and repeats nothing.
	idemKey, err := idempotencyKey(c)
	if err != nil {
		return err
	}
	if err := keyed(batch, idemKey); err != nil {
		return err
	}
	if async, err := boolParam(c, "async"); err != nil {
		return err
	} else if async {
		job, err := a.svc.CreateAsync(c.Request.Context(), principalOf(c), batch, idemKey)
		if err != nil {
			// The guard refuses a queued write now; what a worker writes
			// is counted when it applies the job (metrics.Jobs).
			a.observe.Wrote(principalOf(c).Tenant, nil, err)
			return err
		}
		c.Header("Location", "/v1/jobs/"+job.ID)
		c.JSON(http.StatusAccepted, job)
		return nil
	}
	results, err := a.svc.Write(c.Request.Context(), principalOf(c), batch)
	a.observe.Wrote(principalOf(c).Tenant, results, err)
	if err != nil {
		return err
	}
	status := http.StatusOK
	for _, r := range results {
		if r.Outcome == memory.OutcomeCreated {
			status = http.StatusCreated
		}
	}
	if !batched {
		r := results[0]
		if r.Memory == nil {
			c.JSON(status, r)
			return nil
		}
		m := *r.Memory
		m.Outcome, m.Redacted = r.Outcome, r.Redacted
		c.Header("ETag", etag(m.Version))
		c.JSON(status, m)
		return nil
	}
	resp := writeResponse{Memories: []memory.Memory{}, Results: results}
	for _, r := range results {
		if r.Memory != nil {
			resp.Memories = append(resp.Memories, *r.Memory)
		}
	}
	c.JSON(status, resp)
	return nil
}

// isBatch tells a batch body from a single memory: a batch is an object
// whose only key is "memories"; mixed is an object with "memories" beside
// other keys, which is neither.
func isBatch(body []byte) (batch, mixed bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil {
		return false, false
	}
	_, ok := top["memories"]
	return ok && len(top) == 1, ok && len(top) > 1
}

func (a *api) getMemory(c *gin.Context) error {
	m, err := a.svc.Get(c.Request.Context(), principalOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	c.Header("ETag", etag(m.Version))
	c.JSON(http.StatusOK, m)
	return nil
}

func (a *api) listMemories(c *gin.Context) error {
	req := memory.ListRequest{
		UserID: c.Query("user_id"), Type: c.Query("type"), Kind: c.Query("kind"),
		Status: c.Query("status"), Cursor: c.Query("cursor"),
	}
	var err error
	if req.From, err = timeParam(c, "from"); err != nil {
		return err
	}
	if req.To, err = timeParam(c, "to"); err != nil {
		return err
	}
	if s := c.Query("limit"); s != "" {
		if req.Limit, err = strconv.Atoi(s); err != nil || req.Limit < 1 {
			return memory.Invalid("limit", "must be a positive whole number")
		}
	}
	page, err := a.svc.List(c.Request.Context(), principalOf(c), req)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, page)
	return nil
}

// boolParam reads an optional true/false query parameter.
func boolParam(c *gin.Context, name string) (bool, error) {
	switch c.Query(name) {
	case "", "false", "0":
		return false, nil
	case "true", "1":
		return true, nil
	}
	return false, memory.Invalid(name, "must be true or false")
}

func (a *api) getJob(c *gin.Context) error {
	job, err := a.svc.JobStatus(c.Request.Context(), principalOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, job)
	return nil
}

func timeParam(c *gin.Context, name string) (time.Time, error) {
	s := c.Query(name)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil || t.Year() < 1970 {
		// The zero time would read as no bound at all.
		return time.Time{}, memory.Invalid(name, "must be an RFC 3339 time after 1970, such as 2026-03-01T00:00:00Z")
	}
	return t, nil
}

func (a *api) updateMemory(c *gin.Context) error {
	ifMatch, err := ifMatchOf(c.Request.Header.Values("If-Match"))
	if err != nil {
		return err
	}
	var req memory.UpdateRequest
	if err := a.bind(c, &req); err != nil {
		return err
	}
	m, err := a.svc.Update(c.Request.Context(), principalOf(c), c.Param("id"), ifMatch, req)
	if err != nil {
		return err
	}
	c.Header("ETag", etag(m.Version))
	c.JSON(http.StatusOK, m)
	return nil
}

func (a *api) confirmMemory(c *gin.Context) error {
	m, err := a.svc.Confirm(c.Request.Context(), principalOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	c.Header("ETag", etag(m.Version))
	c.JSON(http.StatusOK, m)
	return nil
}

func (a *api) deleteMemory(c *gin.Context) error {
	r, err := a.svc.Delete(c.Request.Context(), principalOf(c), c.Param("id"), c.Query("reason"))
	if err != nil {
		return err
	}
	a.observe.Deleted(r)
	c.JSON(http.StatusOK, r)
	return nil
}

func (a *api) history(c *gin.Context) error {
	ms, err := a.svc.History(c.Request.Context(), principalOf(c), c.Param("id"))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, memoriesResponse{Memories: ms})
	return nil
}

func (a *api) recall(c *gin.Context) error {
	var req memory.RecallRequest
	if err := a.bind(c, &req); err != nil {
		return err
	}
	p := principalOf(c)
	res, err := a.svc.Recall(c.Request.Context(), p, req)
	if err != nil {
		return err
	}
	a.observe.Recalled(p.Tenant, res)
	if p.Kind != memory.KindAdmin {
		// The size, and the vector path it picks (an exact scan up to about
		// a thousand memories, the index past that), take in memories the
		// caller may not read: others learn only whether a vector search ran.
		res.Search.PartitionSize = 0
		if res.Search.VectorPath != memory.VectorNone {
			res.Search.VectorPath = vectorSearched
		}
	}
	c.JSON(http.StatusOK, res)
	return nil
}

// vectorSearched is the vector path as a caller other than an admin sees it.
const vectorSearched = "vector"

type recallLogResponse struct {
	Recalls []memory.RecallRecord `json:"recalls"`
}

// RecallLogs reads the recall log for admins (recalllog.Service).
type RecallLogs interface {
	RecallLog(ctx context.Context, p memory.Principal, userID string, limit int) ([]memory.RecallRecord, error)
}

func (a *api) recallLog(c *gin.Context) error {
	limit := 0
	if s := c.Query("limit"); s != "" {
		var err error
		if limit, err = strconv.Atoi(s); err != nil || limit < 1 {
			return memory.Invalid("limit", "must be a positive whole number")
		}
	}
	recs, err := a.recalls.RecallLog(c.Request.Context(), principalOf(c), c.Query("user_id"), limit)
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, recallLogResponse{Recalls: recs})
	return nil
}

func (a *api) whoami(c *gin.Context) error {
	c.JSON(http.StatusOK, principalOf(c))
	return nil
}

// ifMatchOf reads the If-Match header: absent is 0, no precondition; else
// one version, as etag writes it or bare ("3" or 3), and nothing else. An
// empty or malformed one must not turn into an unconditional write.
func ifMatchOf(values []string) (int, error) {
	if len(values) == 0 {
		return 0, nil
	}
	s := values[0]
	if unquoted, ok := strings.CutPrefix(s, `"`); ok {
		if s, ok = strings.CutSuffix(unquoted, `"`); !ok {
			return 0, errPrecondBad
		}
	}
	v, err := strconv.Atoi(s)
	if len(values) > 1 || err != nil || v < 1 || strconv.Itoa(v) != s {
		return 0, errPrecondBad
	}
	return v, nil
}

// etag is a memory's version as an HTTP entity tag; If-Match accepts it
// quoted or bare.
func etag(version int) string { return `"` + strconv.Itoa(version) + `"` }

// keyed gives each memory of a write that names no idempotency_key the
// request's Idempotency-Key header and the memory's place (placeKey), one
// memory alone as a batch's first. A retry then repeats nothing, and
// another request under the key, one memory or a batch, is refused, as a
// queued write's is. A header that is not UTF-8 or longer than
// maxIdempotencyKey bytes is refused, rather than a key the client never
// sent.
func keyed(batch []memory.NewMemory, key string) error {
	if len(key) > maxIdempotencyKey || !utf8.ValidString(key) {
		return memory.Invalid("Idempotency-Key", fmt.Sprintf("must be UTF-8 of at most %d bytes", maxIdempotencyKey))
	}
	for i := range batch {
		if key != "" && batch[i].IdempotencyKey == "" {
			batch[i].IdempotencyKey = placeKey(key, i)
		}
	}
	return nil
}

// placeKey is the idempotency key of the memory at place i of a write under
// key: the key and ":i", or, where that would be longer than a memory's
// key may be, the key's SHA-256 in hex and ":i" ("sha256:…:i"), so that
// every header the API takes keys every place of a batch, and a key keys
// a place the same whatever the batch's size. workingmemory.PlaceKey keys
// an ingestion's memories the same way (this package imports as many
// others as it may), so that a write and an ingestion under one header
// are one request, as they are under a short one.
func placeKey(key string, i int) string {
	if place := ":" + strconv.Itoa(i); len(key)+len(place) <= maxIdempotencyKey {
		return key + place
	}
	return fmt.Sprintf("sha256:%x:%d", sha256.Sum256([]byte(key)), i)
}

// writes is h for a route that writes, changes, confirms or deletes
// memories: an analyst, who never does, is refused 403 before anything of
// the request is read (neverWrites).
func (a *api) writes(h func(*gin.Context) error) func(*gin.Context) error {
	return func(c *gin.Context) error {
		if err := neverWrites(principalOf(c)); err != nil {
			return err
		}
		return h(c)
	}
}

// neverWrites refuses an analyst before anything else: analysts never
// write, change, confirm or delete, and learn it whatever the request
// holds (a body, a header or a parameter that would be refused), not
// whether the memory it names exists or is out of their sight (the
// service, which looks the memory up first, would answer 404 then).
func neverWrites(p memory.Principal) error {
	if p.Kind == memory.KindAnalyst {
		return memory.ErrForbidden
	}
	return nil
}

// idempotencyKey is the request's Idempotency-Key header, "" when it is
// absent. A header given empty is refused rather than read as no key: the
// client meant to protect its retries, and would silently lose it.
func idempotencyKey(c *gin.Context) (string, error) {
	vs := c.Request.Header.Values("Idempotency-Key")
	if len(vs) == 0 {
		return "", nil
	}
	if strings.TrimSpace(vs[0]) == "" {
		return "", memory.Invalid("Idempotency-Key", "must not be empty: send a key, or no header for none")
	}
	return vs[0], nil
}

// maxIdempotencyKey is the longest idempotency key a memory may have.
const maxIdempotencyKey = 128
