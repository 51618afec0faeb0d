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
	"mneme/client"
	"mneme/export"
	"mneme/identity"
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
	mem := func(text string) client.NewMemory {
		return client.NewMemory{UserID: "alice", AgentID: "support-bot", Type: client.TypeProfile, Kind: "preference",
			Content: "Alice prefers express delivery for every order (" + marker + " " + text + ")"}
	}
	turns := func(text string) []client.Turn {
		return []client.Turn{{Role: memory.RoleUser, Content: "Our budget is 90k CNY, order SO-5511 for Lianhua Trading (" + marker + " " + text + ")"}}
	}
	// Raw requests: every wire form of every write path, the single-memory
	// body and the batch, sync and queued, which the client does not all
	// send.
	tests := []struct {
		name string
		path string
		body any
	}{
		{"sync single", "/v1/memories", mem("single")},
		{"sync batch", "/v1/memories", map[string]any{"memories": []client.NewMemory{
			{UserID: "alice", Type: client.TypeProfile, Content: "Alice likes short answers (" + marker + " own)"}, mem("batch"),
		}}},
		{"async", "/v1/memories?async=true", mem("async")},
		{"async batch", "/v1/memories?async=true", map[string]any{"memories": []client.NewMemory{mem("async batch")}}},
		{"ingest sync", "/v1/ingest?sync=true", client.IngestRequest{UserID: "alice", AgentID: "support-bot", Turns: turns("ingest")}},
		{"ingest async", "/v1/ingest", client.IngestRequest{UserID: "alice", AgentID: "support-bot", Turns: turns("ingest async")}},
		{"ingest as another user", "/v1/ingest?sync=true", client.IngestRequest{UserID: "alice", AgentID: "user:bob", Turns: turns("bob")}},
		{"session turns", "/v1/sessions/s-imp/turns", client.AppendRequest{UserID: "alice", AgentID: "support-bot", Turns: turns("session")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := f.Do(t, "alice", http.MethodPost, tt.path, tt.body)
			expectResponse(t, tt.name, r, http.StatusForbidden, "forbidden")
		})
	}
	// The refused turns opened no session, so there is nothing to close.
	alice := f.Client(t, "alice")
	_, err := alice.CloseSession(t.Context(), "s-imp")
	wantAPIError(t, "close the refused session", err, http.StatusNotFound, "not_found")

	// alice's own session, closed, writes as user:alice, never as an agent.
	appendTurns(t, f, "alice", "s-own", client.AppendRequest{UserID: "alice", AgentID: "user:alice", Turns: []client.Turn{
		{Role: memory.RoleUser, Content: "I prefer deliveries on weekday mornings."},
	}})
	closed, err := alice.CloseSession(t.Context(), "s-own")
	if err != nil {
		t.Fatalf("close own session: %v", err)
	}
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
	got := recall(t, f, "support-bot", client.RecallRequest{UserID: "alice", Query: "express delivery preference", K: 20})
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
	lianhua := []client.Entity{{ID: "lianhua-trading", Kind: "company", Name: "Hangzhou Lianhua Trading"}}
	cost := create(t, f, "finance-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeSemantic, Kind: "internal_cost", Key: "internal_cost", SessionID: "s-fin",
		Content:     "Internal cost for Alice's account: our landed cost on the Lianhua Trading contract is 82% of list price, gross margin about 18%.",
		Sensitivity: client.SensitivityConfidential, Entities: lianhua,
	})
	terms := create(t, f, "finance-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeSemantic, Kind: "payment_terms", Key: "payment_terms", SessionID: "s-fin",
		Content: "Lianhua Trading pays on 30-day terms by bank transfer.", Entities: lianhua,
	})
	// A second version: history must not show either.
	cost2, err := f.Client(t, "finance-bot").Update(t.Context(), cost.ID, 0, client.UpdateRequest{
		Content: ptrTo("Internal cost for Alice's account: landed cost on the Lianhua Trading contract is now 80% of list price, gross margin about 20%."),
	})
	if err != nil {
		t.Fatalf("update the cost note: %v", err)
	}
	secret := []string{cost.ID, cost2.ID}

	readsNothingSecret := func(t *testing.T, who string) {
		t.Helper()
		c := f.Client(t, who)
		for _, id := range secret {
			_, err := c.Get(t.Context(), id)
			wantAPIError(t, who+" get", err, http.StatusNotFound, "not_found")
			_, err = c.History(t.Context(), id)
			wantAPIError(t, who+" history", err, http.StatusNotFound, "not_found")
		}
		for _, q := range []string{"user_id=alice&limit=500", "user_id=alice&status=superseded", "limit=500"} {
			if got := ids(list(t, f, who, q)); slices.ContainsFunc(secret, func(id string) bool { return has(got, id) }) {
				t.Errorf("%s list %s = %v, holds the cost note", who, q, got)
			}
		}
		for _, q := range []client.RecallRequest{
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

	appendTurns(t, f, "alice", "s-alice", client.AppendRequest{UserID: "alice", Turns: []client.Turn{
		{Role: memory.RoleUser, Content: "What margin do you make on my Lianhua orders?"},
	}})

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
			got := recall(t, f, who, client.RecallRequest{UserID: "alice", Query: "What is our internal cost and gross margin on Lianhua Trading?"})
			if !has(recalledIDs(got), cost2.ID) {
				t.Errorf("%s recall = %v, want %s", who, recalledIDs(got), cost2.ID)
			}
			if hist, err := f.Client(t, who).History(t.Context(), cost2.ID); err != nil || len(hist) != 2 {
				t.Errorf("%s history = %v, %v; want both versions", who, ids(hist), err)
			}
		}
	})
	t.Run("the tenant raises and lowers the ceiling", func(t *testing.T) {
		// Policy settings are an admin's route the client has no method
		// for: Do.
		admin := f.Client(t, apptest.Admin)
		put := func(level string) {
			t.Helper()
			var s policyadmin.Settings
			if err := admin.Do(t.Context(), http.MethodPatch, "/v1/policy/settings", map[string]string{"user_max_sensitivity": level}, &s); err != nil || level != "" && s.UserMaxSensitivity != level {
				t.Fatalf("put settings %q: %+v, %v", level, s, err)
			}
		}
		put(client.SensitivityConfidential)
		if got := getMemory(t, f, "alice", cost2.ID); got.ID != cost2.ID {
			t.Errorf("alice get under a confidential ceiling = %s", got.ID)
		}
		if got := ids(list(t, f, "alice", "user_id=alice")); !has(got, cost2.ID) {
			t.Errorf("alice list under a confidential ceiling = %v", got)
		}
		put(client.SensitivityPublic)
		_, err := f.Client(t, "alice").Get(t.Context(), terms.ID)
		wantAPIError(t, "internal under a public ceiling", err, http.StatusNotFound, "not_found")
		put("")
		var s policyadmin.Settings
		if err := admin.Do(t.Context(), http.MethodGet, "/v1/policy/settings", nil, &s); err != nil {
			t.Fatalf("get settings: %v", err)
		}
		if s.UserMaxSensitivity != client.SensitivityInternal {
			t.Errorf("default ceiling = %q, want internal", s.UserMaxSensitivity)
		}
		readsNothingSecret(t, "alice")
	})
	t.Run("the export holds everything, and is audited", func(t *testing.T) {
		own := create(t, f, "alice", client.NewMemory{UserID: "alice", Type: client.TypeProfile, Content: "Alice prefers invoices by e-mail."})
		alice := f.Client(t, "alice")
		if rc, err := alice.Delete(t.Context(), own.ID); err != nil || rc.MemoryID != own.ID {
			t.Fatalf("alice deletes her note: %+v, %v", rc, err)
		}
		// The export is an admin's route the client has no method for: Do.
		err := alice.Do(t.Context(), http.MethodGet, "/v1/users/alice/export", nil, nil)
		wantAPIError(t, "export as the user", err, http.StatusForbidden, "forbidden")

		var doc export.Document
		if err := f.Client(t, apptest.Admin).Do(t.Context(), http.MethodGet, "/v1/users/alice/export", nil, &doc); err != nil {
			t.Fatalf("export: %v", err)
		}
		statuses := map[string]string{}
		for _, m := range doc.Memories {
			statuses[m.ID] = m.Status
		}
		if statuses[cost.ID] != client.StatusSuperseded || statuses[cost2.ID] != client.StatusActive || statuses[terms.ID] != client.StatusActive {
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
		// The user's refused attempt is the decision log's, not the trail's.
		if len(events) != 1 || events[0].Outcome != memory.AuditOK || events[0].Actor != "admin:"+apptest.Admin || events[0].Target != "user:alice" {
			t.Errorf("audit = %+v, want the admin's export alone", events)
		}
	})
	t.Run("the export holds the user's name, even alone", func(t *testing.T) {
		admin := f.Client(t, apptest.Admin)
		if err := admin.Do(t.Context(), http.MethodPost, "/v1/principals", identity.NewPrincipal{Kind: memory.KindUser, ID: "named-only", Name: "Nora Qian"}, nil); err != nil {
			t.Fatalf("register: %v", err)
		}
		var doc export.Document
		if err := admin.Do(t.Context(), http.MethodGet, "/v1/users/named-only/export", nil, &doc); err != nil {
			t.Fatalf("export: %v", err)
		}
		if doc.Name != "Nora Qian" || len(doc.Memories) != 0 {
			t.Errorf("export of a user known only by name = %+v", doc)
		}
		if err := admin.Do(t.Context(), http.MethodDelete, "/v1/users/named-only", nil, nil); err != nil {
			t.Fatalf("erase: %v", err)
		}
		// The erase leaves a content-free tombstone of the user, and no name.
		doc = export.Document{}
		if err := admin.Do(t.Context(), http.MethodGet, "/v1/users/named-only/export", nil, &doc); err != nil {
			t.Fatalf("export after the erase: %v", err)
		}
		if doc.Name != "" || !slices.ContainsFunc(doc.Tombstones, func(ts export.Tombstone) bool { return ts.Kind == export.TombstoneUser }) {
			t.Errorf("export after the erase = %+v, want the user's tombstone and no name", doc)
		}
	})
	t.Run("another tenant's admin finds nothing", func(t *testing.T) {
		other := apptest.Start(t)
		err := other.Client(t, apptest.Admin).Do(t.Context(), http.MethodGet, "/v1/users/alice/export", nil, nil)
		wantAPIError(t, "export from another tenant", err, http.StatusNotFound, "not_found")
	})
}

