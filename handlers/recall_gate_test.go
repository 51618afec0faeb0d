package handlers_test

import (
	"testing"

	"mneme/client"
	"mneme/internal/apptest"
)

// TestQuestionsAboutTheUser: generic questions reach the memories they mean
// through the real router, the current version of a slot and never the one
// it replaced; pleasantries that share words with memories recall nothing.
func TestQuestionsAboutTheUser(t *testing.T) {
	f := apptest.Start(t)
	old := create(t, f, "support-bot", client.NewMemory{UserID: "dana", Type: client.TypeSemantic, Kind: "rule", Key: "refund_rule",
		Content: "Refunds under 500 CNY are approved by the support lead."})
	cur := create(t, f, "support-bot", client.NewMemory{UserID: "dana", Type: client.TypeSemantic, Kind: "rule", Key: "refund_rule",
		Content: "Refunds under 2,000 CNY are approved by the agent on duty; above that by the finance manager."})
	// A preference is trusted once two sessions observed it.
	pref := client.NewMemory{UserID: "dana", Type: client.TypeProfile, Kind: "preference", Key: "answer_style",
		SessionID: "s-1", Content: "Dana 喜欢简洁的回复，不要长篇大论。"}
	create(t, f, "support-bot", pref)
	pref.SessionID = "s-2"
	style := write(t, f, "support-bot", pref)
	if style.Outcome != client.OutcomeReinforced || style.Status != client.StatusActive {
		t.Fatalf("the preference seen in two sessions is %s %s, want reinforced and active", style.Outcome, style.Status)
	}
	create(t, f, "support-bot", client.NewMemory{UserID: "dana", Type: client.TypeSemantic, Kind: "payment_terms",
		Content: "Dana's company pays on 30-day terms; every 订单 above 10k CNY needs a signed contract."})

	for _, tt := range []struct{ q, want string }{
		{"按老规矩处理", cur.ID},
		{"same as always, please", cur.ID},
		{"能不能直接说重点", style.ID},
		{"tell me my preferences", style.ID},
	} {
		got := recall(t, f, "support-bot", client.RecallRequest{UserID: "dana", Query: tt.q})
		ids := recalledIDs(got)
		if !has(ids, tt.want) || has(ids, old.ID) {
			t.Errorf("recall %q = %v, want %s and never the superseded %s", tt.q, ids, tt.want, old.ID)
		}
		for _, m := range got.Memories {
			if m.Explain.Gate == "" {
				t.Errorf("recall %q: %s passed no gate", tt.q, m.Memory.ID)
			}
		}
	}
	for _, q := range []string{"thank you so much, have a nice day", "xyz 123 订单", "好的", "thanks"} {
		if got := recall(t, f, "support-bot", client.RecallRequest{UserID: "dana", Query: q}); len(got.Memories) != 0 {
			t.Errorf("recall %q = %v, want nothing", q, recalledIDs(got))
		}
	}
}
