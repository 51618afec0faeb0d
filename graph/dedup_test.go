package graph

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"mneme/embedding"
	"mneme/facts"
	"mneme/internal/testenv"
	"mneme/memory"
)

// dedupWrite is a deduplicated write of ms by a writer who reads the whole
// tenant, with a threshold only the same fact reaches: a memory repeats a
// stored one with the same content.
func dedupWrite(tenant string, ms ...memory.Memory) memory.DedupWrite {
	return memory.DedupWrite{
		Memories: ms,
		Scopes:   []memory.Scope{{Tenant: tenant, Clauses: []memory.Clause{{}}}},
		ScopeOf:  make([]int, len(ms)),
		Rules:    memory.WriteRules{Dedup: true, DuplicateThreshold: 1.01},
	}
}

// embedded gives m an embedding, as the write pipeline does before a
// deduplicated write.
func embedded(t *testing.T, m memory.Memory) memory.Memory {
	t.Helper()
	vs, err := embedding.NewBuiltin(testenv.EmbeddingDimension).Embed(context.Background(), []string{m.Content})
	if err != nil {
		t.Fatal(err)
	}
	m.Embedding = vs[0]
	return m
}

// TestDedupFindsRepeatsThroughTheirDigests: the dedup search reaches stored
// memories through the digests of facts.Signature alone, so memories
// stored without them are given them by EnsureSchema and are then found.
func TestDedupFindsRepeatsThroughTheirDigests(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	stored := []memory.Memory{
		embedded(t, newMemory(tenant, "u1", "Prefers delivery by courier for order 4711.")),
		embedded(t, newMemory(tenant, "u1", "Works from home on Fridays.")),
	}
	if _, err := s.CreateMemories(testCtx(t), stored); err != nil {
		t.Fatal(err)
	}
	// As stored before the digests existed.
	query(t, `MATCH (m:Memory {tenant: $tenant}) REMOVE m.fact_text, m.fact_numbers`, map[string]any{"tenant": tenant})
	if err := s.EnsureSchema(testCtx(t), testenv.EmbeddingDimension); err != nil {
		t.Fatalf("EnsureSchema: %v", err)
	}
	rows := query(t, `MATCH (m:Memory {tenant: $tenant}) RETURN m.id AS id, m.content AS content, m.fact_text AS text, m.fact_numbers AS numbers`,
		map[string]any{"tenant": tenant})
	if len(rows) != len(stored) {
		t.Fatalf("%d memories stored, want %d", len(rows), len(stored))
	}
	for _, r := range rows {
		text, numbers := facts.Signature(str(r["content"]))
		if str(r["text"]) != text || str(r["numbers"]) != numbers {
			t.Errorf("memory %s has digests (%v, %v), want (%s, %s)", r["id"], r["text"], r["numbers"], text, numbers)
		}
	}

	tests := []struct {
		name, content string
		want          string
	}{
		{"same text and numbers", "Prefers delivery by courier for order 4711.", memory.OutcomeReinforced},
		{"same text, no numbers", "Works from home on Fridays.", memory.OutcomeReinforced},
		{"neither digest shared", "Prefers delivery by courier for order 4712.", memory.OutcomeCreated},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := embedded(t, newMemory(tenant, "u1", tc.content))
			written, err := s.WriteDeduped(testCtx(t), dedupWrite(tenant, m))
			if err != nil {
				t.Fatal(err)
			}
			if got := written[0].Outcome; got != tc.want {
				t.Errorf("outcome %q, want %q", got, tc.want)
			}
		})
	}
}

// WarmWrite runs a write's queries and stores nothing: the same write
// afterwards creates every memory, as if the warm-up never happened.
func TestWarmWriteStoresNothing(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	var ms []memory.Memory
	for i, content := range []string{"Budget is 100k for order 4711.", "Works from home on Fridays.", "Budget is 150k."} {
		m := embedded(t, newMemory(tenant, "u1", content))
		m.IdempotencyKey, m.SessionID, m.QueueSeq = fmt.Sprintf("warm-%d", i), "sess-1", 1
		if i != 1 {
			m.Key = "budget"
		}
		m.Entities = []memory.Entity{{ID: "order:4711", Kind: "order", Name: "4711"}}
		ms = append(ms, m)
	}
	if err := s.WarmWrite(testCtx(t), dedupWrite(tenant, ms...)); err != nil {
		t.Fatalf("WarmWrite: %v", err)
	}
	if rows := query(t, `MATCH (n {tenant: $tenant}) RETURN count(n) AS n`, map[string]any{"tenant": tenant}); integer(rows[0]["n"]) != 0 {
		t.Fatalf("a warm-up left %d nodes in the tenant", integer(rows[0]["n"]))
	}
	written, err := s.WriteDeduped(testCtx(t), dedupWrite(tenant, ms...))
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range written {
		if w.Outcome != memory.OutcomeCreated {
			t.Errorf("memory %d: outcome %q after a warm-up, want created", i, w.Outcome)
		}
	}
	if err := s.WarmWrite(testCtx(t), memory.DedupWrite{Memories: ms}); err == nil {
		t.Error("WarmWrite without rules or scopes: no error")
	}
}