// "thank you so much, have a nice day" matches "30-day terms" by a word;
// graph expansion must not add that note's neighbours, which share nothing
// with the question but an entity.
func TestRecallChitChatExpandsNothing(t *testing.T) {
	f := apptest.Start(t)
	lianhua := []client.Entity{{ID: "lianhua-trading", Kind: "company", Name: "Hangzhou Lianhua Trading"}}
	for _, m := range []client.NewMemory{
		{Type: client.TypeSemantic, Kind: "payment_terms", Content: "Lianhua Trading pays on 30-day terms by bank transfer."},
		{Type: client.TypeSemantic, Kind: "internal_cost", Sensitivity: client.SensitivityConfidential,
			Content: "Internal cost for Alice's account: our landed cost on the Lianhua Trading contract is 82% of list price, gross margin about 18%."},
		{Type: client.TypeEpisodic, Kind: "order_status", Content: "Order SO-1001 (200 cartons of A4 copy paper) for Lianhua Trading shipped on 15 Sep."},
		{Type: client.TypeEpisodic, Kind: "payment", Content: "Invoice INV-2026-0931 for SO-1001 (18,600 CNY) was paid by Lianhua Trading on 30 Sep."},
		{Type: client.TypeSemantic, Kind: "budget", Content: "Alice raised her Q4 procurement budget to 150k CNY."},
	} {
		m.UserID, m.Entities = "alice", lianhua
		create(t, f, "finance-bot", m)
	}
	for _, who := range []string{apptest.Admin, "finance-bot", "alice"} {
		got := recall(t, f, who, client.RecallRequest{UserID: "alice", Query: "thank you so much, have a nice day", K: 20})
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
	types := []string{client.TypeEpisodic, client.TypeSemantic, client.TypeProcedural, client.TypeProfile}
	var written []client.Memory
	for i := range 24 {
		who := agents[rng.IntN(len(agents))]
		written = append(written, create(t, f, who, client.NewMemory{
			UserID: apptest.Users[rng.IntN(len(apptest.Users))], Type: types[rng.IntN(len(types))],
			Kind:        []string{"order", "note", "internal_cost"}[rng.IntN(3)],
			Sensitivity: memory.Sensitivities[rng.IntN(len(memory.Sensitivities))],
			Content:     fmt.Sprintf("Lianhua Trading ledger entry %d: shipment of copy paper, batch %d", i, rng.IntN(1000)),
		}))
	}
	for range rng.IntN(3) {
		grantee := rng.IntN(3) // an agent is never its own source
		g := client.NewGrant{
			Grantee: agents[grantee], Source: []string{"*", agents[(grantee+1+rng.IntN(2))%3]}[rng.IntN(2)],
			Types: []string{types[rng.IntN(4)], types[rng.IntN(4)]}, MaxSensitivity: memory.Sensitivities[rng.IntN(4)],
		}
		if _, err := f.Client(t, apptest.Admin).CreateGrant(ctx, g); err != nil {
			t.Fatalf("grant: %v", err)
		}
	}
	ceiling := []string{"", client.SensitivityPublic, client.SensitivityConfidential}[rng.IntN(3)]
	if err := f.Client(t, apptest.Admin).Do(ctx, http.MethodPatch, "/v1/policy/settings", policyadmin.Settings{UserMaxSensitivity: ceiling}, nil); err != nil {
		t.Fatalf("settings: %v", err)
	}
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
		c := f.Client(t, who)
		for _, m := range written {
			res := memory.Resource{Tenant: m.Tenant, ID: m.ID, UserID: m.UserID, AgentID: m.AgentID,
				Type: m.Type, Kind: m.Kind, Sensitivity: m.Sensitivity, Status: m.Status}
			d, err := f.App.Policy.Decide(ctx, p, memory.ActionRead, res, time.Now().UTC())
			if err != nil {
				t.Fatal(err)
			}
			may[m.ID] = d.Allow
			if d.Allow {
				allowed++
			} else {
				denied++
			}
			_, getErr := c.Get(ctx, m.ID)
			_, histErr := c.History(ctx, m.ID)
			for _, err := range []error{getErr, histErr} {
				if d.Allow && err != nil || !d.Allow && client.Code(err) != "not_found" {
					t.Errorf("%s get/history %+v: %v / %v, want allowed %v", name, res, getErr, histErr, d.Allow)
					break
				}
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
			for _, id := range recalledIDs(recall(t, f, who, client.RecallRequest{UserID: u, Query: "Lianhua Trading ledger entry copy paper shipment", K: 50})) {
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
