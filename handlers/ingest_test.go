package handlers_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"mneme/client"
	"mneme/internal/apptest"
	"mneme/memory"
)

func ingest(t *testing.T, f *apptest.Fixture, who string, req client.IngestRequest) client.IngestResult {
	t.Helper()
	out, err := f.Client(t, who).Ingest(t.Context(), req)
	if err != nil {
		t.Fatalf("ingest as %s: %v", who, err)
	}
	return out
}

// Budgets of two periods are two facts: next year's Q1 budget does not
// supersede the Q4 one, a question about the Q4 budget answers with it
// first, and one about the Q1 budget with that; the same in Chinese.
func TestIngestBudgetsOfTwoPeriods(t *testing.T) {
	for _, lang := range []struct {
		name, q4, q1, askQ4, askQ1, wantQ4, wantQ1 string
	}{
		{"english", "Our Q4 procurement budget is 150k CNY.", "For next year's Q1 the budget is 90k CNY.", "What is the Q4 budget?", "What is the Q1 budget?", "150,000", "90,000"},
		{"chinese", "我们第四季度的采购预算是15万元。", "明年一季度的预算是9万元。", "四季度预算是多少？", "一季度预算是多少？", "150,000", "90,000"},
	} {
		t.Run(lang.name, func(t *testing.T) {
			f := apptest.Start(t)
			const bot = "order-bot"
			now := time.Now().UTC()
			one := ingest(t, f, bot, client.IngestRequest{UserID: "alice", SessionID: "conv-1", Turns: []client.Turn{
				{Role: memory.RoleUser, Content: lang.q4, At: now.Add(-time.Hour)},
			}})
			two := ingest(t, f, bot, client.IngestRequest{UserID: "alice", SessionID: "conv-2", Turns: []client.Turn{
				{Role: memory.RoleUser, Content: lang.q1, At: now},
			}})
			if len(one.Memories) != 1 || len(two.Memories) != 1 {
				t.Fatalf("stored %+v then %+v", one.Memories, two.Memories)
			}
			q4, q1 := one.Memories[0], two.Memories[0]
			if q4.Key != "budget_q4" || q1.Key != fmt.Sprintf("budget_%d_q1", now.Year()+1) || q1.Supersedes != "" || q1.Version != 1 {
				t.Errorf("keys %s, %s; the second supersedes %q (version %d), want nothing", q4.Key, q1.Key, q1.Supersedes, q1.Version)
			}
			if got, err := f.Client(t, bot).Get(t.Context(), q4.ID); err != nil || got.Status != client.StatusActive {
				t.Fatalf("the Q4 budget after the Q1 one: %+v, %v; want it active", got, err)
			}
			for _, ask := range []struct{ q, id, want string }{{lang.askQ4, q4.ID, lang.wantQ4}, {lang.askQ1, q1.ID, lang.wantQ1}} {
				got := recall(t, f, bot, client.RecallRequest{UserID: "alice", Query: ask.q})
				if len(got.Memories) == 0 || got.Memories[0].Memory.ID != ask.id || !strings.Contains(got.Memories[0].Memory.Content, ask.want) {
					t.Errorf("recall %q = %v, want %s (%s) first", ask.q, recalledIDs(got), ask.id, ask.want)
				}
			}
		})
	}
}

