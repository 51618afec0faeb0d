package graph

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/internal/testenv"
	"mneme/memory"
)

// The projections that leave the embedding out name the properties they
// return (memoryFields). A property missing from that list would come back
// empty from listings and recall while a read by id returns it, so every
// field is set here and each projection is compared with the read.
func TestProjectionsWithoutEmbeddingReturnEveryField(t *testing.T) {
	s := testStore(t)
	ctx := testCtx(t)
	tenant := testenv.Tenant(t)
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	until := at.Add(365 * 24 * time.Hour * 10)
	vec := make([]float32, testenv.EmbeddingDimension)
	vec[0], vec[1] = 0.6, 0.8
	full := func(id, user, scope, scopeID string) memory.Memory {
		return memory.Memory{
			ID: id, Tenant: tenant, UserID: user, AgentID: "agent-a", SessionID: "sess-1",
			Type: memory.TypeSemantic, Kind: "budget", Key: "budget", Content: "the budget is 150k",
			Status: memory.StatusActive, Sensitivity: memory.SensitivityInternal, Importance: 0.7, Confidence: 0.9,
			Source: "import", ValidFrom: at, ValidTo: &until, CreatedAt: at, UpdatedAt: at.Add(time.Minute), Version: 1,
			Scope: scope, ScopeID: scopeID, IdempotencyKey: "idem-" + id, EvidenceCount: 2,
			EmbeddingModel: "test-model", EmbeddingDim: len(vec), Embedding: vec,
			Entities: []memory.Entity{{ID: "amount:150k", Kind: "amount", Name: "150k", Aliases: []string{"150 000"}}},
		}
	}
	own := full(memory.NewID("mem"), "u1", "", "")
	team := full(memory.NewID("mem"), "", memory.ScopeTeam, "support")
	team.SessionID = ""
	if _, err := s.CreateMemories(ctx, []memory.Memory{own, team}); err != nil {
		t.Fatal(err)
	}
	if err := s.TouchMemories(ctx, tenant, []string{own.ID, team.ID}, at.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	whole := memory.Scope{Tenant: tenant, Clauses: []memory.Clause{{}}}
	for _, want := range []memory.Memory{own, team} {
		read, err := s.GetMemory(ctx, tenant, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if read.AccessCount != 1 || read.LastAccessedAt == nil || read.ValidTo == nil || read.IdempotencyKey == "" || len(read.Embedding) == 0 {
			t.Fatalf("a read by id lost fields it was written with: %+v", read)
		}
		read.Embedding = nil
		listed, err := s.ListMemories(ctx, whole, memory.ListQuery{UserID: want.UserID, Shared: want.Scope != "", Limit: 10})
		if err != nil || len(listed) != 1 {
			t.Fatalf("listing = %d memories, %v; want 1", len(listed), err)
		}
		q := memory.SearchQuery{UserID: want.UserID, Shared: want.Scope != "", Embedding: vec, Limit: 5, Now: at}
		hits, err := s.SearchVector(ctx, whole, q)
		if err != nil || len(hits) != 1 {
			t.Fatalf("search = %d hits, %v; want 1", len(hits), err)
		}
		q.Embeddings = true
		withVec, err := s.SearchVector(ctx, whole, q)
		if err != nil || len(withVec) != 1 || len(withVec[0].Memory.Embedding) != len(vec) {
			t.Fatalf("search asking for embeddings = %+v, %v; want one hit with its embedding", withVec, err)
		}
		for name, got := range map[string]memory.Memory{"listing": listed[0], "recall search": hits[0].Memory} {
			if diff := cmp.Diff(read, got); diff != "" {
				t.Errorf("%s of %s differs from the read by id (-read +%s):\n%s", name, want.ID, name, diff)
			}
		}
	}
}
