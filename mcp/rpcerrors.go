package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSON-RPC 2.0 error codes for requests the SDK refuses before any method
// runs.
const (
	rpcParseError     = -32700
	rpcInvalidRequest = -32600
	rpcMethodNotFound = -32601
)

// rpcError is a JSON-RPC error response. Its id is the request's when the
// request was read far enough to know it, else null: the body was not one
// JSON object, or was refused as a whole before its id was read.
type rpcError struct {
	JSONRPC string `json:"jsonrpc"`
	ID      any    `json:"id"`
	Error   struct {
		Code    int      `json:"code"`
		Message string   `json:"message"`
		Data    *apiCode `json:"data,omitempty"`
	} `json:"error"`
}

// apiCode is the API's stable code of a refusal, for a client to act on.
type apiCode struct {
	Code string `json:"code"`
}

// Refuse answers a request refused before it reached the endpoint (no or
// a bad key, a rate limit, a header given twice) as the endpoint answers
// what it refuses itself: a JSON-RPC error with a null id under status. Its
// data holds the API's stable code; headers set before, such as
// WWW-Authenticate or Retry-After, go with it.
func (*Endpoint) Refuse(w http.ResponseWriter, status int, code, message string) {
	var e rpcError
	e.JSONRPC, e.Error.Code, e.Error.Message, e.Error.Data = "2.0", rpcInvalidRequest, message, &apiCode{Code: code}
	body, _ := json.Marshal(e)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// screen refuses, before the SDK reads it, a body the REST API would
// refuse too: bytes that are not UTF-8 (the SDK would store them as U+FFFD),
// data after the JSON value, what refusal (when set) names (a key given
// twice in one object, a NUL), an id that is a number but no integer a
// float64 holds exactly (the SDK would answer under another id: 1.5 as 1,
// 2^53+1 as 2^53), and JSON-RPC batches. MCP dropped batches in 2025-06-18 and the SDK still
// serves them to a client that names an older version: one HTTP request,
// one take from the caller's rate limit, would carry any number of tool
// calls. A body over limit is 413 with the API's body_too_large in the
// error's data, as /v1 answers it; a body that could not be read goes to
// the SDK as it is, to be refused there.
func screen(h http.Handler, limit int64, refusal func(http.Header, []byte) (int, string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
		if err == nil && int64(len(body)) > limit {
			if c, ok := w.(*catcher); ok {
				c.code = "body_too_large"
			}
			http.Error(w, fmt.Sprintf("the request body exceeds %d bytes", limit), http.StatusRequestEntityTooLarge)
			return
		}
		if err != nil {
			r.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
			h.ServeHTTP(w, r)
			return
		}
		switch {
		case !utf8.Valid(body):
			http.Error(w, "unmarshal: the body is not valid UTF-8", http.StatusBadRequest)
			return
		case bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("[")):
			http.Error(w, "batch requests are not supported: send one JSON-RPC message per request", http.StatusBadRequest)
			return
		case !json.Valid(body):
			http.Error(w, "unmarshal: the body is not one JSON value", http.StatusBadRequest)
			return
		case !integralID(body):
			http.Error(w, "the id must be a string or an integer of at most 2^53 in size", http.StatusBadRequest)
			return
		}
		if refusal != nil {
			if status, why := refusal(r.Header, body); why != "" {
				http.Error(w, why, status)
				return
			}
		}
		// From here on the id is known: a refusal the SDK answers in plain
		// text (a call without params, say) goes back under it, so that
		// the client can tell which of its requests failed.
		if c, ok := w.(*catcher); ok {
			c.id = requestID(body)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}

// integralID reports whether the message's id, when it is a number, is an
// integer of at most 2^53 in size, which the SDK's float64 holds exactly. A
// body that does not parse is the SDK's to refuse.
func integralID(body []byte) bool {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil || len(m.ID) == 0 || m.ID[0] == '"' || string(m.ID) == "null" {
		return true
	}
	n, err := strconv.ParseInt(string(m.ID), 10, 64)
	return err == nil && n <= 1<<53 && n >= -(1<<53)
}

// requestID returns the id of a JSON-RPC request, a string or a number, or
// nil when it has none (a notification, or a body that is no object).
func requestID(body []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil || len(m.ID) == 0 || m.ID[0] != '"' && m.ID[0] != '-' && (m.ID[0] < '0' || m.ID[0] > '9') {
		return nil
	}
	return m.ID
}

// jsonErrors answers, in JSON-RPC, every request that the SDK refuses with a
// plain-text body (malformed JSON, an empty batch, an unknown method, a
// wrong Accept header), keeping its HTTP status: a client reads one format
// whatever went wrong.
func jsonErrors(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &catcher{ResponseWriter: w}
		h.ServeHTTP(cw, r)
		cw.finish()
	})
}

// catcher holds back the body of an error answer that is not JSON, to send
// it as a JSON-RPC error once the handler is done.
type catcher struct {
	http.ResponseWriter
	status int
	held   *bytes.Buffer
	// id is the request's id, once screen has read it.
	id json.RawMessage
	// code is the API's stable code of a refusal screen made, for the
	// error's data, where /v1 has one for it.
	code string
}

func (c *catcher) WriteHeader(status int) {
	if c.status != 0 {
		return
	}
	c.status = status
	if status >= http.StatusBadRequest && !strings.HasPrefix(c.Header().Get("Content-Type"), "application/json") {
		c.held = &bytes.Buffer{}
		return
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *catcher) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if c.held != nil {
		return c.held.Write(b)
	}
	return c.ResponseWriter.Write(b)
}

// Flush lets answers streamed by the SDK through.
func (c *catcher) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok && c.held == nil {
		f.Flush()
	}
}

func (c *catcher) finish() {
	if c.held == nil {
		return
	}
	msg := strings.TrimSpace(c.held.String())
	var e rpcError
	e.JSONRPC, e.Error.Code, e.Error.Message = "2.0", rpcCode(c.status, msg), msg
	if c.id != nil {
		e.ID = c.id
	}
	if c.code != "" {
		e.Error.Data = &apiCode{Code: c.code}
	}
	if msg == "" {
		e.Error.Message = http.StatusText(c.status)
	}
	body, _ := json.Marshal(e)
	h := c.ResponseWriter.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	c.ResponseWriter.WriteHeader(c.status)
	_, _ = c.ResponseWriter.Write(body)
}

// rpcCode is the JSON-RPC code of a refusal, from what the SDK said.
func rpcCode(status int, msg string) int {
	switch {
	case status == http.StatusBadRequest && strings.Contains(msg, "unmarshal"):
		return rpcParseError
	case strings.Contains(msg, "not handled"), strings.Contains(msg, "unsupported"):
		return rpcMethodNotFound
	default:
		return rpcInvalidRequest
	}
}
