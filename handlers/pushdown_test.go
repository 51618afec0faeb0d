package handlers_test

import (
	"slices"
	"testing"

	"mneme/client"
	"mneme/internal/apptest"
)

// pages lists userID's memories as who, one memory per page, and returns
// each page. Policy narrows the query itself, so a page is never emptied by
// the per-memory check: an empty page with a cursor would mean the query
// read a memory the caller may not see.
func pages(t *testing.T, f *apptest.Fixture, who, userID string) [][]client.Memory {
	t.Helper()
	var out [][]client.Memory
	c := f.Client(t, who)
	o := client.ListOptions{UserID: userID, Limit: 1}
	for range 20 {
		page, err := c.List(t.Context(), o)
		if err != nil {
			t.Fatalf("list as %s: %v", who, err)
		}
		out = append(out, page.Memories)
		if page.NextCursor == "" {
			return out
		}
		o.Cursor = page.NextCursor
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
		orders = append(orders, create(t, f, "order-bot", client.NewMemory{
			UserID: "alice", Type: client.TypeEpisodic, Kind: "order_status", Content: content,
		}).ID)
	}
	delivered := orders[2]
	// Newer than the orders, so that a query the policy did not narrow
	// would read it first.
	cost := create(t, f, "finance-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeEpisodic, Kind: "order_status", Sensitivity: client.SensitivityConfidential,
		Content: "Order SO-3004 for Alice cost us 41k internally.",
	})

	got := pages(t, f, "support-bot", "alice")
	if len(got) != 1 || len(got[0]) != 0 {
		t.Fatalf("support-bot without grants: pages %v, want one empty page", got)
	}

	admin := f.Client(t, "admin")
	g, err := admin.CreateGrant(t.Context(), client.NewGrant{
		Grantee: "support-bot", Source: "*", Types: []string{client.TypeEpisodic}, Kinds: []string{"order_status"},
		MaxSensitivity: client.SensitivityInternal,
	})
	if err != nil {
		t.Fatalf("grant: %v", err)
	}

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
	r := recall(t, f, "support-bot", client.RecallRequest{UserID: "alice", Query: "order SO-3004 cost internally", K: 10})
	if ids := recalledIDs(r); has(ids, cost.ID) {
		t.Errorf("recall returned the confidential cost through an internal grant: %v", ids)
	}
	if r = recall(t, f, "support-bot", client.RecallRequest{UserID: "alice", Query: "order SO-3003 delivered Hangzhou", K: 10}); !has(recalledIDs(r), delivered) {
		t.Errorf("recall through the grant misses %s: %v", delivered, recalledIDs(r))
	}

	if err := admin.DeleteGrant(t.Context(), g.ID); err != nil {
		t.Fatalf("delete grant: %v", err)
	}
	if got := pages(t, f, "support-bot", "alice"); len(got) != 1 || len(got[0]) != 0 {
		t.Errorf("after revoking: pages %v, want one empty page", got)
	}
	if r := recall(t, f, "support-bot", client.RecallRequest{UserID: "alice", Query: "order SO-3003 delivered Hangzhou", K: 10}); len(r.Memories) != 0 {
		t.Errorf("after revoking, recall returns %v", recalledIDs(r))
	}
}
