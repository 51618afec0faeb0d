package handlers_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"mneme/client"
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
	c := f.Client(t, bot)
	v1 := create(t, f, bot, client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Key: "address",
		Content: "Alice lives at " + token + " road 1", Entities: []client.Entity{{ID: "street-" + token, Kind: "street", Name: token}}})
	v2, err := c.Update(t.Context(), v1.ID, 0, client.UpdateRequest{Content: ptrTo("Alice lives at " + token + " road 2")})
	if err != nil || v2.Version != 2 {
		t.Fatalf("setup: update = %+v, %v; want version 2", v2, err)
	}
	create(t, f, bot, client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: "Alice likes tea"})

	receipt, err := c.Delete(t.Context(), v2.ID)
	if err != nil {
		t.Fatalf("delete: %v", err)
	}
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
		as := f.Client(t, who)
		for _, id := range []string{v1.ID, v2.ID} {
			_, err := as.Get(t.Context(), id)
			wantAPIError(t, who+" gets "+id, err, http.StatusNotFound, "not_found")
		}
		_, err := as.History(t.Context(), v1.ID)
		wantAPIError(t, who+" reads the history of "+v1.ID, err, http.StatusNotFound, "not_found")
		if listed, _ := json.Marshal(list(t, f, who, "user_id=alice&limit=500")); strings.Contains(string(listed), token) {
			t.Errorf("%s still lists %s", who, token)
		}
	}
	_, err = c.Delete(t.Context(), v2.ID)
	wantAPIError(t, "second delete", err, http.StatusNotFound, "not_found")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if tombstones := checkGraphForgot(t, ctx, f, "", []string{token}); tombstones != 2 {
		t.Errorf("%d tombstones, want 2 (one per version)", tombstones)
	}
}
