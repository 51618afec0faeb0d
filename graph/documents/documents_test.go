package documents

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"mneme/documents"
	"mneme/graph"
	"mneme/graph/graphtest"
	"mneme/graph/tally"
	"mneme/internal/testenv"
	"mneme/knowledge"
	"mneme/memory"
)

var schemaOnce struct {
	sync.Once
	err error
}

func testStores(t *testing.T) (*graph.Store, *Store) {
	t.Helper()
	g := graph.New(testenv.Neo4j(t), graph.Options{Database: testenv.Neo4jDatabase()})
	schemaOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		schemaOnce.err = g.EnsureSchema(ctx, testenv.EmbeddingDimension)
		if schemaOnce.err == nil {
			schemaOnce.err = New(g.Runner()).EnsureSchema(ctx)
		}
	})
	if schemaOnce.err != nil {
		t.Fatalf("EnsureSchema: %v", schemaOnce.err)
	}
	return g, New(g.Runner())
}

// sectionMemories stores n memories of a tenant, as sections of a document
// would be, and returns where each sits.
func sectionMemories(t *testing.T, g *graph.Store, tenant, doc string, n int) []documents.Placed {
	t.Helper()
	at := time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)
	ms := make([]memory.Memory, n)
	placed := make([]documents.Placed, n)
	for i := range ms {
		key := fmt.Sprintf("kb:%s:%02d", doc, i)
		ms[i] = memory.Memory{
			ID: memory.NewID("mem"), Tenant: tenant, UserID: "reader", AgentID: "kb", Type: memory.TypeSemantic,
			Kind: documents.KindSection, Key: key, Content: fmt.Sprintf("Section %d says rule %d holds.", i, i),
			Status: memory.StatusActive, Sensitivity: memory.SensitivityInternal, Importance: 0.5, Confidence: 1,
			ValidFrom: at, CreatedAt: at, UpdatedAt: at, Version: 1,
		}
		placed[i] = documents.Placed{MemoryID: ms[i].ID, Key: key, Digest: fmt.Sprintf("d%d", i), Headings: []string{"Guide", fmt.Sprint(i)}, Position: i, Created: true}
	}
	if _, err := g.CreateMemories(graphtest.Ctx(t), ms); err != nil {
		t.Fatalf("create memories: %v", err)
	}
	return placed
}

