package handlers

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"mneme/memory"
)

// Stalls says whether a store has stalled: it takes connections and
// answers nothing, so that every call to it waits out its deadline
// (package stall).
type Stalls interface {
	// Err is non-nil while a store is stalled.
	Err() error
	// Guard wraps next so that a request under way when a stall begins is
	// answered at once by refuse, and its context cancelled with the
	// stall as the cause.
	Guard(next http.Handler, refuse func(http.ResponseWriter, *http.Request, error)) http.Handler
}

// stalled refuses a request with 503 unavailable at once while a store is
// stalled, rather than let it wait for the store: every /v1 and MCP request
// reads Redis (the key epoch, the policy revision) and most read Neo4j.
func (a *api) stalled(c *gin.Context) {
	if a.stalls == nil {
		c.Next()
		return
	}
	if err := a.stalls.Err(); err != nil {
		a.fail(c, unavailable(err))
		return
	}
	c.Next()
}

func unavailable(err error) error { return fmt.Errorf("%w: %w", memory.ErrUnavailable, err) }

// guardStalls answers 503 unavailable, as fail would, to a /v1 or MCP
// request under way when a store stalls. Health, readiness, metrics, the
// OpenAPI document and the panel's pages are served as they are.
func (a *api) guardStalls(r *gin.Engine, s Stalls) http.Handler {
	guarded := s.Guard(r, a.refuseStalled)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !strings.HasPrefix(req.URL.Path, "/v1/") && req.URL.Path != mcpRoute {
			r.ServeHTTP(w, req)
			return
		}
		// The request id is settled here, for the refusal and the
		// request's own log lines (requestID) to name the same one.
		if !saneRequestID(req.Header.Get("X-Request-ID")) {
			req.Header.Set("X-Request-ID", newRequestID())
		}
		guarded.ServeHTTP(w, req)
	})
}

// refuseStalled answers a request under way when a store stalled. The
// request goes on until its cancelled context stops it; what it answers
// then is dropped, but it is logged and counted as its 503.
func (a *api) refuseStalled(w http.ResponseWriter, r *http.Request, err error) {
	id := r.Header.Get("X-Request-ID")
	status, code, msg := classify(unavailable(err))
	a.log.WarnContext(memory.WithRequestID(r.Context(), id), "request under way refused", "status", status, "method", r.Method, "path", r.URL.Path, "err", err)
	h := w.Header()
	h.Set("X-Request-ID", id)
	h.Set("X-Content-Type-Options", "nosniff")
	if a.mcp != nil && r.URL.Path == mcpRoute {
		a.mcp.Refuse(w, status, code, msg)
		return
	}
	body, _ := json.Marshal(errorBody{Code: code, Message: msg, RequestID: id})
	h.Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func newRequestID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
