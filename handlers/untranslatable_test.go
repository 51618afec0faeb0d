package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"mneme/client"
	"mneme/internal/apptest"
	"mneme/policyadmin"
)

// lowerTenant is the bundled policy with a read guard the pushdown cannot
// turn into a query filter.
func lowerTenant(base []policyadmin.PolicyModule) []policyadmin.PolicyModule {
	return edited(base, "authz.rego", func(s string) string {
		return strings.Replace(s, "\tinput.resource.tenant == input.principal.tenant\n", "\tlower(input.resource.tenant) == lower(input.principal.tenant)\n", 1)
	})
}

// TestUntranslatablePolicy shows through the router that a policy whose
// read rules cannot become a query filter is refused at push and test, and
// that one in force nevertheless (loaded from an older store) fails reads
// and writes visibly instead of answering nothing and skipping dedup.
func TestUntranslatablePolicy(t *testing.T) {
	f := apptest.Start(t)
	base := bundled(t, f)
	draft := lowerTenant(base)
	for _, route := range []struct {
		method, path string
		body         any
	}{
		{"PUT", "/v1/policy", policyadmin.NewPolicy{Message: "lower", Modules: draft}},
		{"POST", "/v1/policy/test", map[string]any{"modules": draft}},
		{"POST", "/v1/policy/replay", policyadmin.ReplayRequest{Modules: draft}},
	} {
		r := f.Do(t, apptest.Admin, route.method, route.path, route.body)
		expectResponse(t, route.method+" "+route.path, r, http.StatusUnprocessableEntity, policyadmin.RejectCompile)
		if !strings.Contains(string(r.Body), "lower(input.resource.tenant") {
			t.Errorf("%s %s does not name the expression: %s", route.method, route.path, r.Body)
		}
	}

	key := "parking_spot"
	create(t, f, "support-bot", client.NewMemory{UserID: "carol", Type: client.TypeSemantic, Kind: "fact", Key: key, Content: "Carol parks in spot P1."})

	// In force as if loaded from a store older than the check: an epoch
	// no activation of this test reaches.
	ctx := context.Background()
	const epoch = 1 << 40
	if err := f.App.Policy.UsePolicy(ctx, f.Tenant, 99, epoch, draft); err != nil {
		t.Fatalf("use policy: %v", err)
	}
	restore := func() {
		if err := f.App.Policy.UsePolicy(ctx, f.Tenant, 0, epoch+1, nil); err != nil {
			t.Fatalf("restore policy: %v", err)
		}
	}
	t.Cleanup(restore)

	steps := []struct {
		name, who, method, path string
		body                    any
	}{
		{"list as the agent", "support-bot", "GET", "/v1/memories?user_id=carol", nil},
		{"list as the user", "carol", "GET", "/v1/memories?user_id=carol", nil},
		{"recall", "support-bot", "POST", "/v1/recall", map[string]any{"user_id": "carol", "query": "Where does Carol park?"}},
		{"aggregates", apptest.Analyst, "GET", "/v1/graph/aggregates?by=type", nil},
		{"write to the same key", "support-bot", "POST", "/v1/memories", client.NewMemory{
			UserID: "carol", Type: client.TypeSemantic, Kind: "fact", Key: key, Content: "Carol parks in spot P2.",
		}},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			r := f.Do(t, st.who, st.method, st.path, st.body)
			expectResponse(t, st.name, r, http.StatusServiceUnavailable, "policy_untranslatable")
		})
	}

	restore()
	page, err := f.Client(t, "support-bot").List(ctx, client.ListOptions{UserID: "carol"})
	if err != nil {
		t.Fatalf("list after restore: %v", err)
	}
	if len(page.Memories) != 1 || !strings.Contains(page.Memories[0].Content, "P1") {
		t.Errorf("after restore: %d memories %+v, want only the first", len(page.Memories), page.Memories)
	}
}
