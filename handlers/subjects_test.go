package handlers_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"mneme/app"
	"mneme/export"
	"mneme/internal/apptest"
	"mneme/internal/testidp"
	"mneme/memory"
	"mneme/policyadmin"
	"mneme/workingmemory"
)

// alice's key naming support-bot as the author is refused on every write
// path, and support-bot afterwards reads nothing alice tried to write as it.
func TestUserCannotWriteAsAnAgent(t *testing.T) {
	f := apptest.Start(t)
	const marker = "impersonated"
	mem := func(text string) memory.NewMemory {
		return memory.NewMemory{UserID: "alice", AgentID: "support-bot", Type: memory.TypeProfile, Kind: "preference",
			Content: "Alice prefers express delivery for every order (" + marker + " " + text + ")"}
	}
	turns := func(text string) []memory.Turn {
		return []memory.Turn{{Role: memory.RoleUser, Content: "Our budget is 90k CNY, order SO-5511 for Lianhua Trading (" + marker + " " + text + ")"}}
	}
	tests := []struct {
		name string
		path string
		body any
	}{
		{"sync single", "/v1/memories", mem("single")},
		{"sync batch", "/v1/memories", map[string]any{"memories": []memory.NewMemory{
			{UserID: "alice", Type: memory.TypeProfile, Content: "Alice likes short answers (" + marker + " own)"}, mem("batch"),
		}}},
		{"async", "/v1/memories?async=true", mem("async")},
		{"async batch", "/v1/memories?async=true", map[string]any{"memories": []memory.NewMemory{mem("async batch")}}},
		{"ingest sync", "/v1/ingest?sync=true", memory.IngestRequest{UserID: "alice", AgentID: "support-bot", Turns: turns("ingest")}},
		{"ingest async", "/v1/ingest", memory.IngestRequest{UserID: "alice", AgentID: "support-bot", Turns: turns("ingest async")}},
		{"ingest as another user", "/v1/ingest?sync=true", memory.IngestRequest{UserID: "alice", AgentID: "user:bob", Turns: turns("bob")}},
		{"session turns", "/v1/sessions/s-imp/turns", memory.AppendRequest{UserID: "alice", AgentID: "support-bot", Turns: turns("session")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.Do(t, "alice", http.MethodPost, tt.path, tt.body)
			expectResponse(t, tt.name, r, http.StatusForbidden, "forbidden")
		})
	}
	// The refused turns opened no session, so there is nothing to close.
	r := f.Do(t, "alice", http.MethodPost, "/v1/sessions/s-imp/close", nil)
	expectResponse(t, "close the refused session", r, http.StatusNotFound, "not_found")

	// alice's own session, closed, writes as user:alice, never as an agent.
	r = f.Do(t, "alice", http.MethodPost, "/v1/sessions/s-own/turns", memory.AppendRequest{UserID: "alice", AgentID: "user:alice", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "I prefer deliveries on weekday mornings."},
	}})
	expectResponse(t, "own session turns", r, http.StatusOK)
	r = f.Do(t, "alice", http.MethodPost, "/v1/sessions/s-own/close", nil)
	expectResponse(t, "close own session", r, http.StatusOK)
	var closed memory.CloseResult
	r.Decode(t, &closed)
	if len(closed.Memories) == 0 {
		t.Fatalf("own session closed with nothing written: %+v", closed)
	}
	for _, m := range closed.Memories {
		if m.AgentID != "user:alice" {
			t.Errorf("session memory %s written as %q, want user:alice", m.ID, m.AgentID)
		}
	}

	// Give the queue time to apply anything it had accepted, then look.
	time.Sleep(500 * time.Millisecond)
	for _, who := range []string{"support-bot", apptest.Admin} {
		for _, m := range list(t, f, who, "user_id=alice&limit=500") {
			if m.AgentID == "support-bot" && strings.Contains(m.Content, marker) {
				t.Errorf("%s reads %s, written by alice as support-bot: %q", who, m.ID, m.Content)
			}
		}
	}
	got := recall(t, f, "support-bot", memory.RecallRequest{UserID: "alice", Query: "express delivery preference", K: 20})
	for _, m := range got.Memories {
		if strings.Contains(m.Memory.Content, marker) && m.Memory.AgentID == "support-bot" {
			t.Errorf("support-bot recalls %s written by alice as it", m.Memory.ID)
		}
	}
}

