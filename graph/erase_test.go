package graph

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/internal/testenv"
	"mneme/memory"
)

var _ memory.Forgetter = (*Store)(nil)

// TestEraseUser erases a user with versions, shared and own entities and
// sessions, next to a user who stays, and checks every node left.
func TestEraseUser(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	v1 := newMemory(tenant, "u1", "secret budget 100k for Zorblax")
	v1.Key, v1.SessionID = "budget", "sess-u1"
	v1.Entities = []memory.Entity{{ID: "co:zorblax", Kind: "company", Name: "Zorblax"}, {ID: "city:lyon", Kind: "city", Name: "Lyon"}}
	v2 := newMemory(tenant, "u1", "secret budget 150k for Zorblax")
	v2.Key, v2.SessionID, v2.Entities = "budget", "sess-u1", v1.Entities
	v2.Embedding = make([]float32, testenv.EmbeddingDimension)
	v2.Embedding[0] = 1
	cand := newMemory(tenant, "u1", "maybe likes quince jam")
	cand.Status, cand.SessionID = memory.StatusCandidate, "sess-shared"
	other := newMemory(tenant, "u2", "u2 travels to Lyon")
	other.SessionID = "sess-shared"
	other.Entities = []memory.Entity{{ID: "city:lyon", Kind: "city", Name: "Lyon"}}
	for _, m := range []memory.Memory{v1, v2, cand, other} {
		if _, err := s.CreateMemories(testCtx(t), []memory.Memory{m}); err != nil {
			t.Fatal(err)
		}
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ts := memory.Tombstone{At: at, By: "admin:root", Reason: "user erased", UserRef: memory.UserTombstoneID(tenant, "u1")}

	got, err := s.EraseUser(testCtx(t), tenant, "u1", ts)
	if err != nil {
		t.Fatal(err)
	}
	// Three memories; Zorblax (Lyon is still u2's); sess-u1 (sess-shared
	// still holds u2's memory); the User node.
	if want := (memory.GraphErased{Memories: 3, Entities: 1, Sessions: 1, Users: 1}); got != want {
		t.Errorf("erased %+v, want %+v", got, want)
	}
	again, err := s.EraseUser(testCtx(t), tenant, "u1", ts)
	if err != nil || again != (memory.GraphErased{}) {
		t.Errorf("second erase = %+v, %v; want zeros", again, err)
	}

	nodes, err := s.TenantNodes(testCtx(t), tenant)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, n := range nodes {
		desc := fmt.Sprintf("%s %v", strings.Join(n.Labels, ":"), n.Props["id"])
		for _, v := range n.Props {
			if s, ok := v.(string); ok && (strings.Contains(s, "Zorblax") || strings.Contains(s, "secret") || strings.Contains(s, "quince")) {
				t.Errorf("%s still holds %q", desc, s)
			}
		}
		if n.Labels[0] == "Tombstone" {
			if n.Props["by"] != "admin:root" || len(n.Props) != 5 && len(n.Props) != 6 {
				t.Errorf("tombstone %v", n.Props)
			}
			continue
		}
		left = append(left, desc)
	}
	want := []string{"Agent agent-a", "Entity city:lyon", fmt.Sprintf("Memory %s", other.ID), "Session sess-shared", "User u2"}
	if diff := cmp.Diff(want, slices.Sorted(slices.Values(left))); diff != "" {
		t.Errorf("nodes left (-want +got):\n%s", diff)
	}
	tombs := query(t, `MATCH (t:Tombstone {tenant: $tenant}) RETURN t.id AS id, t.kind AS kind ORDER BY id`, map[string]any{"tenant": tenant})
	if len(tombs) != 4 || tombs[3]["id"] != ts.UserRef || tombs[3]["kind"] != "user" {
		t.Errorf("tombstones = %v, want one per memory and the user's", tombs)
	}
}

func TestEraseMemories(t *testing.T) {
	s := testStore(t)
	tenant := testenv.Tenant(t)
	a := newMemory(tenant, "u1", "order 42 shipped")
	a.SessionID = "sess-a"
	a.Entities = []memory.Entity{{ID: "order:42", Kind: "order", Name: "42"}}
	b := newMemory(tenant, "u1", "likes tea")
	if _, err := s.CreateMemories(testCtx(t), []memory.Memory{a, b}); err != nil {
		t.Fatal(err)
	}
	ts := memory.Tombstone{At: time.Now(), By: "user:u1", Reason: "deleted through the API"}
	got, err := s.EraseMemories(testCtx(t), tenant, []string{a.ID, "mem_missing"}, ts)
	if err != nil {
		t.Fatal(err)
	}
	if want := (memory.GraphErased{Memories: 1, Entities: 1, Sessions: 1}); got != want {
		t.Errorf("erased %+v, want %+v", got, want)
	}
	if _, err := s.GetMemory(testCtx(t), tenant, b.ID); err != nil {
		t.Errorf("the other memory: %v", err)
	}
	if again, err := s.EraseMemories(testCtx(t), tenant, []string{a.ID}, ts); err != nil || again != (memory.GraphErased{}) {
		t.Errorf("second erase = %+v, %v; want zeros", again, err)
	}
}
