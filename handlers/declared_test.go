package handlers

import (
	"errors"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/google/go-cmp/cmp"

	"mneme/memory"
)

// TestQueryParamsOf reads the query parameters each route declares, on its
// operation, on its path or through components, and those that take an
// empty value, and refuses a router with
// a /v1 route the document does not describe or a reference it cannot
// follow.
func TestQueryParamsOf(t *testing.T) {
	const doc = `{
	  "paths": {
	    "/healthz": {"get": {}},
	    "/v1/things": {
	      "get": {"parameters": [
	        {"$ref": "#/components/parameters/Limit"},
	        {"name": "X-Request-ID", "in": "header"},
	        {"name": "kind", "in": "query"}
	      ]},
	      "post": {}
	    },
	    "/v1/things/{id}": {
	      "parameters": [{"name": "id", "in": "path"}, {"name": "fields", "in": "query"}],
	      "delete": {"parameters": [{"name": "reason", "in": "query", "allowEmptyValue": true}]}
	    }
	  },
	  "components": {"parameters": {"Limit": {"name": "limit", "in": "query"}}}
	}`
	gin.SetMode(gin.ReleaseMode)
	router := func(extra ...string) *gin.Engine {
		r := gin.New()
		nop := func(*gin.Context) {}
		r.GET("/healthz", nop)
		r.GET("/metrics", nop) // outside /v1: needs no operation
		r.GET("/v1/things", nop)
		r.POST("/v1/things", nop)
		r.DELETE("/v1/things/:id", nop)
		for _, path := range extra {
			r.GET(path, nop)
		}
		return r
	}

	got, err := queryParamsOf(router(), []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]routeQuery{
		"GET /v1/things":        {op: "GET /v1/things", names: []string{"kind", "limit"}},
		"POST /v1/things":       {op: "POST /v1/things"},
		"DELETE /v1/things/:id": {op: "DELETE /v1/things/{id}", names: []string{"fields", "reason"}, empty: []string{"reason"}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(routeQuery{})); diff != "" {
		t.Errorf("queryParamsOf (-want +got):\n%s", diff)
	}

	_, err = queryParamsOf(router("/v1/undocumented", "/v1/things/:id/parts/*rest"), []byte(doc))
	for _, op := range []string{"GET /v1/undocumented", "GET /v1/things/{id}/parts/{rest}"} {
		if err == nil || !strings.Contains(err.Error(), op) {
			t.Errorf("a router with %s undocumented: %v, want an error naming it", op, err)
		}
	}

	broken := strings.Replace(doc, "#/components/parameters/Limit", "#/components/parameters/Nothing", 1)
	if _, err := queryParamsOf(router(), []byte(broken)); err == nil || !strings.Contains(err.Error(), "Nothing") {
		t.Errorf("a reference to no parameter: %v, want an error naming it", err)
	}
}

func TestSimilar(t *testing.T) {
	tests := []struct {
		name, declared string
		want           bool
	}{
		{"dryrun", "dry_run", true},
		{"Dry-Run", "dry_run", true},
		{"user", "user_id", true},
		{"userid", "user_id", true},
		{"query", "q", true},
		{"limt", "limit", true},
		{"sinse", "since", true},
		{"max_lenght", "max_length", true},
		{"bogus", "by", false},
		{"bogus", "status", false},
		{"q", "to", false},
		{"page", "type", false},
		{"", "q", false},
		{"_", "q", false},
	}
	for _, tc := range tests {
		if got := similar(tc.name, tc.declared); got != tc.want {
			t.Errorf("similar(%q, %q) = %v, want %v", tc.name, tc.declared, got, tc.want)
		}
	}
}

// TestCheckQuery: a declared parameter given with no value is refused,
// naming it, unless it takes an empty value; an undeclared one is named
// first, cut to maxShownName characters.
func TestCheckQuery(t *testing.T) {
	rq := routeQuery{op: "GET /v1/things", names: []string{"dry_run", "q", "user_id"}, empty: []string{"q"}}
	long := strings.Repeat("a", 3000)
	tests := []struct {
		name      string
		query     map[string][]string
		wantField string // "" means accepted
	}{
		{"values", map[string][]string{"dry_run": {"true"}, "user_id": {"alice"}}, ""},
		{"none", nil, ""},
		{"a flag with no value", map[string][]string{"dry_run": {""}}, "dry_run"},
		{"a filter with no value", map[string][]string{"user_id": {""}, "dry_run": {"true"}}, "user_id"},
		{"the first of two with no value", map[string][]string{"user_id": {""}, "dry_run": {""}}, "dry_run"},
		{"one that takes an empty value", map[string][]string{"q": {""}}, ""},
		{"an unknown one before one with no value", map[string][]string{"user_id": {""}, "zz": {"1"}}, "zz"},
		{"an unknown one with no value", map[string][]string{"zz": {""}}, "zz"},
		{"a long unknown name", map[string][]string{long: {"1"}}, strings.Repeat("a", maxShownName-1) + "…"},
		{"a name of maxShownName characters", map[string][]string{strings.Repeat("é", maxShownName): {"1"}}, strings.Repeat("é", maxShownName)},
		{"a name one character longer", map[string][]string{strings.Repeat("é", maxShownName+1): {"1"}}, strings.Repeat("é", maxShownName-1) + "…"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := rq.check(tc.query)
			var inv *memory.InvalidError
			switch {
			case tc.wantField == "" && err != nil:
				t.Errorf("check = %v, want nil", err)
			case tc.wantField == "":
			case !errors.As(err, &inv):
				t.Errorf("check = %v, want invalid %s", err, tc.wantField)
			case inv.Field != tc.wantField:
				t.Errorf("field = %.80q, want %.80q", inv.Field, tc.wantField)
			}
		})
	}
}