func TestDocumentRoundTrip(t *testing.T) {
	g, s := testStores(t)
	tenant, other := testenv.Tenant(t), testenv.Tenant(t)+"-other"
	ctx := graphtest.Ctx(t)
	placed := sectionMemories(t, g, tenant, "guide", 4)
	at := time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)
	info := documents.Info{ID: "guide", Title: "Guide", Format: "markdown", Sections: 4, ImportedAt: at, Scope: memory.ScopeTeam, ScopeID: "sales"}
	if _, err := s.Document(ctx, tenant, "guide"); !errors.Is(err, memory.ErrNotFound) {
		t.Fatalf("Document before import: %v, want ErrNotFound", err)
	}
	if err := s.Record(ctx, tenant, info, placed); err != nil {
		t.Fatalf("Record: %v", err)
	}
	got, err := s.Document(ctx, tenant, "guide")
	if err != nil || got.Title != "Guide" || got.Sections != 4 || got.Scope != memory.ScopeTeam || got.ScopeID != "sales" || !got.ImportedAt.Equal(at) {
		t.Fatalf("Document = %+v, %v; want %+v", got, err, info)
	}
	// Another tenant sees no document and no section.
	if _, err := s.Document(ctx, other, "guide"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("other tenant's Document: %v, want ErrNotFound", err)
	}
	if st, err := s.Sections(ctx, other, "guide"); err != nil || len(st) != 0 {
		t.Errorf("other tenant's Sections = %v, %v; want none", st, err)
	}
	if n, err := s.Retire(ctx, other, "guide", nil, at); err != nil || n != 0 {
		t.Errorf("other tenant's Retire = %d, %v; want 0", n, err)
	}

	stored, err := s.Sections(ctx, tenant, "guide")
	if err != nil {
		t.Fatal(err)
	}
	want := make([]knowledge.Stored, len(placed))
	for i, p := range placed {
		want[i] = knowledge.Stored{Key: p.Key, Digest: p.Digest, ID: p.MemoryID}
	}
	if !slices.Equal(stored, want) {
		t.Fatalf("Sections = %v, want %v", stored, want)
	}

	// Retiring one archives it with valid_to, and it leaves the sections.
	retireAt := at.Add(time.Hour)
	if n, err := s.Retire(ctx, tenant, "guide", []string{placed[1].MemoryID}, retireAt); err != nil || n != 1 {
		t.Fatalf("Retire one = %d, %v; want 1", n, err)
	}
	m, err := g.GetMemory(ctx, tenant, placed[1].MemoryID)
	if err != nil || m.Status != memory.StatusArchived || m.ValidTo == nil || !m.ValidTo.Equal(retireAt) {
		t.Fatalf("retired memory = %+v, %v; want archived, valid to %s", m, err, retireAt)
	}
	if stored, _ := s.Sections(ctx, tenant, "guide"); len(stored) != 3 {
		t.Errorf("Sections after retiring one: %d, want 3", len(stored))
	}
	// Retiring it again archives nothing more.
	if n, err := s.Retire(ctx, tenant, "guide", []string{placed[1].MemoryID}, retireAt); err != nil || n != 0 {
		t.Errorf("Retire again = %d, %v; want 0", n, err)
	}

	if ds, err := s.List(ctx, tenant); err != nil || len(ds) != 1 || ds[0].ID != "guide" || ds[0].Sections != 3 {
		t.Fatalf("List = %v, %v; want the guide with its 3 sections in force", ds, err)
	}
	// A section whose memory is deleted is no longer counted.
	if err := g.DeleteMemory(ctx, tenant, placed[2].MemoryID, "admin", "test"); err != nil {
		t.Fatal(err)
	}
	if ds, err := s.List(ctx, tenant); err != nil || len(ds) != 1 || ds[0].Sections != 2 {
		t.Fatalf("List after deleting a section's memory = %v, %v; want the guide with 2 sections", ds, err)
	}
	// While an import holds the document, removing it removes nothing;
	// once the claim is let go, it does.
	if ok, err := s.Claim(ctx, tenant, "guide", memory.ScopeTeam, "sales", false, retireAt, retireAt.Add(documents.ClaimFor)); err != nil || !ok {
		t.Fatalf("Claim = %v, %v", ok, err)
	}
	if n, err := s.Remove(ctx, tenant, "guide", retireAt); !errors.Is(err, memory.ErrConflict) || n != 0 {
		t.Fatalf("Remove during an import = %d, %v; want ErrConflict", n, err)
	}
	if stored, _ := s.Sections(ctx, tenant, "guide"); len(stored) != 2 {
		t.Errorf("Sections after a refused removal: %d, want 2", len(stored))
	}
	if err := s.Release(ctx, tenant, "guide"); err != nil {
		t.Fatal(err)
	}
	// Removing: every section archived, the document off the list, its
	// history still linked.
	if n, err := s.Remove(ctx, tenant, "guide", retireAt); err != nil || n != 2 {
		t.Fatalf("Remove = %d, %v; want 2 archived", n, err)
	}
	// Archiving kept the tallies exact: a reconciliation mends nothing.
	if r, err := tally.New(g.Runner()).Reconcile(ctx, tenant); err != nil || r.Mended != 0 {
		t.Errorf("Reconcile after Remove = %+v, %v; want nothing mended", r, err)
	}
	if ds, err := s.List(ctx, tenant); err != nil || len(ds) != 0 {
		t.Errorf("List after Remove = %v, %v; want none", ds, err)
	}
	if _, err := s.Document(ctx, tenant, "guide"); err != nil {
		t.Errorf("a removed document is still known: %v", err)
	}
	// Removing it again finds nothing to retire: not found, as an id
	// never imported; while an import holds it, busy comes first.
	if n, err := s.Remove(ctx, tenant, "guide", retireAt.Add(time.Second)); !errors.Is(err, memory.ErrNotFound) || n != 0 {
		t.Errorf("Remove of a removed document = %d, %v; want ErrNotFound", n, err)
	}
	if ok, err := s.Claim(ctx, tenant, "guide", memory.ScopeTeam, "sales", false, retireAt, retireAt.Add(documents.ClaimFor)); err != nil || !ok {
		t.Fatalf("Claim of a removed document = %v, %v", ok, err)
	}
	if _, err := s.Remove(ctx, tenant, "guide", retireAt.Add(time.Second)); !errors.Is(err, memory.ErrConflict) {
		t.Errorf("Remove of a removed document an import holds: %v, want ErrConflict", err)
	}
	if err := s.Release(ctx, tenant, "guide"); err != nil {
		t.Fatal(err)
	}
	for i, p := range placed {
		if i == 2 { // deleted
			continue
		}
		if m, err := g.GetMemory(ctx, tenant, p.MemoryID); err != nil || m.Status != memory.StatusArchived {
			t.Errorf("memory %s after Remove: %+v, %v; want archived, kept", p.MemoryID, m.Status, err)
		}
	}
	// Importing again brings the document back to the list.
	info.ImportedAt = retireAt.Add(time.Hour)
	if err := s.Record(ctx, tenant, info, nil); err != nil {
		t.Fatal(err)
	}
	if ds, err := s.List(ctx, tenant); err != nil || len(ds) != 1 {
		t.Errorf("List after re-import = %v, %v; want the guide", ds, err)
	}
}

