package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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

// TestDeleteLeavesVersionsOutOfSight: alice deletes a version of a chain
// whose newer version is restricted, out of her sight: her delete erases
// and counts only the version she may read, and finance-bot keeps its flag.
func TestDeleteLeavesVersionsOutOfSight(t *testing.T) {
	f := apptest.Start(t)
	v1 := write(t, f, "finance-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Kind: "risk", Key: "credit_watch",
		Content: "Credit watch: nothing to report for Alice's company."})
	v2 := write(t, f, "finance-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Kind: "risk", Key: "credit_watch",
		Sensitivity: "restricted", Content: "Credit watch: legal hold on Lianhua, stop all shipments."})
	if v2.Supersedes != v1.ID {
		t.Fatalf("setup: %s supersedes %q, want %s", v2.ID, v2.Supersedes, v1.ID)
	}
	alice := f.Client(t, "alice")
	_, err := alice.Delete(t.Context(), v2.ID)
	wantAPIError(t, "alice deletes the restricted version", err, http.StatusNotFound, "not_found")
	receipt, err := alice.Delete(t.Context(), v1.ID)
	if err != nil {
		t.Fatalf("alice deletes the version she reads: %v", err)
	}
	if n := receipt.Counts[memory.PlaceGraphMemories]; n != 1 {
		t.Errorf("the receipt counts %d memories, want the 1 alice could see", n)
	}
	if got, err := f.Client(t, "finance-bot").Get(t.Context(), v2.ID); err != nil || got.Status != client.StatusActive {
		t.Errorf("finance-bot's restricted version after alice's delete: %+v, %v; want it active", got, err)
	}
}

// TestDeleteKeepsTheReason: the reason a caller gives a delete reaches the
// tombstone in Neo4j, the user's export and the audit trail; without one
// the tombstone says the API deleted it; one past the bound is refused and
// erases nothing. A tombstone outlives the user's erase, so what the guard
// finds in a reason is masked there and the reason is one line.
func TestDeleteKeepsTheReason(t *testing.T) {
	f := apptest.Start(t)
	const bot = "order-bot"
	asked := create(t, f, bot, client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: "Alice's parcel goes to the side door."})
	plain := create(t, f, bot, client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: "Alice asked for a paper invoice."})
	kept := create(t, f, bot, client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Content: "Alice pays by transfer."})
	const reason = "Alice asked on the phone <script>alert(1)</script>:\ncard 4111111111111111, ID 110101199003074514, password: hunter2hunter2\u202e"
	const stored = "Alice asked on the phone <script>alert(1)</script>: card [REDACTED:bank_card], ID [REDACTED:cn_id], password: [REDACTED:password]"

	admin := f.Client(t, apptest.Admin)
	if _, err := admin.DeleteBecause(t.Context(), asked.ID, "  "+reason+" "); err != nil {
		t.Fatalf("delete with a reason: %v", err)
	}
	if _, err := f.Client(t, bot).Delete(t.Context(), plain.ID); err != nil {
		t.Fatalf("delete without a reason: %v", err)
	}
	_, err := admin.DeleteBecause(t.Context(), kept.ID, strings.Repeat("x", memory.MaxDeleteReason+1))
	wantAPIError(t, "delete with a reason too long", err, http.StatusBadRequest, "invalid_argument")
	if _, err := admin.Get(t.Context(), kept.ID); err != nil {
		t.Errorf("a refused delete erased the memory: %v", err)
	}

	nodes, err := f.App.Store.TenantNodes(t.Context(), f.Tenant)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]any{}
	for _, n := range nodes {
		if n.Labels[0] == "Tombstone" {
			reasons[fmt.Sprint(n.Props["id"])] = n.Props["reason"]
		}
	}
	want := map[string]any{asked.ID: stored, plain.ID: "deleted through the API"}
	if d := cmp.Diff(want, reasons); d != "" {
		t.Errorf("tombstone reasons in Neo4j (-want +got):\n%s", d)
	}

	r := f.Do(t, apptest.Admin, http.MethodGet, "/v1/users/alice/export", nil)
	expectResponse(t, "export", r, http.StatusOK)
	var doc struct {
		Tombstones []struct{ ID, By, Reason string } `json:"tombstones"`
	}
	r.Decode(t, &doc)
	exported := map[string]string{}
	for _, ts := range doc.Tombstones {
		exported[ts.ID] = ts.By + " / " + ts.Reason
	}
	wantExported := map[string]string{asked.ID: "admin:" + apptest.Admin + " / " + stored, plain.ID: "agent:" + bot + " / deleted through the API"}
	if d := cmp.Diff(wantExported, exported); d != "" {
		t.Errorf("exported tombstones (-want +got):\n%s", d)
	}

	r = f.Do(t, apptest.Admin, http.MethodGet, "/v1/audit?action="+memory.AuditMemoryDelete, nil)
	expectResponse(t, "audit", r, http.StatusOK)
	var trail struct{ Events []memory.AuditEvent }
	r.Decode(t, &trail)
	if len(trail.Events) != 1 || trail.Events[0].Target != "memory:"+asked.ID || trail.Events[0].Details["reason"] != stored {
		t.Errorf("audit trail of deletes: %+v; want the admin's one with its reason", trail.Events)
	}
}

