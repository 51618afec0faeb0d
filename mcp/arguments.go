package mcp

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"mneme/memory"
)

// errNotObject refuses arguments that are not one JSON object.
var errNotObject = memory.Invalid("", "arguments must be a JSON object")

// argumentsOf returns the check of a tool's arguments against its input
// schema and In, the type they decode into. Its refusals are
// *memory.InvalidError naming the argument and what was expected, as
// memories[0].type: must be one of …; the SDK's own, which this check runs
// before, name the server's Go types. It covers what the tools' schemas
// use (types, properties, required, additionalProperties, items, enum,
// minimum, maximum, minItems, maxItems) and the times In holds, which the
// schemas leave plain strings.
func argumentsOf[In any](schema *jsonschema.Schema) func(raw json.RawMessage) error {
	c := checker{times: map[string]bool{}}
	timesOf(reflect.TypeFor[In](), "", c.times, map[reflect.Type]bool{})
	return func(raw json.RawMessage) error {
		if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
			raw = json.RawMessage("{}")
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			return errNotObject
		}
		if _, ok := v.(map[string]any); !ok {
			return errNotObject
		}
		if err := c.value(schema, v, "", ""); err != nil {
			return err
		}
		// What passed is what In takes; should the two part all the same,
		// the caller still reads no Go type.
		var in In
		if json.Unmarshal(raw, &in) != nil {
			return errArguments
		}
		return nil
	}
}

// checker checks decoded arguments. A value's path names it in the
// arguments ("" at the top, then memories[0].type); its shape is the path
// without the indexes (memories[].type).
type checker struct {
	// times holds the shapes of the times In holds.
	times map[string]bool
}

// timesOf adds to times the shapes of the time.Time values t holds under
// shape. on holds the struct types being walked, which a type that holds
// itself meets again.
func timesOf(t reflect.Type, shape string, times map[string]bool, on map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[time.Time]():
		times[shape] = true
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		timesOf(t.Elem(), shape+"[]", times, on)
	case t.Kind() == reflect.Struct && !on[t]:
		on[t] = true
		defer delete(on, t)
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			switch {
			case !f.IsExported() || name == "-":
			case f.Anonymous && name == "":
				timesOf(f.Type, shape, times, on)
			default:
				timesOf(f.Type, join(shape, cmp.Or(name, f.Name)), times, on)
			}
		}
	}
}

// value checks v against s.
func (c checker) value(s *jsonschema.Schema, v any, path, shape string) error {
	types := s.Types
	if s.Type != "" {
		types = []string{s.Type}
	}
	if have := jsonType(v); len(types) > 0 && !slices.Contains(types, have) && !(have == "integer" && slices.Contains(types, "number")) {
		if n, ok := v.(json.Number); ok && slices.Contains(types, "integer") && integral(n) {
			return fieldError(path, "is out of range")
		}
		return fieldError(path, "must be "+expected(types))
	}
	if len(s.Enum) > 0 && v != nil && !slices.ContainsFunc(s.Enum, func(e any) bool { return e == v }) {
		names := make([]string, len(s.Enum))
		for i, e := range s.Enum {
			names[i] = fmt.Sprint(e)
		}
		return fieldError(path, "must be one of "+strings.Join(names, ", "))
	}
	switch v := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return fieldError(path, "is out of range")
		}
		if s.Minimum != nil && f < *s.Minimum || s.Maximum != nil && f > *s.Maximum {
			return fieldError(path, "must be between "+bound(s.Minimum)+" and "+bound(s.Maximum))
		}
	case string:
		if c.times[shape] && new(time.Time).UnmarshalText([]byte(v)) != nil {
			return fieldError(path, timeForm)
		}
	case map[string]any:
		return c.object(s, v, path, shape)
	case []any:
		if s.MinItems != nil && len(v) < *s.MinItems || s.MaxItems != nil && len(v) > *s.MaxItems {
			return fieldError(path, fmt.Sprintf("must hold between %s and %s items", count(s.MinItems), count(s.MaxItems)))
		}
		if s.Items == nil {
			return nil
		}
		for i, item := range v {
			if err := c.value(s.Items, item, fmt.Sprintf("%s[%d]", path, i), shape+"[]"); err != nil {
				return err
			}
		}
	}
	return nil
}

// bound writes a number's bound from a schema; the rules that set one set
// both (between).
func bound(b *float64) string {
	if b == nil {
		return "any"
	}
	return strconv.FormatFloat(*b, 'f', -1, 64)
}

// count writes an array's bound from a schema; the rules that set one set
// both (items).
func count(n *int) string {
	if n == nil {
		return "any"
	}
	return strconv.Itoa(*n)
}

// timeForm is what a time argument must look like.
const timeForm = "must be a time in RFC 3339 form, such as 2026-01-31T09:00:00Z"

func (c checker) object(s *jsonschema.Schema, v map[string]any, path, shape string) error {
	known := slices.Sorted(maps.Keys(s.Properties))
	for _, k := range slices.Sorted(maps.Keys(v)) {
		if _, ok := s.Properties[k]; !ok && s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil {
			what := "unknown argument (the arguments are "
			if path != "" {
				what = "unknown field (the fields are "
			}
			return memory.Invalid(join(path, k), what+strings.Join(known, ", ")+")")
		}
	}
	for _, k := range s.Required {
		if _, ok := v[k]; !ok {
			return fieldError(join(path, k), "is required")
		}
	}
	for _, k := range known {
		if item, ok := v[k]; ok {
			if err := c.value(s.Properties[k], item, join(path, k), join(shape, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

// jsonType is the JSON Schema type of a decoded value; a number is an
// integer when it reads as one without a fraction or exponent, as the Go
// integers of the arguments want it.
func jsonType(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if _, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	default:
		return "object"
	}
}

// integral reports whether n is written as an integer too large for 64
// bits.
func integral(n json.Number) bool {
	_, err := strconv.ParseInt(string(n), 10, 64)
	return errors.Is(err, strconv.ErrRange)
}

// expected says in words what types allow, null aside: it is what leaving
// the argument out means.
func expected(types []string) string {
	var words []string
	for _, t := range types {
		switch t {
		case "string":
			words = append(words, "a string")
		case "integer":
			words = append(words, "an integer")
		case "number":
			words = append(words, "a number")
		case "boolean":
			words = append(words, "true or false")
		case "array":
			words = append(words, "an array")
		case "object":
			words = append(words, "an object")
		}
	}
	return strings.Join(words, " or ")
}

// errArguments refuses arguments whose fault has no plainer words: the
// schema that tools/list gives says what fits.
var errArguments = memory.Invalid("", "the arguments do not fit the tool's input schema (see tools/list)")

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func fieldError(path, reason string) error {
	if path == "" {
		return memory.Invalid("", "arguments "+reason)
	}
	return memory.Invalid(path, reason)
}
