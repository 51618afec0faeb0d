package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/gin-gonic/gin"

	"mneme/identity"
	"mneme/memory"
	"mneme/policyadmin"
)

// bodyTypes are the request bodies the handlers decode, one per route.
var bodyTypes = []func() any{
	func() any { return new(memory.NewMemory) },
	func() any { return new(batchRequest) },
	func() any { return new(memory.UpdateRequest) },
	func() any { return new(memory.RecallRequest) },
	func() any { return new(memory.IngestRequest) },
	func() any { return new(memory.AppendRequest) },
	func() any { return new(policyadmin.NewGrant) },
	func() any { return new(policyadmin.GrantChange) },
	func() any { return new(policyadmin.NewPolicy) },
	func() any { return new(modulesRequest) },
	func() any { return new(rollbackRequest) },
	func() any { return new(policyadmin.SimulateRequest) },
	func() any { return new(policyadmin.ReplayRequest) },
	func() any { return new(policyadmin.Settings) },
	func() any { return new(identity.NewPrincipal) },
	func() any { return new(identity.NewKey) },
	func() any { return new(identity.KeyChange) },
	func() any { return new(identity.Rotation) },
}

// fuzzContext is a gin context for a request with body, content type and
// raw query.
func fuzzContext(body []byte, contentType, rawQuery string) *gin.Context {
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = httptest.NewRequest(http.MethodPost, "/v1/x", bytes.NewReader(body))
	c.Request.URL.RawQuery = rawQuery
	if contentType != "" {
		c.Request.Header.Set("Content-Type", contentType)
	}
	return c
}

// FuzzDecodeBody checks request decoding on any body and content type: it
// is refused with an API error (bad request, too large, wrong media type),
// never a panic or an untyped error, and what it accepts encodes back to
// JSON that decodes to the same value.
func FuzzDecodeBody(f *testing.F) {
	seeds := []string{
		`{"user_id":"u1","type":"semantic","content":"预算15万","importance":0.8}`,
		`{"memories":[{"user_id":"u1","content":"x"}]}`, `{"memories":null}`,
		`{"user_id":"u1","query":"budget","limit":5,"filters":{"types":["semantic"]}}`,
		`{"modules":[{"name":"authz.rego","source":"package mneme.authz"}]}`, `{"revision":3}`,
		`{"user_id":"u1","turns":[{"role":"user","content":"hi"}]}`, `{"a":1}`, `{} {}`, `{"content":1}`,
		`[`, ``, " ", `null`, `"\udc00"`, `{"user_id":"\u0000"}`, `{"importance":1e400}`,
	}
	for i, s := range seeds {
		f.Add(uint8(i), "application/json", []byte(s))
	}
	f.Add(uint8(0), "text/plain", []byte(`{}`))
	f.Add(uint8(0), "application/json; charset=utf-8", []byte("{\"content\":\"\xff\"}"))
	gin.SetMode(gin.TestMode)
	a := &api{maxBody: 4096}
	f.Fuzz(func(t *testing.T, which uint8, contentType string, body []byte) {
		mk := bodyTypes[int(which)%len(bodyTypes)]
		v := mk()
		err := a.bind(fuzzContext(body, contentType, ""), v)
		if err != nil {
			var bad *badRequest
			if !errors.As(err, &bad) && !errors.Is(err, errTooLarge) && !errors.Is(err, errMediaType) {
				t.Fatalf("%T from %q: untyped error %T %v", v, body, err, err)
			}
			if bad != nil && (bad.code == "" || bad.msg == "") {
				t.Fatalf("%T from %q: error without code or message: %+v", v, body, bad)
			}
			return
		}
		once, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%T from %q decodes but does not encode: %v", v, body, err)
		}
		w := mk()
		if err := decodeStrict(once, w); err != nil {
			t.Fatalf("%T: %q decodes, its encoding %q does not: %v", v, body, once, err)
		}
		twice, _ := json.Marshal(w)
		if !bytes.Equal(once, twice) {
			t.Fatalf("%T: %q encodes as %q, then as %q", v, body, once, twice)
		}
	})
}

// FuzzBatchOrOne checks that a memory body is read as one memory or a
// batch, never both, and that a batch is only an object with the key
// "memories".
func FuzzBatchOrOne(f *testing.F) {
	for _, s := range []string{`{"memories":[]}`, `{"memories":[],"x":1}`, `{"content":"a"}`, `{"memories":1}`, `[]`, `{"Memories":[]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		batch, mixed := isBatch(body)
		if batch && mixed {
			t.Fatalf("%q is a batch and mixed", body)
		}
		if !batch {
			return
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal(body, &top); err != nil || len(top) != 1 {
			t.Fatalf("%q is a batch but not an object of one key", body)
		}
		if _, ok := top["memories"]; !ok {
			t.Fatalf("%q is a batch without memories", body)
		}
	})
}

// FuzzQueryParams checks the query parameters the handlers parse: each is
// read or refused with an invalid-field error naming the parameter.
func FuzzQueryParams(f *testing.F) {
	for _, s := range []string{"async=true", "async=1&from=2026-03-01T00:00:00Z", "from=2026-13-01T00:00:00Z", "from=%zz", "async=yes", "from=-1&async=", "from=9223372036854775808", "from=2026-03-01T00:00:00+25:00", ";;&&=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rawQuery string) {
		c := fuzzContext(nil, "", rawQuery)
		vals, _ := url.ParseQuery(rawQuery)
		check := func(name string, err error) {
			t.Helper()
			if err == nil {
				return
			}
			var inv *memory.InvalidError
			if !errors.As(err, &inv) || inv.Field != name {
				t.Fatalf("%s of %q: %T %v, want an invalid-field error for %s", name, rawQuery, err, err, name)
			}
		}
		b, err := boolParam(c, "async")
		check("async", err)
		if err == nil && b != (vals.Get("async") == "true" || vals.Get("async") == "1") {
			t.Fatalf("async of %q read as %v", rawQuery, b)
		}
		tm, err := timeParam(c, "from")
		check("from", err)
		if err == nil && vals.Get("from") == "" && !tm.IsZero() {
			t.Fatalf("from of %q read as %v without a value", rawQuery, tm)
		}
		n, err := revisionParam(c.Query("from"), "from")
		check("from", err)
		if err == nil && n < 0 {
			t.Fatalf("revision %d from %q", n, rawQuery)
		}
	})
}
