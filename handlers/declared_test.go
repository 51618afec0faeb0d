package handlers

import (
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/google/go-cmp/cmp"
)

// TestQueryParamsOf reads the query parameters each route declares, on its
// operation, on its path or through components, and refuses a router with
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
	      "delete": {"parameters": [{"name": "reason", "in": "query"}]}
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
		"DELETE /v1/things/:id": {op: "DELETE /v1/things/{id}", names: []string{"fields", "reason"}},
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
