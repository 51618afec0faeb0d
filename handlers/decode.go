package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"mneme/memory"
)

// readBody reads the whole body within the size limit and checks that it is
// JSON text in UTF-8.
func (a *api) readBody(c *gin.Context) ([]byte, error) { return a.readBodyUpTo(c, a.maxBody) }

// readBodyUpTo is readBody within limit bytes.
func (a *api) readBodyUpTo(c *gin.Context, limit int64) ([]byte, error) {
	if err := jsonForm(c.Request.Header); err != nil {
		return nil, err
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, errTooLarge
	}
	if err != nil {
		return nil, &badRequest{"bad_body", "could not read the request body"}
	}
	if !utf8.Valid(body) {
		return nil, &badRequest{"invalid_utf8", "the request body is not valid UTF-8"}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, errEmptyBody
	}
	return body, nil
}

// jsonForm refuses a body said to be other than JSON in UTF-8, or
// compressed: it would be read as its bytes, not as what it says it is.
func jsonForm(h http.Header) error {
	if ct := h.Get("Content-Type"); ct != "" {
		mt, params, err := mime.ParseMediaType(ct)
		if cs, ok := params["charset"]; err != nil || mt != "application/json" || ok && !strings.EqualFold(cs, "utf-8") {
			return errMediaType
		}
	}
	if ce := h.Get("Content-Encoding"); ce != "" && !strings.EqualFold(ce, "identity") {
		return errMediaType
	}
	return nil
}

// errEmptyBody is a body of nothing but white space.
var errEmptyBody = &badRequest{"bad_json", "the request body is empty"}

// bodyless wraps the handler of a route that reads no body: one must be
// none or {}, as on every route a field it does not know is refused, so
// that a client learns that what it sent was not read (and gets a JSON
// answer, not a connection reset by a server that answered unread).
func (a *api) bodyless(h func(*gin.Context) error) func(*gin.Context) error {
	return a.bodylessOr(h, func(_ *gin.Context, err error) error { return err })
}

// bodylessOr is bodyless, with refused turning the refusal of a body into
// the answer.
func (a *api) bodylessOr(h func(*gin.Context) error, refused func(*gin.Context, error) error) func(*gin.Context) error {
	return func(c *gin.Context) error {
		if c.Request.ContentLength != 0 {
			if err := a.bind(c, &struct{}{}); err != nil && err != errEmptyBody {
				return refused(c, err)
			}
		}
		return h(c)
	}
}

// adminBodyless is bodyless for a route of the tenant's admins: a body it
// refuses is refused for the caller's rights first (adminFirst).
func (a *api) adminBodyless(h func(*gin.Context) error) func(*gin.Context) error {
	return a.bodylessOr(h, a.adminFirst)
}

// bindAdmin is bind for a route of the tenant's admins: a body it refuses
// is refused for the caller's rights first (adminFirst).
func (a *api) bindAdmin(c *gin.Context, v any) error {
	if err := a.bind(c, v); err != nil {
		return a.adminFirst(c, err)
	}
	return nil
}

// adminFirst returns why the caller may not administer its tenant, if it
// may not, and otherwise bad, what its request was refused for: a caller
// who may not use a route of the tenant's admins is refused 403 whatever
// it sent, and learns nothing of the bodies and parameters the route
// takes. The services decide the rights again, and audit, once a request
// is read; asking here only when a request is refused keeps one decision
// for each request that is read.
func (a *api) adminFirst(c *gin.Context, bad error) error {
	if err := a.admin.Administers(c.Request.Context(), principalOf(c)); err != nil {
		return err
	}
	return bad
}

// decodeStrict decodes exactly one JSON value into v, rejecting unknown
// fields and trailing data.
func decodeStrict(body []byte, v any) error {
	if bytes.Equal(bytes.TrimSpace(body), []byte("null")) {
		// Decoding null changes nothing: PUT settings would have answered
		// as if its request had been read.
		return &badRequest{"bad_json", "the request body is null: send a JSON object"}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var when *time.ParseError
		if errors.As(err, &when) {
			return badTime(body, reflect.TypeOf(v), when.Value)
		}
		return jsonError(err)
	}
	if dec.More() {
		return &badRequest{"bad_json", "unexpected data after the JSON value"}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &badRequest{"bad_json", "unexpected data after the JSON value"}
	}
	if k := duplicateKey(body); k != "" {
		return &badRequest{"bad_json", fmt.Sprintf("field %q appears twice in one object", k)}
	}
	if holdsNUL(body) {
		return &badRequest{"invalid_argument", `a string of the request holds a NUL character (\u0000)`}
	}
	if loneSurrogate(body) {
		return &badRequest{"invalid_utf8", `a string of the request holds half of a UTF-16 surrogate pair (such as \ud800), which is no character`}
	}
	return nil
}