// TestReclassifyingHidesTheOlderVersions: finance-bot raises a note about
// alice from internal to confidential; the older version holding the same
// text is raised with it, so alice reads it neither directly nor in a
// listing, and the panel's counts follow (tallies by sensitivity).
func TestReclassifyingHidesTheOlderVersions(t *testing.T) {
	f := apptest.Start(t)
	v1 := write(t, f, "finance-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Kind: "risk",
		Content: "Lianhua's credit score dropped to C; consider prepayment."})
	if _, err := f.Client(t, "alice").Get(t.Context(), v1.ID); err != nil {
		t.Fatalf("setup: alice reads the internal note: %v", err)
	}
	v2, err := f.Client(t, "finance-bot").Update(t.Context(), v1.ID, 0, client.UpdateRequest{Sensitivity: ptrTo("confidential")})
	if err != nil || v2.Sensitivity != "confidential" {
		t.Fatalf("reclassify: %+v, %v", v2, err)
	}
	_, err = f.Client(t, "alice").Get(t.Context(), v1.ID)
	wantAPIError(t, "alice reads the older version", err, http.StatusNotFound, "not_found")
	for _, m := range list(t, f, "alice", "user_id=alice&status=superseded&limit=500") {
		if m.ID == v1.ID {
			t.Errorf("alice lists the older version %s", v1.ID)
		}
	}
	if got, err := f.Client(t, "finance-bot").Get(t.Context(), v1.ID); err != nil || got.Sensitivity != "confidential" {
		t.Errorf("finance-bot reads the older version as %+v, %v; want it confidential", got, err)
	}

	// The same text written again otherwise (case, punctuation, a
	// non-breaking space, a zero-width mark) is the same text.
	w1 := write(t, f, "finance-bot", client.NewMemory{UserID: "alice", Type: client.TypeSemantic, Kind: "risk",
		Content: "Lianhua is on the late-payment watch list."})
	w2, err := f.Client(t, "finance-bot").Update(t.Context(), w1.ID, 0, client.UpdateRequest{
		Content: ptrTo("LIANHUA is on the late payment\u00a0watch\u200b list!"), Sensitivity: ptrTo("confidential")})
	if err != nil || w2.Sensitivity != "confidential" {
		t.Fatalf("reclassify with the text rewritten: %+v, %v", w2, err)
	}
	_, err = f.Client(t, "alice").Get(t.Context(), w1.ID)
	wantAPIError(t, "alice reads the older version of a rewritten text", err, http.StatusNotFound, "not_found")
}
