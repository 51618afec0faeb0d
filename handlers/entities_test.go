package handlers_test

import (
	"net/http"
	"strings"
	"testing"

	"mneme/internal/apptest"
	"mneme/memory"
)

// TestEntityNamesStayWithTheirMemory: an entity is the tenant's, but the
// name a writer gives it belongs to that writer's memory. finance-bot's
// confidential note names an order with words of its own; support-bot,
// bob's memories, the analyst and bob's export see the order by the names
// they may read, never those words, and erasing a user takes the names
// their memories gave with them.
func TestEntityNamesStayWithTheirMemory(t *testing.T) {
	f := apptest.Start(t)
	const order, secret = "SO-77001", "sold below cost on a CFO exception"
	r := f.Do(t, "finance-bot", "POST", "/v1/memories", memory.NewMemory{
		UserID: "alice", Type: memory.TypeSemantic, Kind: "internal_cost", Sensitivity: memory.SensitivityConfidential,
		Content: "Order SO-77001 is priced for Lianhua.", Entities: []memory.Entity{{ID: order, Kind: "CFO-watch", Name: order + ": " + secret, Aliases: []string{"the " + secret}}},
	})
	expectResponse(t, "finance-bot's confidential note", r, http.StatusCreated)
	hidden := func(what string, r apptest.Response) {
		t.Helper()
		if r.Status != http.StatusOK && r.Status != http.StatusCreated {
			t.Fatalf("%s: status %d: %s", what, r.Status, r.Body)
		}
		if strings.Contains(string(r.Body), "CFO") {
			t.Errorf("%s shows the confidential kind or name: %s", what, r.Body)
		}
	}
	// The write's answer tells nothing of what others call the order, not
	// even that someone does.
	hidden("support-bot's note about bob", f.Do(t, "support-bot", "POST", "/v1/memories", memory.NewMemory{
		UserID: "bob", Type: memory.TypeSemantic, Content: "Bob asked where order SO-77001 is.",
		Entities: []memory.Entity{{ID: order, Kind: "order", Name: order}},
	}))
	hidden("support-bot lists bob's memories", f.Do(t, "support-bot", "GET", "/v1/memories?user_id=bob", nil))
	hidden("support-bot recalls about the order", f.Do(t, "support-bot", "POST", "/v1/recall", memory.RecallRequest{UserID: "bob", Query: "Where is order SO-77001?"}))
	hidden("the analyst searches entities", f.Do(t, apptest.Analyst, "GET", "/v1/graph/entities?q=so-77001", nil))
	hidden("the analyst's neighbourhood", f.Do(t, apptest.Analyst, "GET", "/v1/graph/neighbourhood?from=entity:"+order+"&hops=2", nil))
	hidden("bob's export", f.Do(t, apptest.Admin, "GET", "/v1/users/bob/export", nil))
	r = f.Do(t, apptest.Analyst, "GET", "/v1/graph/entities?q=cfo", nil)
	hidden("the analyst searches by the confidential words", r)
	if strings.Contains(string(r.Body), order) {
		t.Errorf("the analyst found the order by its confidential name: %s", r.Body)
	}
	// The names a memory gives are its own, for whoever may read it.
	r = f.Do(t, "finance-bot", "GET", "/v1/memories?user_id=alice&kind=internal_cost", nil)
	expectResponse(t, "finance-bot lists its note", r, http.StatusOK)
	if !strings.Contains(string(r.Body), secret) {
		t.Errorf("finance-bot's own note lost the name it gave: %s", r.Body)
	}

	const gone = "erin-entities"
	f.AddUser(t, gone)
	r = f.Do(t, "support-bot", "POST", "/v1/memories", memory.NewMemory{
		UserID: gone, Type: memory.TypeSemantic, Content: "Erin's parcels go to her home address.",
		Entities: []memory.Entity{{ID: "addr-77", Kind: "address", Name: "12 Hidden Lane, Ningbo"}},
	})
	expectResponse(t, "a note about erin", r, http.StatusCreated)
	r = f.Do(t, "support-bot", "POST", "/v1/memories", memory.NewMemory{
		UserID: "bob", Type: memory.TypeSemantic, Content: "Bob ships to the same depot as another customer.",
		Entities: []memory.Entity{{ID: "addr-77", Kind: "address"}},
	})
	expectResponse(t, "a note about bob on the same address", r, http.StatusCreated)
	expectResponse(t, "erase erin", f.Do(t, apptest.Admin, "DELETE", "/v1/users/"+gone, nil), http.StatusOK)
	for _, r := range []apptest.Response{
		f.Do(t, apptest.Analyst, "GET", "/v1/graph/entities?q=addr-77", nil),
		f.Do(t, "support-bot", "GET", "/v1/memories?user_id=bob", nil),
		f.Do(t, apptest.Admin, "GET", "/v1/users/bob/export", nil),
	} {
		if r.Status != http.StatusOK || strings.Contains(string(r.Body), "Hidden Lane") {
			t.Errorf("after erin's erase: %d %s", r.Status, r.Body)
		}
	}
}

