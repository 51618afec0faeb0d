package app_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"mneme/app"
	"mneme/embedding"
	"mneme/facts"
	"mneme/memory"
)

// conversation is a long support chat, one memory per turn: many turns alike
// (the same order with another number, the same request on another day, the
// same fact in the other language) and a few said twice word for word.
func conversation() (turns []string, repeats map[int]int) {
	add := func(s string) { turns = append(turns, s) }
	for i, o := range []int{4411, 4412, 4420, 4431, 4502, 4519, 4600, 4611, 4700, 4701, 4800, 5411} {
		add(fmt.Sprintf("User: can you check order %d? I haven't received it.", o))
		add(fmt.Sprintf("Assistant: order %d left the warehouse on %d May and should arrive within %d days.", o, 3+i%9, 2+i%3))
		add(fmt.Sprintf("用户：订单%d什么时候到？", o))
		add(fmt.Sprintf("助手：订单%d已于5月%d日发货，预计%d天内送达。", o, 3+i%9, 2+i%3))
	}
	for i, d := range []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"} {
		add(fmt.Sprintf("User: please move my delivery to %s afternoon.", d))
		add(fmt.Sprintf("Assistant: your delivery is moved to %s afternoon, between %d and %d pm.", d, 1+i%2, 5+i%2))
	}
	for i, d := range []string{"周一", "周二", "周三", "周四", "周五"} {
		add(fmt.Sprintf("用户：把我的送货时间改到%s下午。", d))
		add(fmt.Sprintf("助手：已改到%s下午%d点到%d点之间送货。", d, 1+i%2, 5+i%2))
	}
	for _, amount := range []int{120, 150, 480, 500, 520, 1200} {
		add(fmt.Sprintf("User: I was charged $%d twice on my card.", amount))
		add(fmt.Sprintf("Assistant: I have refunded the duplicate charge of $%d; it takes 3 to 5 business days.", amount))
		add(fmt.Sprintf("用户：我的卡被重复扣了%d元。", amount))
	}
	for _, who := range []string{"Alice", "Bob", "Carol", "Dave"} {
		add(fmt.Sprintf("User: %s from our purchasing team will place the next order.", who))
		add(fmt.Sprintf("User: send the invoices to %s, not to me.", who))
	}
	add("User: I prefer email over phone calls.")
	add("User: I prefer phone calls over email.")
	add("User: I like short answers.")
	add("User: I like detailed answers with examples.")
	add("用户：我喜欢简洁的回复，不要长篇大论。")
	add("用户：我喜欢详细的回复，最好带例子。")
	add("User: my membership is Gold.")
	add("User: my membership is Silver.")
	add("User: the package arrived damaged.")
	add("User: the package arrived on time.")
	add("User: the package arrived but the box was wet.")
	add("用户：包裹到了，但是外箱破了。")
	add("用户：包裹按时到了。")
	distinct := len(turns)
	// Said again word for word (or for punctuation and case): the same
	// fact, which dedup must merge.
	repeats = map[int]int{}
	for _, i := range []int{0, 17, 60} {
		repeats[len(turns)] = i
		add(turns[i])
	}
	repeats[len(turns)] = distinct - 1
	add("  " + turns[distinct-1] + "  ")
	return turns, repeats
}

// TestLongConversationKeepsEveryTurn writes a long conversation through the
// default model and the dedup rule at its calibrated threshold, in one
// write as ingestion does: no distinct turn is merged into another, and
// the turns said twice are.
func TestLongConversationKeepsEveryTurn(t *testing.T) {
	e, err := embedding.LoadUSE("")
	if err != nil {
		t.Fatalf("%v: run scripts/model.sh (scripts/test.sh does)", err)
	}
	cal, err := app.Calibration(app.Defaults(), e)
	if err != nil {
		t.Fatal(err)
	}
	turns, repeats := conversation()
	if n := len(turns) - len(repeats); n < 100 {
		t.Fatalf("%d distinct turns, want at least 100", n)
	}
	vecs, err := e.Embed(context.Background(), turns)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	ms := make([]memory.Memory, len(turns))
	for i, text := range turns {
		ms[i] = memory.Memory{
			ID: fmt.Sprintf("turn-%03d", i), Tenant: "t", UserID: "u", AgentID: "a", SessionID: "s", Type: memory.TypeEpisodic,
			Content: text, Embedding: vecs[i], EmbeddingModel: e.Model(), EmbeddingDim: e.Dimension(),
			Status: memory.StatusActive, Importance: 0.5, Confidence: 0.9, Version: 1,
			ValidFrom: at.Add(time.Duration(i) * time.Minute), CreatedAt: at.Add(time.Duration(i) * time.Minute),
		}
	}
	rules := memory.WriteRules{Dedup: true, DuplicateThreshold: cal.DuplicateThreshold}
	plan := memory.PlanBatch(memory.BatchState{}, ms, nil, rules)
	if plan.N != len(ms) {
		t.Fatalf("the plan covers %d of %d turns", plan.N, len(ms))
	}
	// How alike the turns are: the closest distinct pair shows what the
	// threshold had to stay above.
	closest, pair := -1.0, [2]int{}
	for i := range ms {
		for j := range i {
			if _, again := repeats[i]; again {
				continue
			}
			if c := facts.Cosine(vecs[i], vecs[j]); c > closest {
				closest, pair = c, [2]int{j, i}
			}
		}
	}
	t.Logf("%d turns, threshold %.4f; closest distinct turns at cosine %.4f: %q / %q",
		len(ms), cal.DuplicateThreshold, closest, turns[pair[0]], turns[pair[1]])
	for i, w := range plan.Written {
		target, again := repeats[i]
		switch {
		case again && (w.Outcome != memory.OutcomeReinforced || w.Memory.ID != ms[target].ID):
			t.Errorf("turn %d %q, said before as turn %d: outcome %s of %s, want it merged", i, turns[i], target, w.Outcome, w.Memory.ID)
		case !again && w.Outcome != memory.OutcomeCreated:
			t.Errorf("distinct turn %d %q: outcome %s into %q", i, turns[i], w.Outcome, w.Memory.Content)
		}
	}
}