// The budget case: two conversations, days apart, state a budget; recall
// answers with the second, and the history keeps the first, superseded.
func TestIngestBudgetSupersedes(t *testing.T) {
	for _, lang := range []struct {
		name, first, second, query, want, old string
	}{
		{"english", "Hi! My budget is 100k for the new office chairs.", "Quick update: our budget is now 150k.", "What is the budget?", "150,000", "100,000"},
		{"chinese", "你好，我们这次采购的预算10万。", "预算调整为15万，谢谢。", "预算是多少？", "150,000", "100,000"},
	} {
		t.Run(lang.name, func(t *testing.T) {
			f := apptest.Start(t)
			const bot = "order-bot"
			day1 := time.Now().UTC().Add(-72 * time.Hour)
			one := ingest(t, f, bot, client.IngestRequest{UserID: "alice", SessionID: "conv-1", Turns: []client.Turn{
				{Role: memory.RoleUser, Content: lang.first, At: day1},
				{Role: memory.RoleAssistant, Content: "Noted. 好的。", At: day1.Add(time.Second)},
			}})
			if len(one.Memories) != 1 || one.Memories[0].Key != "budget" || !strings.Contains(one.Memories[0].Content, lang.old) {
				t.Fatalf("conversation 1 stored %+v", one.Memories)
			}
			first := one.Memories[0]
			two := ingest(t, f, bot, client.IngestRequest{UserID: "alice", SessionID: "conv-2", Turns: []client.Turn{
				{Role: memory.RoleUser, Content: lang.second, At: time.Now().UTC()},
			}})
			if len(two.Memories) != 1 {
				t.Fatalf("conversation 2 stored %+v", two.Memories)
			}
			second := two.Memories[0]
			if second.Supersedes != first.ID || second.Version != 2 || second.SessionID != "conv-2" {
				t.Errorf("second = version %d supersedes %q session %q; want 2, %s, conv-2", second.Version, second.Supersedes, second.SessionID, first.ID)
			}

			got := recall(t, f, bot, client.RecallRequest{UserID: "alice", Query: lang.query})
			if len(got.Memories) == 0 || got.Memories[0].Memory.ID != second.ID {
				t.Fatalf("recall %q = %v, want %s first", lang.query, recalledIDs(got), second.ID)
			}
			for _, r := range got.Memories {
				if r.Memory.ID == first.ID {
					t.Errorf("recall returned the superseded budget %q", r.Memory.Content)
				}
			}
			if !strings.Contains(got.Context, lang.want) || strings.Contains(got.Context, lang.old) {
				t.Errorf("context block = %q, want %s and not %s", got.Context, lang.want, lang.old)
			}

			hist, err := f.Client(t, bot).History(t.Context(), second.ID)
			if err != nil || len(hist) != 2 {
				t.Fatalf("history = %+v, %v", hist, err)
			}
			old := hist[1]
			if old.ID != first.ID || old.Status != client.StatusSuperseded || old.ValidTo == nil || !strings.Contains(old.Content, lang.old) {
				t.Errorf("old version = %s %s valid_to %v %q", old.ID, old.Status, old.ValidTo, old.Content)
			}
			if hist[0].Status != client.StatusActive || hist[0].ValidTo != nil {
				t.Errorf("head = %s valid_to %v", hist[0].Status, hist[0].ValidTo)
			}
		})
	}
}

func TestIngestChitChatStoresNothing(t *testing.T) {
	f := apptest.Start(t)
	res := ingest(t, f, "support-bot", client.IngestRequest{UserID: "bob", SessionID: "s-chat", Turns: []client.Turn{
		{Role: memory.RoleUser, Content: "Hi! How are you today?"},
		{Role: memory.RoleAssistant, Content: "I'm fine, I prefer sunny days. How can I help?"},
		{Role: memory.RoleUser, Content: "哈哈，没事，谢谢。Thanks, bye!"},
	}})
	if len(res.Memories) != 0 || res.Reason == "" {
		t.Fatalf("chit-chat stored %+v (reason %q)", res.Memories, res.Reason)
	}
	if got := list(t, f, "support-bot", "user_id=bob"); len(got) != 0 {
		t.Errorf("bob has %d memories after chit-chat", len(got))
	}
}

// Ingest writes through the normal pipeline, so policy applies: a user may
// not ingest another user's conversation.
func TestIngestPolicyApplies(t *testing.T) {
	f := apptest.Start(t)
	_, err := f.Client(t, "bob").Ingest(t.Context(), client.IngestRequest{UserID: "alice", Turns: []client.Turn{
		{Role: memory.RoleUser, Content: "My budget is 5k."},
	}})
	wantAPIError(t, "bob ingesting for alice", err, http.StatusForbidden, "forbidden")
	// Turns that hold nothing worth remembering are refused all the same:
	// the answer must not depend on what the turns hold.
	_, err = f.Client(t, "bob").Ingest(t.Context(), client.IngestRequest{UserID: "alice", Turns: []client.Turn{
		{Role: memory.RoleUser, Content: "hello there"},
	}})
	wantAPIError(t, "bob ingesting small talk for alice", err, http.StatusForbidden, "forbidden")
	res := ingest(t, f, "alice", client.IngestRequest{UserID: "alice", Turns: []client.Turn{{Role: memory.RoleUser, Content: "I prefer WeChat over phone calls."}}})
	if len(res.Memories) != 1 || res.Memories[0].AgentID != "user:alice" || res.Memories[0].Key != "contact_channel" {
		t.Errorf("alice's own ingestion = %+v", res.Memories)
	}
}