// TestClaimSerialisesScopes: of two imports of a document (new, or one
// imported before and now empty) into two scopes at once, exactly one
// takes it; imports into one scope both go on;
// once the first import has let go and holds no section in force, another
// scope may take the document; a document with sections in force of one
// scope never goes to another.
func TestClaimSerialisesScopes(t *testing.T) {
	g, s := testStores(t)
	ctx := graphtest.Ctx(t)
	tenant := testenv.Tenant(t)
	now := time.Now().UTC()
	later := now.Add(documents.ClaimFor)
	for round := range 24 {
		id := fmt.Sprintf("race-%d", round)
		if round%2 == 1 {
			// A document imported before, let go and empty.
			if ok, err := s.Claim(ctx, tenant, id, memory.ScopeTenant, "", false, now, later); err != nil || !ok {
				t.Fatalf("first claim: %v %v", ok, err)
			}
			if err := s.Record(ctx, tenant, documents.Info{ID: id, Scope: memory.ScopeTenant, ImportedAt: now}, nil); err != nil {
				t.Fatal(err)
			}
		}
		var wins [2]bool
		var wg sync.WaitGroup
		for i, team := range []string{"sales", "support"} {
			wg.Go(func() {
				ok, err := s.Claim(ctx, tenant, id, memory.ScopeTeam, team, false, now, later)
				if err != nil {
					t.Errorf("claim: %v", err)
				}
				wins[i] = ok
			})
		}
		wg.Wait()
		if wins[0] == wins[1] {
			t.Fatalf("round %d: claims of two scopes took %v, want exactly one", round, wins)
		}
	}
	// One scope: both go on, until one is about to write: another import
	// then waits for it to end (the last Record or a Release), however
	// many concurrent imports ask.
	for range 2 {
		if ok, err := s.Claim(ctx, tenant, "shared", memory.ScopeTenant, "", false, now, later); err != nil || !ok {
			t.Fatalf("a claim of the same scope: %v %v", ok, err)
		}
	}
	errs := make([]error, 4)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { _, errs[i] = s.Claim(ctx, tenant, "runs", memory.ScopeTenant, "", true, now, later) })
	}
	wg.Wait()
	if n := len(errs) - countErr(errs, documents.ErrImportRunning); n != 1 {
		t.Errorf("concurrent imports about to write: %v, want one to run and the others ErrImportRunning", errs)
	}
	if ok, err := s.Claim(ctx, tenant, "runs", memory.ScopeTenant, "", false, now, later); err != nil || !ok {
		t.Errorf("a queued import's claim while one runs: %v %v, want taken", ok, err)
	}
	if err := s.Release(ctx, tenant, "runs"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, tenant, "runs", memory.ScopeTenant, "", true, now, later); err != nil {
		t.Errorf("an import after the one running let go: %v", err)
	}
	if err := s.Record(ctx, tenant, documents.Info{ID: "runs", Scope: memory.ScopeTenant, ImportedAt: now}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, tenant, "runs", memory.ScopeTenant, "", true, now, later); err != nil {
		t.Errorf("an import after the one running ended: %v", err)
	}
	if ok, _ := s.Claim(ctx, tenant, "shared", memory.ScopeTeam, "sales", false, now, later); ok {
		t.Error("another scope took a document under a live claim")
	}
	// Let go, nothing in force: another scope may take it.
	info := documents.Info{ID: "shared", Scope: memory.ScopeTenant, ImportedAt: now}
	if err := s.Record(ctx, tenant, info, nil); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Claim(ctx, tenant, "shared", memory.ScopeTeam, "sales", false, now, later); err != nil || !ok {
		t.Errorf("a claim after the import let go of an empty document: %v %v", ok, err)
	}
	// Sections in force keep the document in its scope, claimed or not.
	placed := sectionMemories(t, g, tenant, "held", 2)
	if ok, err := s.Claim(ctx, tenant, "held", memory.ScopeTenant, "", false, now, later); err != nil || !ok {
		t.Fatalf("first claim: %v %v", ok, err)
	}
	if err := s.Record(ctx, tenant, documents.Info{ID: "held", Scope: memory.ScopeTenant, ImportedAt: now, Sections: 2}, placed); err != nil {
		t.Fatal(err)
	}
	if err := s.Record(ctx, tenant, documents.Info{ID: "held", Scope: memory.ScopeTenant, ImportedAt: now, Sections: 2}, nil); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Claim(ctx, tenant, "held", memory.ScopeTeam, "sales", false, now.Add(time.Hour), now.Add(2*time.Hour)); ok {
		t.Error("another scope took a document whose sections are in force")
	}
}

// countErr counts the errors of errs that are target.
func countErr(errs []error, target error) int {
	n := 0
	for _, err := range errs {
		if errors.Is(err, target) {
			n++
		}
	}
	return n
}
