package handlers_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"mneme/internal/apptest"
	"mneme/memory"
)

// TestDeleteMemoryErasesItsVersions deletes the head of a version chain: the
// receipt counts every version, none can be read any more, and Neo4j holds
// none of their content — only tombstones.
func TestDeleteMemoryErasesItsVersions(t *testing.T) {
	f := apptest.Start(t)
	const bot = "order-bot"
	token := "zq" + strings.ReplaceAll(memory.NewID("x"), "_", "")
	r := f.Do(t, bot, http.MethodPost, "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Key: "address",
		Content: "Alice lives at " + token + " road 1", Entities: []memory.Entity{{ID: "street-" + token, Kind: "street", Name: token}}})
	var v1 memory.Memory
	r.Decode(t, &v1)
	r = f.Do(t, bot, http.MethodPatch, "/v1/memories/"+v1.ID, map[string]any{"content": "Alice lives at " + token + " road 2"})
	var v2 memory.Memory
	r.Decode(t, &v2)
	keep := f.Do(t, bot, http.MethodPost, "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Content: "Alice likes tea"})
	if keep.Status != http.StatusCreated || v2.Version != 2 {
		t.Fatalf("setup: %d, version %d", keep.Status, v2.Version)
	}

	r = f.Do(t, bot, http.MethodDelete, "/v1/memories/"+v2.ID, nil)
	if r.Status != http.StatusOK {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	var receipt memory.Receipt
	r.Decode(t, &receipt)
	want := map[string]int64{memory.PlaceGraphMemories: 2, memory.PlaceGraphEntities: 1, memory.PlaceGraphSessions: 0}
	for place, n := range want {
		if receipt.Counts[place] != n {
			t.Errorf("receipt %s = %d, want %d (%v)", place, receipt.Counts[place], n, receipt.Counts)
		}
	}
	if receipt.MemoryID != v2.ID || receipt.UserID != "alice" {
		t.Errorf("receipt = %+v", receipt)
	}
	for _, who := range []string{bot, apptest.Admin, "alice"} {
		for _, path := range []string{"/v1/memories/" + v1.ID, "/v1/memories/" + v2.ID, "/v1/memories/" + v1.ID + "/history"} {
			if r := f.Do(t, who, http.MethodGet, path, nil); r.Status != http.StatusNotFound {
				t.Errorf("%s GET %s = %d, want 404", who, path, r.Status)
			}
		}
		if r := f.Do(t, who, http.MethodGet, "/v1/memories?user_id=alice&limit=500", nil); strings.Contains(string(r.Body), token) {
			t.Errorf("%s still lists %s", who, token)
		}
	}
	if r := f.Do(t, bot, http.MethodDelete, "/v1/memories/"+v2.ID, nil); r.Status != http.StatusNotFound {
		t.Errorf("second delete = %d, want 404", r.Status)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if tombstones := checkGraphForgot(t, ctx, f, "", []string{token}); tombstones != 2 {
		t.Errorf("%d tombstones, want 2 (one per version)", tombstones)
	}
}