// TestProbeGroupsSeekNumbersOnlyWhenTheyCanMerge: above a duplicate
// threshold of 1 only the same text merges, so a probe seeks no memories
// by their numbers: every number-free memory of a user shares that digest,
// and the seek read them all on every write.
func TestProbeGroupsSeekNumbersOnlyWhenTheyCanMerge(t *testing.T) {
	m := memory.Memory{UserID: "u1", Type: memory.TypeEpisodic, Content: "we talked about the garden", Embedding: []float32{1, 0}}
	scopes := []memory.Scope{{Tenant: "t1", Clauses: []memory.Clause{{UserID: "u1"}}}}
	for _, tt := range []struct {
		threshold float64
		seek      bool
	}{{1.01, false}, {1, true}, {0.9, true}} {
		g := probeGroups("t1", []memory.Memory{m}, scopes, []int{0}, tt.threshold)
		if len(g) != 1 || len(g[0].probes) != 1 {
			t.Fatalf("threshold %v: groups %+v", tt.threshold, g)
		}
		p := g[0].probes[0]
		if _, numbers := facts.Signature(m.Content); (p["fact_numbers"] == numbers) != tt.seek || p["fact_text"] == nil {
			t.Errorf("threshold %v: probe %v, want a seek on the numbers %v", tt.threshold, p, tt.seek)
		}
	}
}

// TestRetryAfterDeleteWritesNothing: a principal's retry of a write whose
// memory was deleted since, or erased, writes nothing (outcome deleted),
// whether the key created the memory or repeated it; another writer's key
// is its own. Hashes are all that is kept of the key and its writer.
func TestRetryAfterDeleteWritesNothing(t *testing.T) {
	s := testStore(t)
	ctx := testCtx(t)
	tenant := testenv.Tenant(t)
	write := func(content, key string, agent ...string) memory.Written {
		t.Helper()
		m := embedded(t, newMemory(tenant, "u1", content))
		m.IdempotencyKey = key
		if len(agent) > 0 {
			m.AgentID = agent[0]
		}
		written, err := s.WriteDeduped(ctx, dedupWrite(tenant, m))
		if err != nil || len(written) != 1 {
			t.Fatalf("write %q: %v, %d results", content, err, len(written))
		}
		return written[0]
	}
	created := write("Carol asked for 12 crates of napkins.", "key-create")
	if again := write("Carol asked for 12 crates of napkins.", "key-repeat"); again.Outcome != memory.OutcomeReinforced {
		t.Fatalf("second write: %s, want reinforced", again.Outcome)
	}
	if err := s.DeleteMemory(ctx, tenant, created.Memory.ID, "user:u1", "forget"); err != nil {
		t.Fatal(err)
	}
	erased := write("Bob's pallets go to dock 4.", "key-erase")
	if _, err := s.EraseMemories(ctx, tenant, []string{erased.Memory.ID}, nil, memory.Tombstone{At: time.Now(), By: "user:u1", Reason: "forget"}); err != nil {
		t.Fatal(err)
	}
	// Another memory its writer sends under the key that created a deleted
	// or erased one, or that repeated it, is refused, as before the delete,
	// and writes nothing.
	for _, tc := range []struct{ content, key string }{
		{"Carol asked for 20 crates of napkins.", "key-create"},
		{"Bob's pallets go to dock 5.", "key-erase"},
		{"Carol asked for napkins again.", "key-repeat"},
	} {
		m := embedded(t, newMemory(tenant, "u1", tc.content))
		m.IdempotencyKey, m.AgentID = tc.key, "agent-a"
		if _, err := s.WriteDeduped(ctx, dedupWrite(tenant, m)); !errors.Is(err, memory.ErrIdempotencyKeyReused) {
			t.Errorf("another memory under deleted %s: %v, want idempotency key reused", tc.key, err)
		}
	}
	for _, tc := range []struct{ content, key, agent, want string }{
		{"Carol asked for 12 crates of napkins.", "key-create", "agent-a", memory.OutcomeDeleted},
		{"Carol asked for 12 crates of napkins.", "key-repeat", "agent-a", memory.OutcomeDeleted},
		{"Bob's pallets go to dock 4.", "key-erase", "agent-a", memory.OutcomeDeleted},
		{"Carol asked for 12 crates of napkins.", "key-new", "agent-a", memory.OutcomeCreated},
		{"Dock 4 closes at noon on Fridays.", "key-erase", "agent-b", memory.OutcomeCreated},
	} {
		if got := write(tc.content, tc.key, tc.agent); got.Outcome != tc.want {
			t.Errorf("retry with %s by %s: %s, want %s", tc.key, tc.agent, got.Outcome, tc.want)
		}
	}
	rows := query(t, `MATCH (m:Memory {tenant: $tenant}) RETURN count(m) AS n`, map[string]any{"tenant": tenant})
	if n := rows[0]["n"].(int64); n != 2 {
		t.Errorf("%d memories stored, want 2 (the write with a new key, another writer's)", n)
	}
	if n, err := s.CountText(ctx, tenant, "key-"); err != nil || n != 2 {
		t.Errorf("the keys' text is stored %d times (%v), want twice (the live memories')", n, err)
	}
}

