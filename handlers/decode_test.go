package handlers

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"mneme/memory"
)

func TestDecodeStrictRefusesRepeatedKeys(t *testing.T) {
	type turn struct {
		Role string `json:"role"`
	}
	type body struct {
		UserID string            `json:"user_id"`
		Turns  []turn            `json:"turns"`
		Labels map[string]string `json:"labels"`
	}
	tests := []struct {
		name, json, dup string // dup "" = accepted
	}{
		{"one of each", `{"user_id":"bob","turns":[{"role":"user"},{"role":"user"}],"labels":{"a":"1","b":"2"}}`, ""},
		{"the same key in sibling objects", `{"turns":[{"role":"user"},{"role":"assistant"}]}`, ""},
		{"a key inside and outside a nested object", `{"labels":{"user_id":"x"},"user_id":"bob"}`, ""},
		{"twice at the top", `{"user_id":"bob","user_id":"alice"}`, "user_id"},
		{"twice in another case", `{"user_id":"bob","USER_ID":"alice"}`, "USER_ID"},
		{"twice after a nested value", `{"turns":[{"role":"user"}],"labels":{},"turns":[]}`, "turns"},
		{"twice in an object in an array", `{"turns":[{"role":"user","role":"system"}]}`, "role"},
		{"twice in a map", `{"labels":{"a":"1","a":"2"}}`, "a"},
	}
	var v body
	if err := decodeStrict([]byte(" null\n"), &v); err == nil {
		t.Error("a body of null was read as a request")
	}
	var when struct {
		At time.Time `json:"at"`
	}
	if err := decodeStrict([]byte(`{"at":"tomorrow"}`), &when); err == nil || !strings.Contains(err.Error(), "RFC 3339") {
		t.Errorf("a time that is none: %v, want it named as no RFC 3339 time", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v body
			err := decodeStrict([]byte(tt.json), &v)
			var bad *badRequest
			switch {
			case tt.dup == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tt.dup != "" && (!errors.As(err, &bad) || bad.code != "bad_json" || duplicateKey([]byte(tt.json)) != tt.dup):
				t.Errorf("err = %v, repeated key %q; want bad_json on %q", err, duplicateKey([]byte(tt.json)), tt.dup)
			}
		})
	}
}

// A string a time field does not parse is invalid_argument naming the
// field, wherever it sits, as a time the domain refuses is.
func TestDecodeStrictNamesBadTimes(t *testing.T) {
	type Window struct {
		Until *time.Time `json:"until"`
	}
	type entry struct {
		Content string     `json:"content"`
		ValidTo *time.Time `json:"valid_to,omitempty"`
	}
	type body struct {
		Query    string                  `json:"query"`
		AsOf     *time.Time              `json:"as_of"`
		Memories []entry                 `json:"memories"`
		Input    struct{ Now time.Time } `json:"input"`
		Marks    map[string]time.Time    `json:"marks"`
		Window
	}
	tests := []struct {
		name, json, field string
	}{
		{"a word", `{"as_of":"yesterday"}`, "as_of"},
		{"the same word in a text field first", `{"query":"yesterday","as_of":"yesterday"}`, "as_of"},
		{"in another case", `{"AS_OF":"yesterday"}`, "AS_OF"},
		{"escaped", `{"as_of":"yesterd\u0061y"}`, "as_of"},
		{"a month out of range", `{"as_of":"2026-13-01T00:00:00Z"}`, "as_of"},
		{"a date alone", `{"as_of":"2026-03-01"}`, "as_of"},
		{"in an array", `{"memories":[{"content":"a"},{"content":"b","valid_to":"soon"}]}`, "memories[1].valid_to"},
		{"nested, by the field's own name", `{"input":{"now":"now"}}`, "input.now"},
		{"in a map", `{"marks":{"start":"then"}}`, "marks.start"},
		{"promoted from an embedded struct", `{"until":"later"}`, "until"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v body
			err := decodeStrict([]byte(tt.json), &v)
			var inv *memory.InvalidError
			if !errors.As(err, &inv) || inv.Field != tt.field || !strings.Contains(inv.Reason, "RFC 3339") {
				t.Errorf("err = %#v, want an invalid %s that is no RFC 3339 time", err, tt.field)
			}
			if status, code, _ := classify(err); status != http.StatusBadRequest || code != "invalid_argument" {
				t.Errorf("answered %d %s, want 400 invalid_argument", status, code)
			}
		})
	}
}

