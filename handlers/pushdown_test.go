package handlers_test

import (
	"net/http"
	"net/url"
	"slices"
	"testing"

	"mneme/internal/apptest"
	"mneme/memory"
	"mneme/policyadmin"
)

// pages lists userID's memories as who, one memory per page, and returns
// each page. Policy narrows the query itself, so a page is never emptied by
// the per-memory check: an empty page with a cursor would mean the query
// read a memory the caller may not see.
func pages(t *testing.T, f *apptest.Fixture, who, userID string) [][]memory.Memory {
	t.Helper()
	var out [][]memory.Memory
	cursor := ""
	for range 20 {
		q := url.Values{"user_id": {userID}, "limit": {"1"}}
		if cursor != "" {
			q.Set("cursor", cursor)
		}
		resp := f.Do(t, who, http.MethodGet, "/v1/memories?"+q.Encode(), nil)
		if resp.Status != http.StatusOK {
			t.Fatalf("list as %s: %d %s", who, resp.Status, resp.Body)
		}
		var page memory.Page
		resp.Decode(t, &page)
		out = append(out, page.Memories)
		if page.NextCursor == "" {
			return out
		}
		cursor = page.NextCursor
	}
	t.Fatalf("list as %s: more than 20 pages", who)
	return nil
}

// TestListAndRecallArePushedDown shows through the router that the read
// policy narrows the queries of list and recall: pages are full of readable
// memories and nothing else, and a grant, or its removal, changes them at
// once.
func TestListAndRecallArePushedDown(t *testing.T) {
	f := apptest.Start(t)
	var orders []string
	for _, content := range []string{
		"Order SO-3001 for Alice shipped on 2 November.",
		"Order SO-3002 for Alice is waiting for stock.",
		"Order SO-3003 for Alice was delivered to Hangzhou.",
	} {
		orders = append(orders, create(t, f, "order-bot", memory.NewMemory{
			UserID: "alice", Type: memory.TypeEpisodic, Kind: "order_status", Content: content,
		}).ID)
	}
	delivered := orders[2]
	// Newer than the orders, so that a query the policy did not narrow
	// would read it first.
	cost := create(t, f, "finance-bot", memory.NewMemory{
		UserID: "alice", Type: memory.TypeEpisodic, Kind: "order_status", Sensitivity: memory.SensitivityConfidential,
		Content: "Order SO-3004 for Alice cost us 41k internally.",
	})

	got := pages(t, f, "support-bot", "alice")
	if len(got) != 1 || len(got[0]) != 0 {
		t.Fatalf("support-bot without grants: pages %v, want one empty page", got)
	}

	resp := f.Do(t, "admin", http.MethodPost, "/v1/grants", policyadmin.NewGrant{
		Grantee: "support-bot", Source: "*", Types: []string{memory.TypeEpisodic}, Kinds: []string{"order_status"},
		MaxSensitivity: memory.SensitivityInternal,
	})
	if resp.Status != http.StatusCreated {
		t.Fatalf("grant = %d %s", resp.Status, resp.Body)
	}
	var g memory.Grant
	resp.Decode(t, &g)

	var listed []string
	for i, page := range pages(t, f, "support-bot", "alice") {
		if len(page) != 1 {
			t.Errorf("page %d holds %d memories, want 1: the query read what policy hides", i, len(page))
		}
		listed = append(listed, ids(page)...)
	}
	slices.Sort(listed)
	slices.Sort(orders)
	if !slices.Equal(listed, orders) {
		t.Errorf("support-bot lists %v, want the orders %v", listed, orders)
	}
	r := recall(t, f, "support-bot", memory.RecallRequest{UserID: "alice", Query: "order SO-3004 cost internally", K: 10})
	if ids := recalledIDs(r); has(ids, cost.ID) {
		t.Errorf("recall returned the confidential cost through an internal grant: %v", ids)
	}
	if r = recall(t, f, "support-bot", memory.RecallRequest{UserID: "alice", Query: "order SO-3003 delivered Hangzhou", K: 10}); !has(recalledIDs(r), delivered) {
		t.Errorf("recall through the grant misses %s: %v", delivered, recalledIDs(r))
	}

	if resp := f.Do(t, "admin", http.MethodDelete, "/v1/grants/"+g.ID, nil); resp.Status != http.StatusNoContent {
		t.Fatalf("delete grant = %d %s", resp.Status, resp.Body)
	}
	if got := pages(t, f, "support-bot", "alice"); len(got) != 1 || len(got[0]) != 0 {
		t.Errorf("after revoking: pages %v, want one empty page", got)
	}
	if r := recall(t, f, "support-bot", memory.RecallRequest{UserID: "alice", Query: "order SO-3003 delivered Hangzhou", K: 10}); len(r.Memories) != 0 {
		t.Errorf("after revoking, recall returns %v", recalledIDs(r))
	}
}
