package handlers_test

import (
	"net/http"
	"testing"

	"mneme/internal/apptest"
	"mneme/memory"
	"mneme/policyadmin"
)

// TestCreatingAGrantTwiceIsIdempotent: the same grant posted again (as a
// set-up script run twice does), its types in another order, answers 200
// with the grant made the first time, and the tenant keeps one grant; one
// that differs is made, 201.
func TestCreatingAGrantTwiceIsIdempotent(t *testing.T) {
	f := apptest.Start(t)
	post := func(step string, types []string, sensitivity string, want int) memory.Grant {
		t.Helper()
		r := f.Do(t, apptest.Admin, "POST", "/v1/grants", policyadmin.NewGrant{Grantee: "order-bot", Source: "support-bot", Types: types, MaxSensitivity: sensitivity})
		expectResponse(t, step, r, want)
		var g memory.Grant
		r.Decode(t, &g)
		return g
	}
	first := post("create a grant", []string{memory.TypeSemantic, memory.TypeEpisodic}, memory.SensitivityInternal, http.StatusCreated)
	again := post("create it again", []string{memory.TypeEpisodic, memory.TypeSemantic}, memory.SensitivityInternal, http.StatusOK)
	if again.ID != first.ID {
		t.Errorf("the same grant again answered grant %s, want %s", again.ID, first.ID)
	}
	other := post("create a grant of another sensitivity", []string{memory.TypeSemantic, memory.TypeEpisodic}, memory.SensitivityPublic, http.StatusCreated)

	r := f.Do(t, apptest.Admin, "GET", "/v1/grants", nil)
	expectResponse(t, "list grants", r, http.StatusOK)
	var set struct{ Grants []memory.Grant }
	r.Decode(t, &set)
	var ids []string
	for _, g := range set.Grants {
		ids = append(ids, g.ID)
	}
	if len(ids) != 2 || ids[0] != first.ID || ids[1] != other.ID {
		t.Errorf("grants %v, want %s and %s", ids, first.ID, other.ID)
	}
}