// A key whose write only reinforced a memory holds that write: its retry
// changes nothing, and another body or another writer under it is refused.
func TestAKeyThatReinforcedHoldsItsWrite(t *testing.T) {
	s := testStore(t)
	ctx := testCtx(t)
	tenant := testenv.Tenant(t)
	write := func(content, key, agent string) (memory.Written, error) {
		t.Helper()
		m := embedded(t, newMemory(tenant, "u1", content))
		m.IdempotencyKey, m.AgentID = key, agent
		written, err := s.WriteDeduped(ctx, dedupWrite(tenant, m))
		if err != nil {
			return memory.Written{}, err
		}
		return written[0], nil
	}
	base, err := write("Bob reorders blue folders every March.", "", "agent-a")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{memory.OutcomeReinforced, memory.OutcomeDuplicate} {
		got, err := write("Bob reorders blue folders every March.", "key-r", "agent-a")
		if err != nil || got.Outcome != want || got.Memory.ID != base.Memory.ID {
			t.Fatalf("write %d under key-r: %+v, %v; want %s %s", i, got, err, base.Memory.ID, want)
		}
		if got.Memory.EvidenceCount != 2 {
			t.Errorf("write %d under key-r: evidence %d, want 2 (a retry counts once)", i, got.Memory.EvidenceCount)
		}
	}
	if _, err := write("Bob reorders red folders every June.", "key-r", "agent-a"); !errors.Is(err, memory.ErrIdempotencyKeyReused) {
		t.Errorf("another body under a key that reinforced: %v, want idempotency key reused", err)
	}
	if _, err := write("Bob reorders blue folders every March.", "key-r", "agent-b"); !errors.Is(err, memory.ErrIdempotencyKeyReused) {
		t.Errorf("another writer under the key: %v, want idempotency key reused (a key in use is the tenant's)", err)
	}
	rows := query(t, `MATCH (m:Memory {tenant: $tenant}) RETURN count(m) AS n`, map[string]any{"tenant": tenant})
	if n := rows[0]["n"].(int64); n != 1 {
		t.Errorf("%d memories stored, want 1", n)
	}
}

// A retry under a key whose write reinforced a memory answers with that
// memory, however its slot moved on since: a late retry never brings an
// older fact back over a newer one. Another user or a stricter level under
// the key is another request.
func TestALateRetryOfAReinforcementRepeatsNothing(t *testing.T) {
	s := testStore(t)
	ctx := testCtx(t)
	tenant := testenv.Tenant(t)
	write := func(content, key, user, sensitivity string) (memory.Written, error) {
		t.Helper()
		m := embedded(t, newMemory(tenant, user, content))
		m.Key, m.IdempotencyKey, m.AgentID = "budget", key, "agent-a"
		if sensitivity != "" {
			m.Sensitivity = sensitivity
		}
		written, err := s.WriteDeduped(ctx, dedupWrite(tenant, m))
		if err != nil {
			return memory.Written{}, err
		}
		return written[0], nil
	}
	old, err := write("Carol's budget is 10k CNY.", "", "u1", "")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := write("Carol's budget is 10k CNY.", "key-late", "u1", ""); err != nil || got.Outcome != memory.OutcomeReinforced {
		t.Fatalf("the keyed repeat: %+v, %v; want reinforced", got, err)
	}
	newer, err := write("Carol's budget is 20k CNY.", "", "u1", "")
	if err != nil || newer.Outcome != memory.OutcomeCreated {
		t.Fatalf("the newer budget: %+v, %v", newer, err)
	}
	got, err := write("Carol's budget is 10k CNY.", "key-late", "u1", "")
	if err != nil || got.Outcome != memory.OutcomeDuplicate || got.Memory.ID != old.Memory.ID {
		t.Errorf("the late retry: %+v, %v; want a duplicate of %s", got, err, old.Memory.ID)
	}
	rows := query(t, `MATCH (m:Memory {tenant: $tenant, key: 'budget', status: 'active'}) RETURN m.id AS id`, map[string]any{"tenant": tenant})
	if len(rows) != 1 || rows[0]["id"] != newer.Memory.ID {
		t.Errorf("active budgets %v, want only the newer %s", rows, newer.Memory.ID)
	}
	for _, tc := range []struct{ name, user, sensitivity string }{
		{"another user", "u2", ""},
		{"a stricter level", "u1", memory.SensitivityRestricted},
	} {
		if _, err := write("Carol's budget is 10k CNY.", "key-late", tc.user, tc.sensitivity); !errors.Is(err, memory.ErrIdempotencyKeyReused) {
			t.Errorf("%s under the key: %v, want idempotency key reused", tc.name, err)
		}
	}
}
