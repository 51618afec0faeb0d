package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
)

// readBody reads the whole body within the size limit and checks that it is
// JSON text in UTF-8.
func (a *api) readBody(c *gin.Context) ([]byte, error) {
	if ct := c.GetHeader("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, errMediaType
		}
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, a.maxBody))
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
		return nil, &badRequest{"bad_json", "the request body is empty"}
	}
	return body, nil
}

// decodeStrict decodes exactly one JSON value into v, rejecting unknown
// fields and trailing data.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return &badRequest{"bad_json", "unexpected data after the JSON value"}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &badRequest{"bad_json", "unexpected data after the JSON value"}
	}
	return nil
}

func jsonError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return &badRequest{"bad_json", fmt.Sprintf("malformed JSON at byte %d", syntax.Offset)}
	case errors.As(err, &typ):
		return &badRequest{"bad_json", fmt.Sprintf("field %q must be %s", typ.Field, typ.Type)}
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return &badRequest{"bad_json", "truncated JSON"}
	default:
		// DisallowUnknownFields reports `json: unknown field "x"`; its text is
		// safe to show and there is no typed error for it.
		return &badRequest{"bad_json", err.Error()}
	}
}

// bind reads, checks and strictly decodes the body into v.
func (a *api) bind(c *gin.Context, v any) error {
	body, err := a.readBody(c)
	if err != nil {
		return err
	}
	return decodeStrict(body, v)
}
