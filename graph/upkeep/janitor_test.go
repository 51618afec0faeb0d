package upkeep

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/graphtest"
	"mneme/graph/neo"
	"mneme/internal/testenv"
	"mneme/janitor"
	"mneme/memory"
)

// TestJanitorOnNeo4j runs the janitor on a real graph with a clock the test
// moves: a dry run changes nothing, then TTL expiry, archive after disuse
// and the per-user cap each take the memories they should.
func TestJanitorOnNeo4j(t *testing.T) {
	g, s := testStores(t)
	tenant := testenv.Tenant(t)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mem := func(user, typ, content string, importance float64, created time.Time) memory.Memory {
		m := newMemory(tenant, user, content)
		m.Type, m.Importance, m.CreatedAt, m.UpdatedAt, m.ValidFrom = typ, importance, created, created, created
		return m
	}
	oldEpisode := mem("u1", memory.TypeEpisodic, "visited the Lyon shop", 0.9, t0.Add(-400*janitor.Day))
	oldRule := mem("u1", memory.TypeSemantic, "prefers invoices by mail", 0.9, t0.Add(-400*janitor.Day))
	oldRule.UpdatedAt = t0.Add(-10 * janitor.Day) // changed recently: in use
	stale := mem("u1", memory.TypeProfile, "likes jazz", 0.9, t0.Add(-100*janitor.Day))
	// u2 has four fresh active memories; the cap of 3 archives the one of
	// least value (lowest importance here, all else equal).
	var fresh []memory.Memory
	for i, imp := range []float64{0.8, 0.2, 0.6, 0.9} {
		fresh = append(fresh, mem("u2", memory.TypeSemantic, "fact "+string(rune('a'+i)), imp, t0.Add(-time.Duration(i+1)*time.Hour)))
	}
	// Imported yesterday, its fact 200 days old: written in lately, so in
	// use however old the fact.
	imported := mem("u1", memory.TypeProfile, "prefers rail freight", 0.9, t0.Add(-200*janitor.Day))
	imported.AgentID = "user:u1" // said by the user: capped apart
	all := append([]memory.Memory{oldEpisode, oldRule, stale, imported}, fresh...)
	if _, err := g.CreateMemories(graphtest.Ctx(t), all); err != nil {
		t.Fatal(err)
	}
	// The store stamps when it took each memory in, by Neo4j's clock.
	live, err := s.LiveMemories(graphtest.Ctx(t), tenant)
	if err != nil || len(live) != len(all) {
		t.Fatalf("LiveMemories: %d, %v", len(live), err)
	}
	for _, u := range live {
		if time.Since(u.WrittenAt) > time.Hour || time.Since(u.WrittenAt) < -time.Hour {
			t.Errorf("memory %s written at %v, want about now", u.ID, u.WrittenAt)
		}
		if u.SaidByUser != (u.ID == imported.ID) {
			t.Errorf("memory %s said by the user: %v", u.ID, u.SaidByUser)
		}
	}
	// On this test's clock
	// the memories were written when their facts were, the import yesterday.
	err = g.Runner().Write(graphtest.Ctx(t), func(tx neo4j.ManagedTransaction) error {
		return neo.Exec(graphtest.Ctx(t), tx, `MATCH (m:Memory {tenant: $tenant})
SET m.written_at = CASE WHEN m.id = $imported THEN $yesterday ELSE m.created_at END`,
			map[string]any{"tenant": tenant, "imported": imported.ID, "yesterday": t0.Add(-janitor.Day)})
	})
	if err != nil {
		t.Fatal(err)
	}
	now := t0
	j, err := janitor.New(janitor.Options{
		Store: s, Now: func() time.Time { return now },
		Config: janitor.Config{
			TTL:          map[string]time.Duration{memory.TypeEpisodic: 365 * janitor.Day},
			ArchiveAfter: 90 * janitor.Day, Cap: 3, HalfLife: 30 * janitor.Day,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	statuses := func() map[string]string {
		out := map[string]string{}
		for _, m := range all {
			got, err := g.GetMemory(graphtest.Ctx(t), tenant, m.ID)
			if err != nil {
				t.Fatal(err)
			}
			out[m.Content] = got.Status
		}
		return out
	}
	before := statuses()

	dry, err := j.Sweep(graphtest.Ctx(t), tenant, true)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(before, statuses()); d != "" {
		t.Fatalf("a dry run changed statuses (-before +after):\n%s", d)
	}
	wet, err := j.Sweep(graphtest.Ctx(t), tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []memory.SweepReport{dry, wet} {
		if r.Expired != 1 || r.ArchivedUnused != 1 || r.ArchivedOverCap != 1 || r.Scanned != len(all) || len(r.Changes) != 3 {
			t.Errorf("report (dry run %v) = %+v, want 1 expired, 1 unused, 1 over cap of %d scanned", r.DryRun, r, len(all))
		}
	}
	if d := cmp.Diff(dry.Changes, wet.Changes); d != "" {
		t.Errorf("the dry run promised other changes than the run made (-dry +run):\n%s", d)
	}
	want := map[string]string{
		"visited the Lyon shop": memory.StatusExpired, "prefers invoices by mail": memory.StatusActive, "prefers rail freight": memory.StatusActive,
		"likes jazz": memory.StatusArchived, "fact a": memory.StatusActive, "fact b": memory.StatusArchived,
		"fact c": memory.StatusActive, "fact d": memory.StatusActive,
	}
	if d := cmp.Diff(want, statuses()); d != "" {
		t.Errorf("statuses after the sweep (-want +got):\n%s", d)
	}
	expired, _ := g.GetMemory(graphtest.Ctx(t), tenant, oldEpisode.ID)
	if expired.ValidTo == nil || !expired.ValidTo.Equal(now) {
		t.Errorf("expired memory valid_to = %v, want %v", expired.ValidTo, now)
	}

	// Time passes: 91 more days without use archive the rule too; nothing
	// is changed twice.
	now = t0.Add(81 * janitor.Day)
	r, err := j.Sweep(graphtest.Ctx(t), tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range r.Changes {
		ids = append(ids, c.MemoryID)
	}
	if !slices.Contains(ids, oldRule.ID) || r.Expired != 0 {
		t.Errorf("second sweep: %+v, want the rule archived as unused", r)
	}
	tenants, err := s.Tenants(graphtest.Ctx(t))
	if err != nil || !slices.Contains(tenants, tenant) {
		t.Errorf("Tenants() lacks %s (err %v)", tenant, err)
	}
}

// ActiveUsers names users with active memories of their own, in the tenant
// asked about only: not one whose memories are all archived, nor the
// holder of shared knowledge, nor a user of another tenant.
func TestActiveUsers(t *testing.T) {
	g, s := testStores(t)
	tenant, other := testenv.Tenant(t), testenv.Tenant(t)
	archived := newMemory(tenant, "u-archived", "an old note")
	archived.Status = memory.StatusArchived
	shared := newMemory(tenant, "", "the returns rule")
	shared.Scope = memory.ScopeTenant
	all := []memory.Memory{newMemory(tenant, "u1", "likes tea"), newMemory(tenant, "u1", "lives in Lyon"), newMemory(tenant, "u2", "prefers mail"),
		archived, shared}
	for _, batch := range [][]memory.Memory{all, {newMemory(other, "u9", "from elsewhere")}} {
		if _, err := g.CreateMemories(graphtest.Ctx(t), batch); err != nil {
			t.Fatal(err)
		}
	}
	users, err := s.ActiveUsers(graphtest.Ctx(t), tenant, 10)
	slices.Sort(users)
	if err != nil || !slices.Equal(users, []string{"u1", "u2"}) {
		t.Errorf("ActiveUsers = %v, %v; want [u1 u2]", users, err)
	}
	if users, err := s.ActiveUsers(graphtest.Ctx(t), tenant, 1); err != nil || len(users) != 1 {
		t.Errorf("ActiveUsers(most 1) = %v, %v; want one user", users, err)
	}
}

// A candidate the janitor expires unconfirmed held at no time: as_of within
// its lifetime does not find it, while an active memory expired beside it is
// found.
func TestExpiredCandidateIsNotFoundAsOf(t *testing.T) {
	g, s := testStores(t)
	tenant := testenv.Tenant(t)
	fact := newMemory(tenant, "u1", "orders from Lyon ship by rail freight")
	guess := newMemory(tenant, "u1", "orders from Lyon probably ship by river barge")
	guess.Status = memory.StatusCandidate
	if _, err := g.CreateMemories(graphtest.Ctx(t), []memory.Memory{fact, guess}); err != nil {
		t.Fatal(err)
	}
	ended := fact.ValidFrom.Add(30 * janitor.Day)
	if n, err := s.Transition(graphtest.Ctx(t), tenant, []string{fact.ID, guess.ID}, memory.StatusExpired, memory.ReasonTTL, ended); err != nil || n != 2 {
		t.Fatalf("Transition: %d, %v; want 2 expired", n, err)
	}
	whole := memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{}}}
	q := memory.SearchQuery{UserID: "u1", Text: "Lyon ship", Now: time.Now(), Limit: 10, AsOf: fact.ValidFrom.Add(janitor.Day)}
	hits, err := g.SearchFullText(graphtest.Ctx(t), whole, q)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.Memory.ID)
	}
	if !slices.Equal(got, []string{fact.ID}) {
		t.Errorf("as_of while both were live = %v, want only the active one %s (candidate %s)", got, fact.ID, guess.ID)
	}
}