// A job queued before the check existed (or forged) names another author:
// applying it fails the job and writes nothing.
func TestQueuedImpersonationFails(t *testing.T) {
	f := apptest.Start(t)
	alice := memory.Principal{Tenant: f.Tenant, Kind: memory.KindUser, ID: "alice"}
	payload := []byte(`[{"user_id":"alice","agent_id":"support-bot","type":"profile","content":"Alice prefers rail freight (forged job)"}]`)
	res, err := f.App.Service.ApplyMemoryJobs(context.Background(), []memory.Job{{
		ID: "job-forged", Kind: memory.JobMemories, Tenant: f.Tenant, UserID: "alice", Principal: alice,
		AcceptedAt: time.Now().UTC(), Payload: payload,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Err == nil || len(res[0].Memories) != 0 {
		t.Fatalf("forged memory job = %+v, want a failure and nothing written", res)
	}
	ingest := []byte(`{"user_id":"alice","agent_id":"support-bot","turns":[{"role":"user","content":"Our budget is 70k CNY for order SO-6601"}]}`)
	res, err = f.App.Working.ApplyIngestJobs(context.Background(), []memory.Job{{
		ID: "job-forged-ingest", Kind: workingmemory.JobIngest, Tenant: f.Tenant, UserID: "alice", Principal: alice,
		AcceptedAt: time.Now().UTC(), Payload: ingest,
	}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Err == nil || len(res[0].Memories) != 0 {
		t.Fatalf("forged ingest job = %+v, want a failure and nothing written", res)
	}
	if ms := list(t, f, apptest.Admin, "user_id=alice"); len(ms) != 0 {
		t.Errorf("forged jobs wrote %v", ids(ms))
	}
}

// End users read memories about themselves up to their tenant's ceiling:
// finance-bot's confidential cost note about alice is not hers to read by
// any read path; admins read it, and the export holds it.
func TestUserSensitivityCeiling(t *testing.T) {
	f := apptest.Start(t)
	lianhua := []memory.Entity{{ID: "lianhua-trading", Kind: "company", Name: "Hangzhou Lianhua Trading"}}
	cost := create(t, f, "finance-bot", memory.NewMemory{
		UserID: "alice", Type: memory.TypeSemantic, Kind: "internal_cost", Key: "internal_cost", SessionID: "s-fin",
		Content:     "Internal cost for Alice's account: our landed cost on the Lianhua Trading contract is 82% of list price, gross margin about 18%.",
		Sensitivity: memory.SensitivityConfidential, Entities: lianhua,
	})
	terms := create(t, f, "finance-bot", memory.NewMemory{
		UserID: "alice", Type: memory.TypeSemantic, Kind: "payment_terms", Key: "payment_terms", SessionID: "s-fin",
		Content: "Lianhua Trading pays on 30-day terms by bank transfer.", Entities: lianhua,
	})
	// A second version: history must not show either.
	r := f.Do(t, "finance-bot", http.MethodPatch, "/v1/memories/"+cost.ID, map[string]any{
		"content": "Internal cost for Alice's account: landed cost on the Lianhua Trading contract is now 80% of list price, gross margin about 20%.",
	})
	expectResponse(t, "update the cost note", r, http.StatusOK)
	var cost2 memory.Memory
	r.Decode(t, &cost2)
	secret := []string{cost.ID, cost2.ID}

	readsNothingSecret := func(t *testing.T, who string) {
		t.Helper()
		for _, id := range secret {
			r := f.Do(t, who, http.MethodGet, "/v1/memories/"+id, nil)
			expectResponse(t, who+" get", r, http.StatusNotFound, "not_found")
			r = f.Do(t, who, http.MethodGet, "/v1/memories/"+id+"/history", nil)
			expectResponse(t, who+" history", r, http.StatusNotFound, "not_found")
		}
		for _, q := range []string{"user_id=alice&limit=500", "user_id=alice&status=superseded", "limit=500"} {
			if got := ids(list(t, f, who, q)); slices.ContainsFunc(secret, func(id string) bool { return has(got, id) }) {
				t.Errorf("%s list %s = %v, holds the cost note", who, q, got)
			}
		}
		for _, q := range []memory.RecallRequest{
			{UserID: "alice", Query: "What is our internal cost and gross margin on Lianhua Trading?", K: 20},
			{UserID: "alice", Query: "Lianhua Trading payment terms", K: 20},
			{UserID: "alice", Query: "landed cost margin", SessionID: "s-alice", K: 20},
			{UserID: "alice", Query: "landed cost margin", SessionID: "s-fin", K: 20},
			{UserID: "alice", Query: "thank you so much, have a nice day", K: 20},
		} {
			got := recall(t, f, who, q)
			if ids := recalledIDs(got); slices.ContainsFunc(secret, func(id string) bool { return has(ids, id) }) || strings.Contains(got.Context, "gross margin") {
				t.Errorf("%s recall %q = %v, holds the cost note", who, q.Query, ids)
			}
		}
	}

	r = f.Do(t, "alice", http.MethodPost, "/v1/sessions/s-alice/turns", memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "What margin do you make on my Lianhua orders?"},
	}})
	expectResponse(t, "alice opens a session", r, http.StatusOK)

	t.Run("alice reads her internal notes, not the confidential one", func(t *testing.T) {
		readsNothingSecret(t, "alice")
		if got := getMemory(t, f, "alice", terms.ID); got.ID != terms.ID {
			t.Errorf("alice get terms = %s", got.ID)
		}
	})
	t.Run("admins and the agent that wrote it read it", func(t *testing.T) {
		for _, who := range []string{apptest.Admin, "finance-bot"} {
			if got := getMemory(t, f, who, cost2.ID); got.ID != cost2.ID {
				t.Errorf("%s get = %s", who, got.ID)
			}
			got := recall(t, f, who, memory.RecallRequest{UserID: "alice", Query: "What is our internal cost and gross margin on Lianhua Trading?"})
			if !has(recalledIDs(got), cost2.ID) {
				t.Errorf("%s recall = %v, want %s", who, recalledIDs(got), cost2.ID)
			}
			r := f.Do(t, who, http.MethodGet, "/v1/memories/"+cost2.ID+"/history", nil)
			expectResponse(t, who+" history", r, http.StatusOK)
		}
	})
	t.Run("the tenant raises and lowers the ceiling", func(t *testing.T) {
		put := func(level string) {
			t.Helper()
			r := f.Do(t, apptest.Admin, http.MethodPut, "/v1/policy/settings", policyadmin.Settings{UserMaxSensitivity: level})
			expectResponse(t, "put settings "+level, r, http.StatusOK)
		}
		put(memory.SensitivityConfidential)
		if got := getMemory(t, f, "alice", cost2.ID); got.ID != cost2.ID {
			t.Errorf("alice get under a confidential ceiling = %s", got.ID)
		}
		if got := ids(list(t, f, "alice", "user_id=alice")); !has(got, cost2.ID) {
			t.Errorf("alice list under a confidential ceiling = %v", got)
		}
		put(memory.SensitivityPublic)
		r := f.Do(t, "alice", http.MethodGet, "/v1/memories/"+terms.ID, nil)
		expectResponse(t, "internal under a public ceiling", r, http.StatusNotFound, "not_found")
		put("")
		r = f.Do(t, apptest.Admin, http.MethodGet, "/v1/policy/settings", nil)
		var s policyadmin.Settings
		r.Decode(t, &s)
		if s.UserMaxSensitivity != memory.SensitivityInternal {
			t.Errorf("default ceiling = %q, want internal", s.UserMaxSensitivity)
		}
		readsNothingSecret(t, "alice")
	})
	t.Run("the export holds everything, and is audited", func(t *testing.T) {
		own := create(t, f, "alice", memory.NewMemory{UserID: "alice", Type: memory.TypeProfile, Content: "Alice prefers invoices by e-mail."})
		r := f.Do(t, "alice", http.MethodDelete, "/v1/memories/"+own.ID, nil)
		expectResponse(t, "alice deletes her note", r, http.StatusOK)
		r = f.Do(t, "alice", http.MethodGet, "/v1/users/alice/export", nil)
		expectResponse(t, "export as the user", r, http.StatusForbidden, "forbidden")

		r = f.Do(t, apptest.Admin, http.MethodGet, "/v1/users/alice/export", nil)
		expectResponse(t, "export", r, http.StatusOK)
		var doc export.Document
		r.Decode(t, &doc)
		statuses := map[string]string{}
		for _, m := range doc.Memories {
			statuses[m.ID] = m.Status
		}
		if statuses[cost.ID] != memory.StatusSuperseded || statuses[cost2.ID] != memory.StatusActive || statuses[terms.ID] != memory.StatusActive {
			t.Errorf("export statuses = %v, want the cost note superseded and its head and the terms active", statuses)
		}
		if _, ok := statuses[own.ID]; ok {
			t.Errorf("export holds deleted memory %s", own.ID)
		}
		if !slices.ContainsFunc(doc.Tombstones, func(ts export.Tombstone) bool { return ts.ID == own.ID && ts.Kind == export.TombstoneMemory }) {
			t.Errorf("export tombstones = %+v, want %s", doc.Tombstones, own.ID)
		}
		if !slices.ContainsFunc(doc.Sessions, func(s memory.Session) bool { return s.ID == "s-alice" && len(s.Turns) == 1 }) {
			t.Errorf("export sessions = %+v, want s-alice with its turn", doc.Sessions)
		}
		if len(doc.Recalls) == 0 {
			t.Errorf("export holds no recall-log entry; the recalls above were logged")
		}

		events, err := f.App.Audit.Events(context.Background(), f.Tenant, memory.AuditQuery{Action: "user.export"})
		if err != nil {
			t.Fatal(err)
		}
		var ok, refused bool
		for _, e := range events {
			ok = ok || e.Outcome == memory.AuditOK && e.Actor == "admin:"+apptest.Admin && e.Target == "user:alice"
			refused = refused || e.Outcome == memory.AuditFailed && e.Actor == "user:alice"
		}
		if !ok || !refused {
			t.Errorf("audit = %+v, want the export and the refused one", events)
		}
	})
	t.Run("another tenant's admin finds nothing", func(t *testing.T) {
		other := apptest.Start(t)
		r := other.Do(t, apptest.Admin, http.MethodGet, "/v1/users/alice/export", nil)
		expectResponse(t, "export from another tenant", r, http.StatusNotFound, "not_found")
	})
}

// "thank you so much, have a nice day" matches "30-day terms" by a word;
// graph expansion must not add that note's neighbours, which share nothing
// with the question but an entity.
func TestRecallChitChatExpandsNothing(t *testing.T) {
	f := apptest.Start(t)
	lianhua := []memory.Entity{{ID: "lianhua-trading", Kind: "company", Name: "Hangzhou Lianhua Trading"}}
	for _, m := range []memory.NewMemory{
		{Type: memory.TypeSemantic, Kind: "payment_terms", Content: "Lianhua Trading pays on 30-day terms by bank transfer."},
		{Type: memory.TypeSemantic, Kind: "internal_cost", Sensitivity: memory.SensitivityConfidential,
			Content: "Internal cost for Alice's account: our landed cost on the Lianhua Trading contract is 82% of list price, gross margin about 18%."},
		{Type: memory.TypeEpisodic, Kind: "order_status", Content: "Order SO-1001 (200 cartons of A4 copy paper) for Lianhua Trading shipped on 15 Sep."},
		{Type: memory.TypeEpisodic, Kind: "payment", Content: "Invoice INV-2026-0931 for SO-1001 (18,600 CNY) was paid by Lianhua Trading on 30 Sep."},
		{Type: memory.TypeSemantic, Kind: "budget", Content: "Alice raised her Q4 procurement budget to 150k CNY."},
	} {
		m.UserID, m.Entities = "alice", lianhua
		create(t, f, "finance-bot", m)
	}
	for _, who := range []string{apptest.Admin, "finance-bot", "alice"} {
		got := recall(t, f, who, memory.RecallRequest{UserID: "alice", Query: "thank you so much, have a nice day", K: 20})
		for _, m := range got.Memories {
			if !slices.ContainsFunc(m.Explain.Sources, func(s string) bool { return s == memory.SourceVector || s == memory.SourceFullText }) {
				t.Errorf("%s: %s recalled through %v alone (similarity %.2f): %q", who, m.Memory.ID, m.Explain.Sources, m.Explain.VectorSimilarity, m.Memory.Content)
			}
		}
	}
}

// TestReadPathsMatchDecisions: randomized memories, grants and tenant
// ceiling in a fixture tenant; for every principal, authenticated by its
// API key or by a JWT of the tenant's issuer (drawn at random), get, list,
// history and recall through the real router return exactly (recall: only)
// what per-memory policy decisions allow.
func TestReadPathsMatchDecisions(t *testing.T) {
	idp := testidp.New(t)
	f := apptest.StartWith(t, func(c *app.Config) {
		c.OIDC.Issuer, c.OIDC.JWKSURL, c.OIDC.Audience = testidp.IssuerName, idp.URL, testidp.Audience
	})
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	t.Logf("seed %d", seed)
	agents := []string{"support-bot", "order-bot", "finance-bot"}
	types := []string{memory.TypeEpisodic, memory.TypeSemantic, memory.TypeProcedural, memory.TypeProfile}
	var written []memory.Memory
	for i := range 24 {
		who := agents[rng.IntN(len(agents))]
		written = append(written, create(t, f, who, memory.NewMemory{
			UserID: apptest.Users[rng.IntN(len(apptest.Users))], Type: types[rng.IntN(len(types))],
			Kind:        []string{"order", "note", "internal_cost"}[rng.IntN(3)],
			Sensitivity: memory.Sensitivities[rng.IntN(len(memory.Sensitivities))],
			Content:     fmt.Sprintf("Lianhua Trading ledger entry %d: shipment of copy paper, batch %d", i, rng.IntN(1000)),
		}))
	}
	for range rng.IntN(3) {
		g := policyadmin.NewGrant{
			Grantee: agents[rng.IntN(3)], Source: []string{"*", agents[rng.IntN(3)]}[rng.IntN(2)],
			Types: []string{types[rng.IntN(4)], types[rng.IntN(4)]}, MaxSensitivity: memory.Sensitivities[rng.IntN(4)],
		}
		r := f.Do(t, apptest.Admin, http.MethodPost, "/v1/grants", g)
		expectResponse(t, "grant", r, http.StatusCreated)
	}
	ceiling := []string{"", memory.SensitivityPublic, memory.SensitivityConfidential}[rng.IntN(3)]
	r := f.Do(t, apptest.Admin, http.MethodPut, "/v1/policy/settings", policyadmin.Settings{UserMaxSensitivity: ceiling})
	expectResponse(t, "settings", r, http.StatusOK)
	t.Logf("ceiling %q", ceiling)

	principal := map[string]memory.Principal{
		apptest.Admin:   {Tenant: f.Tenant, Kind: memory.KindAdmin, ID: apptest.Admin},
		apptest.Analyst: {Tenant: f.Tenant, Kind: memory.KindAnalyst, ID: apptest.Analyst, Roles: []string{"analyst"}},
	}
	for _, a := range agents {
		principal[a] = memory.Principal{Tenant: f.Tenant, Kind: memory.KindAgent, ID: a}
	}
	for _, u := range apptest.Users {
		principal[u] = memory.Principal{Tenant: f.Tenant, Kind: memory.KindUser, ID: u}
	}
	// A caller is its key's name in f.Keys, or a token signed for it.
	caller := map[string]string{}
	var tokens int
	for who, p := range principal {
		caller[who] = who
		if rng.IntN(2) == 0 {
			caller[who] = idp.Sign("rsa-1", testidp.Claims{"tenant": f.Tenant, "sub": p.ID, "kind": p.Kind, "roles": p.Roles})
			tokens++
		}
	}
	t.Logf("%d of %d principals by JWT", tokens, len(principal))
	var allowed, denied int
	for name, p := range principal {
		who := caller[name]
		may := map[string]bool{}
		for _, m := range written {
			d, err := f.App.Policy.Decide(ctx, p, memory.ActionRead, memory.ResourceOf(m), time.Now().UTC())
			if err != nil {
				t.Fatal(err)
			}
			may[m.ID] = d.Allow
			if d.Allow {
				allowed++
			} else {
				denied++
			}
			r := f.Do(t, who, http.MethodGet, "/v1/memories/"+m.ID, nil)
			h := f.Do(t, who, http.MethodGet, "/v1/memories/"+m.ID+"/history", nil)
			want := http.StatusNotFound
			if d.Allow {
				want = http.StatusOK
			}
			if r.Status != want || h.Status != want {
				t.Errorf("%s get/history %+v: %d/%d, want %d", name, memory.ResourceOf(m), r.Status, h.Status, want)
			}
		}
		for _, u := range apptest.Users {
			var want []string
			for _, m := range written {
				if m.UserID == u && may[m.ID] {
					want = append(want, m.ID)
				}
			}
			got := ids(list(t, f, who, "user_id="+u+"&limit=500"))
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s list %s = %v, want %v", name, u, got, want)
			}
			for _, id := range recalledIDs(recall(t, f, who, memory.RecallRequest{UserID: u, Query: "Lianhua Trading ledger entry copy paper shipment", K: 50})) {
				if !may[id] {
					t.Errorf("%s recall %s returned %s, which policy denies", name, u, id)
				}
			}
		}
	}
	if allowed == 0 || denied == 0 {
		t.Errorf("%d allowed, %d denied: the generator misses cases", allowed, denied)
	}
}
