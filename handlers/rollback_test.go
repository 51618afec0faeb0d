package handlers_test

import (
	"net/http"
	"slices"
	"testing"

	"mneme/internal/apptest"
	"mneme/policyadmin"
)

// TestRollbackStepsBackWithoutABody: POST /v1/policy/rollback with no body
// is the rollback to the previous revision, as {} is, and each one goes a
// step further back, never to the revision it left; a body that is there
// but malformed is still refused.
func TestRollbackStepsBackWithoutABody(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end")
	}
	f := apptest.Start(t)
	base := bundled(t, f)
	for _, msg := range []string{"first", "second"} {
		r := f.Do(t, apptest.Admin, "PUT", "/v1/policy", policyadmin.NewPolicy{Message: msg, Modules: noSecretPlans(base)})
		expectResponse(t, "push "+msg, r, http.StatusCreated)
	}
	for _, n := range []string{"1", "2"} {
		r := f.Do(t, apptest.Admin, "POST", "/v1/policy/revisions/"+n+"/activate", nil)
		expectResponse(t, "activate "+n, r, http.StatusOK)
	}

	for _, bad := range []string{"{", "[]", `{"revision": "1"}`, "null"} {
		r := f.Do(t, apptest.Admin, "POST", "/v1/policy/rollback", []byte(bad))
		expectResponse(t, "rollback with the body "+bad, r, http.StatusBadRequest)
	}

	var active []int64
	for _, body := range []any{nil, map[string]any{}} {
		r := f.Do(t, apptest.Admin, "POST", "/v1/policy/rollback", body)
		expectResponse(t, "rollback", r, http.StatusOK)
		var st policyadmin.PolicyState
		r.Decode(t, &st)
		active = append(active, st.Active)
	}
	if !slices.Equal(active, []int64{1, 0}) {
		t.Errorf("active after each rollback %v, want [1 0]: back one step each time", active)
	}
	r := f.Do(t, apptest.Admin, "POST", "/v1/policy/rollback", nil)
	expectResponse(t, "rollback with nothing left to roll back", r, http.StatusBadRequest, "invalid_argument")
}