// TestRecallNamesOnlyWhatTheCallerMayRead: a name or alias that only an
// unreadable memory gives an entity does not make recall answer: it would
// tell whether a guess is right. (graph's TestExpandNamedWithinScope holds
// the second hop to the same.)
func TestRecallNamesOnlyWhatTheCallerMayRead(t *testing.T) {
	f := apptest.Start(t)
	write := func(who string, m memory.NewMemory) {
		t.Helper()
		expectResponse(t, who+" writes "+m.Content, f.Do(t, who, "POST", "/v1/memories", m), http.StatusCreated)
	}
	confidential := func(content string, entities ...memory.Entity) memory.NewMemory {
		return memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Kind: "internal_cost", Sensitivity: memory.SensitivityConfidential, Content: content, Entities: entities}
	}
	// An order support-bot knows by id only; finance-bot's note calls it
	// something else.
	write("finance-bot", confidential("Order SO-88001 carries a special discount.", memory.Entity{ID: "SO-88001", Kind: "order", Name: "Nightingale", Aliases: []string{"project lark"}}))
	write("support-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Content: "Alice asked when order SO-88001 ships.", Entities: []memory.Entity{{ID: "SO-88001", Kind: "order"}}})
	type answer struct {
		Search struct {
			Candidates struct{ Graph int } `json:"candidates"`
		}
	}
	recall := func(q string) (answer, string) {
		t.Helper()
		r := f.Do(t, "support-bot", "POST", "/v1/recall", memory.RecallRequest{UserID: "alice", Query: q})
		expectResponse(t, "recall "+q, r, http.StatusOK)
		var a answer
		r.Decode(t, &a)
		return a, string(r.Body)
	}
	for _, guess := range []string{"What about Nightingale?", "Any news on project lark?"} {
		if a, body := recall(guess); a.Search.Candidates.Graph != 0 || strings.Contains(body, `"gate":"entity"`) {
			t.Errorf("%q matched a name only finance-bot's note gives: %s", guess, body)
		}
	}
}

// TestEntitySearchCountsEveryReadableMention: an entity found by a name one
// readable memory gives it counts every readable memory that mentions it,
// named or not, and goes by that name.
func TestEntitySearchCountsEveryReadableMention(t *testing.T) {
	f := apptest.Start(t)
	for _, e := range []memory.Entity{{ID: "lt-5", Kind: "company", Name: "Lotus Trading"}, {ID: "lt-5"}} {
		r := f.Do(t, "support-bot", "POST", "/v1/memories", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Content: "Alice buys from " + e.ID + " " + e.Name + ".", Entities: []memory.Entity{e}})
		expectResponse(t, "a note on "+e.ID, r, http.StatusCreated)
	}
	for _, q := range []string{"lotus", "lt-5"} {
		r := f.Do(t, apptest.Analyst, "GET", "/v1/graph/entities?q="+q, nil)
		expectResponse(t, "search "+q, r, http.StatusOK)
		var got struct {
			Entities []struct {
				ID, Name, Kind string
				Count          int64
			}
		}
		r.Decode(t, &got)
		if len(got.Entities) != 1 || got.Entities[0].Count != 2 || got.Entities[0].Name != "Lotus Trading" || got.Entities[0].Kind != "company" {
			t.Errorf("q=%s: %+v, want lt-5, Lotus Trading, a company, in 2 memories", q, got.Entities)
		}
	}
}