// loneSurrogate reports whether an escape of the JSON text (valid JSON: a
// backslash is always an escape) is half of a surrogate pair without its
// other half. Decoding turns one into U+FFFD without a word, so that what
// was stored is not what was sent.
func loneSurrogate(body []byte) bool {
	half := func(i int) rune { // the surrogate escaped at body[i:], or 0
		if i+6 > len(body) || body[i+1] != 'u' {
			return 0
		}
		v, err := strconv.ParseUint(string(body[i+2:i+6]), 16, 16)
		if err != nil || v < 0xd800 || v > 0xdfff {
			return 0
		}
		return rune(v)
	}
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' {
			continue
		}
		switch r := half(i); {
		case r >= 0xdc00: // a low half with no high one before it
			return true
		case r != 0:
			if next := half(i + 6); next < 0xdc00 || i+6 >= len(body) || body[i+6] != '\\' {
				return true
			}
			i += 11 // the pair
		default:
			i++ // \n, \", \\ and every other escape
		}
	}
	return false
}

// holdsNUL reports whether a string of the JSON text, key or value, holds
// U+0000: stored, it would break every consumer that reads C strings.
func holdsNUL(body []byte) bool {
	if !bytes.Contains(body, []byte(`\u0000`)) {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if s, ok := tok.(string); ok && strings.ContainsRune(s, 0) {
			return true
		}
	}
}

// duplicateKey returns a key that one object of the JSON text names twice,
// compared without case as encoding/json matches fields, or "". Decoding
// keeps the last of them silently, so that {"user_id":"bob","user_id":
// "alice"} would be about alice to Mneme and about bob to whatever read the
// body before it.
func duplicateKey(body []byte) string {
	type level struct {
		keys    map[string]bool // nil in an array
		wantKey bool
	}
	var stack []*level
	dec := json.NewDecoder(bytes.NewReader(body))
	for {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		var top *level
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		if top != nil && top.keys != nil {
			if top.wantKey {
				k, _ := tok.(string)
				if top.keys[strings.ToLower(k)] {
					return k
				}
				top.keys[strings.ToLower(k)] = true
			}
			top.wantKey = !top.wantKey
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &level{keys: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			stack = append(stack, &level{})
		}
	}
}

// badTime is the error for a string that a time field of body, decoded
// into a value of type t, does not parse: invalid_argument, as the domain
// refuses a time it cannot use (an as_of in the future), naming the field.
// The decoder does not name it, so it is found as a time field of t that
// holds that string.
func badTime(body []byte, t reflect.Type, value string) error {
	// The value is the string as the JSON text writes it, escapes and all.
	var text string
	if err := json.Unmarshal([]byte(`"`+value+`"`), &text); err != nil {
		text = value
	}
	reason := fmt.Sprintf("%q is no RFC 3339 time such as 2026-03-01T00:00:00Z", text)
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return memory.Invalid("", reason)
	}
	return memory.Invalid(timeField(doc, t, text, ""), reason)
}

var timeType = reflect.TypeFor[time.Time]()

// timeField returns the path (as_of, memories[1].valid_to, input.now) of a
// time field of type t whose value in the decoded JSON doc is the string s,
// or "" when none is.
func timeField(doc any, t reflect.Type, s, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == timeType {
		if str, ok := doc.(string); ok && str == s {
			return path
		}
		return ""
	}
	at := func(key string) string {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	switch doc := doc.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(doc)) {
			var ft reflect.Type
			switch t.Kind() {
			case reflect.Struct:
				if f, ok := fieldNamed(t, k); ok {
					ft = f.Type
				}
			case reflect.Map:
				ft = t.Elem()
			}
			if ft == nil {
				continue
			}
			if p := timeField(doc[k], ft, s, at(k)); p != "" {
				return p
			}
		}
	case []any:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return ""
		}
		for i, e := range doc {
			if p := timeField(e, t.Elem(), s, fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	}
	return ""
}

// fieldNamed is the field of struct type t that encoding/json decodes the
// key name into: by its tag's name or else its own, exactly or else in
// another case, promoted from embedded structs.
func fieldNamed(t reflect.Type, name string) (reflect.StructField, bool) {
	var folded []reflect.StructField
	for _, f := range reflect.VisibleFields(t) {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || tag == "-" || f.Anonymous && tag == "" {
			continue
		}
		if tag == "" {
			tag = f.Name
		}
		if tag == name {
			return f, true
		}
		if strings.EqualFold(tag, name) {
			folded = append(folded, f)
		}
	}
	if len(folded) == 0 {
		return reflect.StructField{}, false
	}
	return folded[0], true
}

func jsonError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return &badRequest{"bad_json", fmt.Sprintf("malformed JSON at byte %d", syntax.Offset)}
	case errors.As(err, &typ):
		if typ.Field == "" {
			return &badRequest{"bad_json", "the body must be " + jsonKind(typ.Type)}
		}
		return &badRequest{"bad_json", fmt.Sprintf("field %q must be %s", typ.Field, jsonKind(typ.Type))}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &badRequest{"bad_json", "truncated JSON"}
	default:
		// DisallowUnknownFields reports `json: unknown field "x"`; its text is
		// safe to show and there is no typed error for it.
		return &badRequest{"bad_json", err.Error()}
	}
}

// jsonKind names what JSON a Go type decodes from, for a client who never
// sees the type: "a number", not float64.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	}
	return "another JSON value"
}

// bind reads, checks and strictly decodes the body into v.
func (a *api) bind(c *gin.Context, v any) error {
	body, err := a.readBody(c)
	if err != nil {
		return err
	}
	return decodeStrict(body, v)
}