// A NUL in any string, key or value, is refused; the six characters of
// its escape written as text are not.
func TestDecodeStrictRefusesNUL(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		refused    bool
	}{
		{"in a value", `{"user_id":"bob","labels":{"a":"x\u0000y"}}`, true},
		{"in a key", `{"labels":{"a\u0000":"1"}}`, true},
		{"in an array", `{"turns":[{"role":"\u0000"}]}`, true},
		{"the escape as text", `{"labels":{"a":"C:\\u0000"}}`, false},
		{"none", `{"labels":{"a":"\u0001"}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v struct {
				UserID string              `json:"user_id"`
				Turns  []map[string]string `json:"turns"`
				Labels map[string]string   `json:"labels"`
			}
			err := decodeStrict([]byte(tc.json), &v)
			var bad *badRequest
			if got := errors.As(err, &bad) && bad.code == "invalid_argument"; got != tc.refused {
				t.Errorf("err = %v, refused %v, want %v", err, got, tc.refused)
			}
		})
	}
}

// Half of a UTF-16 surrogate pair, escaped, is no character: refused as
// invalid UTF-8 rather than stored as U+FFFD. A whole pair, and the
// escape's text written with an escaped backslash, are not.
func TestDecodeStrictRefusesLoneSurrogates(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		refused    bool
	}{
		{"a high half", `{"content":"likes \ud800 teal"}`, true},
		{"a low half", `{"content":"\udfff"}`, true},
		{"a high half at the end", `{"content":"x\uD83D"}`, true},
		{"two high halves", `{"content":"\ud83d\ud83d"}`, true},
		{"a high half before another escape", `{"content":"\ud83d\n"}`, true},
		{"in a key", `{"labels":{"\ud800":"1"}}`, true},
		{"a whole pair", `{"content":"\ud83d\ude00 and \uD83D\uDE00"}`, false},
		{"the escape as text", `{"content":"C:\\ud800"}`, false},
		{"other escapes", `{"content":"\u00e9\n\"\\\/"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v struct {
				Content string            `json:"content"`
				Labels  map[string]string `json:"labels"`
			}
			err := decodeStrict([]byte(tc.json), &v)
			var bad *badRequest
			if got := errors.As(err, &bad) && bad.code == "invalid_utf8"; got != tc.refused {
				t.Errorf("err = %v, refused %v, want %v", err, got, tc.refused)
			}
			if _, why := Refusal(http.Header{}, []byte(tc.json)); tc.refused != (why != "") {
				t.Errorf("Refusal = %q, want refused %v", why, tc.refused)
			}
		})
	}
}

func TestIfMatchOf(t *testing.T) {
	for _, tc := range []struct {
		values []string
		want   int
		ok     bool
	}{
		{nil, 0, true},
		{[]string{`"3"`}, 3, true},
		{[]string{"3"}, 3, true},
		{[]string{"12"}, 12, true},
		{[]string{""}, 0, false},
		{[]string{`""`}, 0, false},
		{[]string{`"3`}, 0, false},
		{[]string{`3"`}, 0, false},
		{[]string{"+1"}, 0, false},
		{[]string{"01"}, 0, false},
		{[]string{"1 "}, 0, false},
		{[]string{" 1"}, 0, false},
		{[]string{"0"}, 0, false},
		{[]string{"-2"}, 0, false},
		{[]string{"*"}, 0, false},
		{[]string{`W/"3"`}, 0, false},
		{[]string{"3", "4"}, 0, false},
	} {
		got, err := ifMatchOf(tc.values)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("ifMatchOf(%q) = %d, %v; want %d, ok %v", tc.values, got, err, tc.want, tc.ok)
		}
	}
}

// A body of the wrong JSON shape is named in JSON's words, never Go's.
func TestDecodeNamesJSONKinds(t *testing.T) {
	type body struct {
		UserID     string   `json:"user_id"`
		Importance *float64 `json:"importance"`
		K          int      `json:"k"`
		Labels     []string `json:"labels"`
		Only       bool     `json:"only"`
	}
	for in, want := range map[string]string{
		`[]`:                   "the body must be an object",
		`"x"`:                  "the body must be an object",
		`{"importance":"0.5"}`: `field "importance" must be a number`,
		`{"k":1.5}`:            `field "k" must be a whole number`,
		`{"user_id":5}`:        `field "user_id" must be a string`,
		`{"labels":{}}`:        `field "labels" must be an array`,
		`{"only":"yes"}`:       `field "only" must be true or false`,
	} {
		var v body
		err := decodeStrict([]byte(in), &v)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "handlers.") || strings.Contains(err.Error(), "float64") {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
}
