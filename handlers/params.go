package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gin-gonic/gin"

	"mneme/memory"
)

// The query parameters a /v1 route takes are those its operation in
// openapi.json declares (in: query), read once when the router is built, so
// that the contract and the check cannot drift apart. Any other parameter is
// refused: a misspelt one (dryrun for dry_run, user for user_id) would
// otherwise read as not given, and a dry run would sweep for real, a
// listing for one user list every user's memories. A declared parameter
// given with no value (?dry_run, ?user_id=) is refused for the same reason,
// unless the document says it takes an empty one (allowEmptyValue): the
// text an entity search looks for, a delete's reason.

// routeQuery is what one route takes in its query string.
type routeQuery struct {
	op    string   // "POST /v1/janitor/sweep", as the document names it
	names []string // sorted
	empty []string // the names that take an empty value, sorted
}

// openAPIParameter is the part of an OpenAPI parameter object, or a
// reference to one in components, that says where it goes.
type openAPIParameter struct {
	Ref             string `json:"$ref"`
	Name            string `json:"name"`
	In              string `json:"in"`
	AllowEmptyValue bool   `json:"allowEmptyValue"`
}

// openAPIMethods are the keys of a path item that name operations.
var openAPIMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// declaredQueries returns the query parameters of every operation of an
// OpenAPI document, by "METHOD /path" with the path as the document writes
// it ({id}); an operation that declares none is there with no names.
func declaredQueries(doc []byte) (map[string]routeQuery, error) {
	var d struct {
		Paths      map[string]map[string]json.RawMessage `json:"paths"`
		Components struct {
			Parameters map[string]openAPIParameter `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, err
	}
	const refPrefix = "#/components/parameters/"
	queryNames := func(ps []openAPIParameter) (routeQuery, error) {
		var rq routeQuery
		for _, p := range ps {
			if p.Ref != "" {
				name, ok := strings.CutPrefix(p.Ref, refPrefix)
				target, found := d.Components.Parameters[name]
				if !ok || !found {
					return rq, fmt.Errorf("parameter reference %q names no parameter of components", p.Ref)
				}
				p = target
			}
			if p.In != "query" {
				continue
			}
			rq.names = append(rq.names, p.Name)
			if p.AllowEmptyValue {
				rq.empty = append(rq.empty, p.Name)
			}
		}
		return rq, nil
	}
	out := map[string]routeQuery{}
	for path, item := range d.Paths {
		var shared []openAPIParameter
		if raw, ok := item["parameters"]; ok {
			if err := json.Unmarshal(raw, &shared); err != nil {
				return nil, fmt.Errorf("%s: parameters: %w", path, err)
			}
		}
		for _, method := range openAPIMethods {
			raw, ok := item[method]
			if !ok {
				continue
			}
			var op struct {
				Parameters []openAPIParameter `json:"parameters"`
			}
			if err := json.Unmarshal(raw, &op); err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, path, err)
			}
			rq, err := queryNames(append(slices.Clone(shared), op.Parameters...))
			if err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, path, err)
			}
			slices.Sort(rq.names)
			slices.Sort(rq.empty)
			rq.op = strings.ToUpper(method) + " " + path
			rq.names, rq.empty = slices.Compact(rq.names), slices.Compact(rq.empty)
			out[rq.op] = rq
		}
	}
	return out, nil
}

// ginParam is a path parameter as gin writes it (:id, *id).
var ginParam = regexp.MustCompile(`[:*]([^/]+)`)

// queryParamsOf returns, for every /v1 route of r by "METHOD path" as gin
// writes it (c.FullPath), the query parameters the document declares for
// it, or an error naming each route the document does not describe.
func queryParamsOf(r *gin.Engine, doc []byte) (map[string]routeQuery, error) {
	declared, err := declaredQueries(doc)
	if err != nil {
		return nil, fmt.Errorf("handlers: openapi.json: %w", err)
	}
	out := map[string]routeQuery{}
	var missing []error
	for _, rt := range r.Routes() {
		if !strings.HasPrefix(rt.Path, "/v1/") {
			continue
		}
		op := rt.Method + " " + ginParam.ReplaceAllString(rt.Path, "{$1}")
		rq, ok := declared[op]
		if !ok {
			missing = append(missing, fmt.Errorf("handlers: openapi.json does not describe %s", op))
			continue
		}
		out[rt.Method+" "+rt.Path] = rq
	}
	return out, errors.Join(missing...)
}

// knownQuery refuses a request to a /v1 route with a query parameter the
// route does not declare, or one given with no value that takes one.
func (a *api) knownQuery(c *gin.Context) {
	rq := a.queryParams[c.Request.Method+" "+c.FullPath()]
	if err := rq.check(c.Request.URL.Query()); err != nil {
		a.fail(c, err)
		return
	}
	c.Next()
}

// check returns an invalid_argument error naming the first parameter of q
// (by name) the route does not declare, with the declared names it is
// likely a misspelling of, or those it takes when none is close; else the
// first given with no value that takes one; nil when every parameter is
// declared and has a value.
func (rq routeQuery) check(q map[string][]string) error {
	var unknown, blank []string
	for name, vs := range q {
		switch {
		case !slices.Contains(rq.names, name):
			unknown = append(unknown, name)
		case slices.Contains(vs, "") && !slices.Contains(rq.empty, name):
			blank = append(blank, name)
		}
	}
	if len(unknown) == 0 && len(blank) > 0 {
		return memory.Invalid(slices.Min(blank), "has no value: give it one, or leave the parameter out")
	}
	if len(unknown) == 0 {
		return nil
	}
	name := slices.Min(unknown)
	if name == "" {
		return memory.Invalid("query", "holds a parameter with no name (=value)")
	}
	var near []string
	for _, d := range rq.names {
		if similar(name, d) {
			near = append(near, d)
		}
	}
	reason := "is not a query parameter of " + rq.op
	switch {
	case len(near) > 0:
		reason += "; did you mean " + strings.Join(near, " or ") + "?"
	case len(rq.names) > 0:
		reason += ", which takes " + strings.Join(rq.names, ", ")
	default:
		reason += ", which takes none"
	}
	return memory.Invalid(shownName(name), reason)
}

// maxShownName is how many characters of a parameter's name an error
// echoes: enough to recognise it, not a 3,000-character name back.
const maxShownName = 64

// shownName is name as an error shows it: cut to maxShownName characters,
// the last an ellipsis.
func shownName(name string) string {
	if utf8.RuneCountInString(name) <= maxShownName {
		return name
	}
	return string([]rune(name)[:maxShownName-1]) + "…"
}

// similar reports whether a client who sent name likely meant declared:
// the same but for case, '_' and '-' (dryrun, userID), the one a prefix of
// the other (user for user_id, query for q), or one or two letters off
// (limt).
func similar(name, declared string) bool {
	fold := func(s string) string {
		return strings.ToLower(strings.NewReplacer("_", "", "-", "").Replace(s))
	}
	n, d := fold(name), fold(declared)
	if n == "" || d == "" {
		return false
	}
	if strings.HasPrefix(n, d) || strings.HasPrefix(d, n) {
		return true
	}
	maxEdits := 1
	if min(len(n), len(d)) >= 5 {
		maxEdits = 2
	}
	return editDistance(n, d) <= maxEdits
}

// editDistance is the Levenshtein distance between a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
