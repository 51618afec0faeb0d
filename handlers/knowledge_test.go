package handlers_test

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/client"
	"mneme/documents"
	graphdocs "mneme/graph/documents"
	"mneme/identity"
	"mneme/internal/apptest"
	"mneme/memory"
	"mneme/policyadmin"
)

// handbook is a Markdown document of n sections, each a rule of its own;
// edited names sections whose numbers change, removed one left out.
func handbook(n int, edited map[int]bool, removed int) string {
	var b strings.Builder
	b.WriteString("# Sales handbook\n\n")
	for i := range n {
		if i == removed {
			continue
		}
		amount := 1000 + 37*i
		if edited[i] {
			amount += 500000
		}
		fmt.Fprintf(&b, "## Rule %03d\n\nOrders from district %d above %d CNY need the approval of desk %d before they ship.\n\n", i, i, amount, 900+i)
	}
	return b.String()
}

func importDoc(t *testing.T, f *apptest.Fixture, who string, r documents.ImportRequest) (apptest.Response, documents.Result) {
	t.Helper()
	resp := f.Do(t, who, http.MethodPost, "/v1/knowledge/import", r)
	var res documents.Result
	if resp.Status == http.StatusOK || resp.Status == http.StatusAccepted {
		resp.Decode(t, &res)
	}
	return resp, res
}

func history(t *testing.T, f *apptest.Fixture, doc string) graphdocs.History {
	t.Helper()
	h, err := graphdocs.New(f.App.Store.Runner()).History(t.Context(), f.Tenant, doc)
	if err != nil {
		t.Fatalf("history of %s: %v", doc, err)
	}
	return h
}

func checkHistory(t *testing.T, got graphdocs.History, active, superseded, archived, edges int) {
	t.Helper()
	if got.Statuses[memory.StatusActive] != active || got.Statuses[memory.StatusSuperseded] != superseded ||
		got.Statuses[memory.StatusArchived] != archived || got.Supersessions != edges || len(got.Statuses) > 3 {
		t.Errorf("in Neo4j: %+v; want %d active, %d superseded, %d archived, %d SUPERSEDES", got, active, superseded, archived, edges)
	}
}

// TestKnowledgeReimportWritesOnlyWhatChanged imports a 50-section document,
// then the same with three sections edited and one removed, then that
// again: three superseded, one retired, the rest untouched, as counted in
// the graph; and nobody but an admin imports anything.
func TestKnowledgeReimportWritesOnlyWhatChanged(t *testing.T) {
	f := apptest.Start(t)
	const doc = "sales-handbook"
	first := documents.ImportRequest{ID: doc, Format: "markdown", Content: handbook(50, nil, -1)}

	for _, who := range []string{"order-bot", "alice"} {
		if r, _ := importDoc(t, f, who, first); r.Status != http.StatusForbidden || !strings.Contains(string(r.Body), `"code":"forbidden"`) {
			t.Errorf("import as %s: %d %s, want 403 forbidden", who, r.Status, r.Body)
		}
	}
	checkHistory(t, history(t, f, doc), 0, 0, 0, 0)

	r, res := importDoc(t, f, apptest.Admin, first)
	if r.Status != http.StatusOK || res.Sections != 50 || res.Counts == nil ||
		*res.Counts != (documents.Counts{Created: 50}) {
		t.Fatalf("first import: %d %s, want 200 with 50 created", r.Status, r.Body)
	}
	checkHistory(t, history(t, f, doc), 50, 0, 0, 0)

	second := first
	second.Content = handbook(50, map[int]bool{3: true, 17: true, 41: true}, 29)
	r, res = importDoc(t, f, apptest.Admin, second)
	if r.Status != http.StatusOK || res.Counts == nil ||
		*res.Counts != (documents.Counts{Superseded: 3, Retired: 1, Unchanged: 46}) {
		t.Fatalf("second import: %d %s, want 3 superseded, 1 retired, 46 unchanged", r.Status, r.Body)
	}
	checkHistory(t, history(t, f, doc), 49, 3, 1, 3)

	r, res = importDoc(t, f, apptest.Admin, second)
	if r.Status != http.StatusOK || res.Counts == nil || *res.Counts != (documents.Counts{Unchanged: 49}) {
		t.Fatalf("identical re-import: %d %s, want 49 unchanged and nothing else", r.Status, r.Body)
	}
	checkHistory(t, history(t, f, doc), 49, 3, 1, 3)

	// The edited rule reads as edited; the removed one is archived with
	// its validity closed.
	list := f.Do(t, apptest.Admin, http.MethodGet, "/v1/knowledge/documents", nil)
	var docs struct{ Documents []documents.Info }
	list.Decode(t, &docs)
	if list.Status != http.StatusOK || len(docs.Documents) != 1 || docs.Documents[0].ID != doc ||
		docs.Documents[0].Sections != 49 || docs.Documents[0].Scope != memory.ScopeTenant || docs.Documents[0].Title != "Sales handbook" {
		t.Fatalf("list: %d %s, want the handbook with 49 sections in the tenant's scope", list.Status, list.Body)
	}
	if r := f.Do(t, "order-bot", http.MethodGet, "/v1/knowledge/documents", nil); r.Status != http.StatusForbidden {
		t.Errorf("list as an agent: %d, want 403", r.Status)
	}

	rm := f.Do(t, apptest.Admin, http.MethodDelete, "/v1/knowledge/documents/"+doc, nil)
	if rm.Status != http.StatusOK || !strings.Contains(string(rm.Body), `"retired":49`) {
		t.Fatalf("remove: %d %s, want 49 retired", rm.Status, rm.Body)
	}
	checkHistory(t, history(t, f, doc), 0, 3, 50, 3)
	list = f.Do(t, apptest.Admin, http.MethodGet, "/v1/knowledge/documents", nil)
	if !strings.Contains(string(list.Body), `"documents":[]`) {
		t.Errorf("list after remove: %s, want no document", list.Body)
	}
	// Nothing is left to remove: 404, as for an id never imported.
	for _, id := range []string{doc, "never-imported"} {
		again := f.Do(t, apptest.Admin, http.MethodDelete, "/v1/knowledge/documents/"+id, nil)
		if again.Status != http.StatusNotFound || !strings.Contains(string(again.Body), `"code":"not_found"`) {
			t.Errorf("remove %s again: %d %s, want 404 not_found", id, again.Status, again.Body)
		}
	}
}

// TestKnowledgeImportIsGuarded: a section holding a password refuses the
// import and writes nothing; a card number is masked.
func TestKnowledgeImportIsGuarded(t *testing.T) {
	f := apptest.Start(t)
	secret := documents.ImportRequest{ID: "it-guide", Content: "# IT\n\n## Wifi\n\nThe office wifi password: Hx7!pQ29zLm\n\n## Printers\n\nPrinters sit on floor 3.\n"}
	r, _ := importDoc(t, f, apptest.Admin, secret)
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), "guard_rejected") || strings.Contains(string(r.Body), "Hx7!pQ29zLm") {
		t.Fatalf("import with a password: %d %s, want 422 guard_rejected without the value", r.Status, r.Body)
	}
	checkHistory(t, history(t, f, "it-guide"), 0, 0, 0, 0)

	// Past the first batch, the refusal names the section as the document
	// has it, not its place in a batch.
	long := handbook(150, nil, -1) + "## Wifi\n\nThe office wifi password: Hx7!pQ29zLm\n"
	r, _ = importDoc(t, f, apptest.Admin, documents.ImportRequest{ID: "long-guide", Content: long})
	if r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), `section 151 (\"Wifi\")`) {
		t.Errorf("import with a password in section 151: %d %s, want 422 naming section 151", r.Status, r.Body)
	}

	const card = "6222 0212 3456 7890 128"
	r, res := importDoc(t, f, apptest.Admin, documents.ImportRequest{ID: "billing", Content: "# Billing\n\n## Refunds\n\nRefunds of order 5531 go back to card " + card + " within 7 days.\n"})
	if r.Status != http.StatusOK || res.Counts == nil || res.Counts.Created != 1 {
		t.Fatalf("import with a card: %d %s, want 200 and one section", r.Status, r.Body)
	}
	list := f.Do(t, apptest.Admin, http.MethodGet, "/v1/memories?kind="+documents.KindSection+"&limit=10", nil)
	if strings.Contains(string(list.Body), card) || !strings.Contains(string(list.Body), "[REDACTED:bank_card]") {
		t.Errorf("imported card: %s, want it masked", list.Body)
	}
}

// recallFinds reports whether who's recall for alice returns a memory
// holding text, and of which type.
func recallFinds(t *testing.T, f *apptest.Fixture, who, query, text string) (bool, string) {
	t.Helper()
	rec := f.Do(t, who, http.MethodPost, "/v1/recall", memory.RecallRequest{UserID: "alice", Query: query})
	if rec.Status != http.StatusOK {
		t.Fatalf("recall as %s: %d %s", who, rec.Status, rec.Body)
	}
	var got memory.RecallResult
	rec.Decode(t, &got)
	for _, m := range got.Memories {
		if strings.Contains(m.Memory.Content, text) {
			return true, m.Memory.Type
		}
	}
	return false, ""
}

// TestKnowledgeRecalledByAgents: an agent's recall about a user finds an
// imported procedure of the tenant by a question; a team's section is
// recalled by the team's agent and not by another.
func TestKnowledgeRecalledByAgents(t *testing.T) {
	f := apptest.Start(t)
	doc := documents.ImportRequest{ID: "returns", Content: "# Returns\n\n" +
		"## How to handle damaged items\n\n1. Ask the customer for a photo of the damage.\n2. Open a replacement order within 24 hours.\n3. Refund the shipping fee.\n\n" +
		"## Opening hours\n\nThe warehouse in Suzhou ships Monday to Saturday.\n"}
	r, res := importDoc(t, f, apptest.Admin, doc)
	if r.Status != http.StatusOK || res.Counts == nil || res.Counts.Created != 2 {
		t.Fatalf("import: %d %s, want 2 created", r.Status, r.Body)
	}
	if ok, typ := recallFinds(t, f, "order-bot", "alice got a damaged item, how do I handle it?", "photo of the damage"); !ok || typ != memory.TypeProcedural {
		t.Errorf("recall as order-bot: found %v (%s), want the procedure", ok, typ)
	}

	// An agent of a team, registered as the API does.
	if r := f.Do(t, apptest.Admin, http.MethodPost, "/v1/principals", identity.NewPrincipal{Kind: memory.KindAgent, ID: "desk-bot", Team: "returns-desk"}); r.Status != http.StatusCreated {
		t.Fatalf("create agent: %d %s", r.Status, r.Body)
	}
	kr := f.Do(t, apptest.Admin, http.MethodPost, "/v1/keys", identity.NewKey{OwnerKind: memory.KindAgent, OwnerID: "desk-bot"})
	var key identity.IssuedKey
	kr.Decode(t, &key)
	f.Keys["desk-bot"] = key.Secret
	team := documents.ImportRequest{ID: "desk-notes", Scope: "team", Team: "returns-desk",
		Content: "# Desk notes\n\n## Courier for refunds\n\nRefund parcels from Hangzhou go with courier SF-2231 only.\n"}
	if r, res := importDoc(t, f, apptest.Admin, team); r.Status != http.StatusOK || res.Counts == nil || res.Counts.Created != 1 {
		t.Fatalf("team import: %d %s", r.Status, r.Body)
	}
	const q = "which courier takes refund parcels from Hangzhou?"
	if ok, _ := recallFinds(t, f, "desk-bot", q, "SF-2231"); !ok {
		t.Errorf("the team's agent does not recall the team's section")
	}
	if ok, _ := recallFinds(t, f, "order-bot", q, "SF-2231"); ok {
		t.Errorf("an agent of another team recalls the team's section")
	}
}

// recallFindsAsOf is recallFinds for what was true at then.
func recallFindsAsOf(t *testing.T, f *apptest.Fixture, who, query, text string, then time.Time) bool {
	t.Helper()
	rec := f.Do(t, who, http.MethodPost, "/v1/recall", memory.RecallRequest{UserID: "alice", Query: query, AsOf: &then})
	if rec.Status != http.StatusOK {
		t.Fatalf("recall as %s as of %s: %d %s", who, then, rec.Status, rec.Body)
	}
	var got memory.RecallResult
	rec.Decode(t, &got)
	return slices.ContainsFunc(got.Memories, func(m memory.Recalled) bool { return strings.Contains(m.Memory.Content, text) })
}

// TestKnowledgeRemovedStaysInAsOf: a removed document's section no longer
// holds, but as_of a time it was in force still answers what the rule was
// then; a memory an agent deleted is gone from as_of too.
func TestKnowledgeRemovedStaysInAsOf(t *testing.T) {
	f := apptest.Start(t)
	if r, res := importDoc(t, f, apptest.Admin, documents.ImportRequest{ID: "ribbons",
		Content: "# Ribbon\n\nThe ribbon colour for gift orders is always crimson red.\n"}); r.Status != http.StatusOK || res.Counts == nil || res.Counts.Created != 1 {
		t.Fatalf("import: %d %s, want 1 created", r.Status, r.Body)
	}
	forgotten := create(t, f, "support-bot", client.NewMemory{
		UserID: "alice", Type: client.TypeProfile, Content: "Alice wants crimson red ribbon on her gift orders.",
	})
	then := time.Now().UTC()
	const q, rule, hers = "What colour is the gift ribbon?", "always crimson red", "Alice wants crimson red ribbon"
	if !recallFindsAsOf(t, f, "support-bot", q, rule, then) || !recallFindsAsOf(t, f, "support-bot", q, hers, then) {
		t.Fatalf("as of %s before the removal, the section or alice's memory is missing", then)
	}
	if n, err := f.Client(t, apptest.Admin).RemoveKnowledge(t.Context(), "ribbons"); err != nil || n != 1 {
		t.Fatalf("remove: %d, %v; want 1 section archived", n, err)
	}
	if _, err := f.Client(t, "support-bot").Delete(t.Context(), forgotten.ID); err != nil {
		t.Fatalf("support-bot deletes its memory: %v", err)
	}
	if ok, _ := recallFinds(t, f, "support-bot", q, rule); ok {
		t.Errorf("recall now finds the removed section")
	}
	if !recallFindsAsOf(t, f, "support-bot", q, rule, then) {
		t.Errorf("as of %s, when it was in force, the removed section is not found", then)
	}
	if recallFindsAsOf(t, f, "support-bot", q, hers, then) {
		t.Errorf("as of %s, the memory support-bot deleted is found again", then)
	}
}

// TestKnowledgeLargeImportIsQueued: a document of more sections than
// documents.QueueAbove is answered 202 with a job that writes it.
func TestKnowledgeLargeImportIsQueued(t *testing.T) {
	f := apptest.Start(t)
	const n = documents.QueueAbove + 20
	r, res := importDoc(t, f, apptest.Admin, documents.ImportRequest{ID: "big", Content: handbook(n, nil, -1)})
	if r.Status != http.StatusAccepted || res.Job == nil || res.Sections != n {
		t.Fatalf("large import: %d %s, want 202 and a job", r.Status, r.Body)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		j := f.Do(t, apptest.Admin, http.MethodGet, "/v1/jobs/"+res.Job.ID, nil)
		var st memory.JobStatus
		j.Decode(t, &st)
		if st.Status == memory.JobDone {
			if len(st.Memories) != n {
				t.Errorf("job: %d memories, want %d", len(st.Memories), n)
			}
			break
		}
		if st.Status == memory.JobFailed || time.Now().After(deadline) {
			t.Fatalf("job: %s", j.Body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	checkHistory(t, history(t, f, "big"), n, 0, 0, 0)
}

// TestKnowledgeIDWithSlashes: a document named as a knowledge base names its
// pages (guides/returns) is removed whether the client escapes the slash
// (as package client does) or not.
func TestKnowledgeIDWithSlashes(t *testing.T) {
	f := apptest.Start(t)
	const id = "guides/returns"
	remove := map[string]func() (int, string){
		"escaped, by the client": func() (int, string) {
			n, err := f.Client(t, apptest.Admin).RemoveKnowledge(t.Context(), id)
			if err != nil {
				return 0, err.Error()
			}
			return n, ""
		},
		"raw": func() (int, string) {
			r := f.Do(t, apptest.Admin, http.MethodDelete, "/v1/knowledge/documents/"+id, nil)
			var got struct {
				Document string `json:"document"`
				Retired  int    `json:"retired"`
			}
			r.Decode(t, &got)
			if r.Status != http.StatusOK || got.Document != id {
				return 0, fmt.Sprintf("%d %s", r.Status, r.Body)
			}
			return got.Retired, ""
		},
	}
	for name, rm := range remove {
		t.Run(name, func(t *testing.T) {
			r, _ := importDoc(t, f, apptest.Admin, documents.ImportRequest{ID: id, Content: "# Returns\n\nReturns need the receipt.\n"})
			if r.Status != http.StatusOK {
				t.Fatalf("import: %d %s", r.Status, r.Body)
			}
			if n, problem := rm(); problem != "" || n != 1 {
				t.Fatalf("remove: retired %d, %s; want 1", n, problem)
			}
			list := f.Do(t, apptest.Admin, http.MethodGet, "/v1/knowledge/documents", nil)
			if !strings.Contains(string(list.Body), `"documents":[]`) {
				t.Errorf("list after remove: %s, want no document", list.Body)
			}
		})
	}
}

// TestKnowledgeImportRefusals: what the import cannot take is a 4xx with the
// code that names it, never a 500 or a write that fails halfway: an id one
// byte too long for its sections' source, HTML nested deeper than the
// parser goes (as old word-processor HTML with unclosed tags is).
func TestKnowledgeImportRefusals(t *testing.T) {
	f := apptest.Start(t)
	longest := strings.Repeat("d", 61)
	if r, _ := importDoc(t, f, apptest.Admin, documents.ImportRequest{ID: longest, Content: "Shipping to Lhasa takes nine days."}); r.Status != http.StatusOK {
		t.Errorf("the longest id: %d %s", r.Status, r.Body)
	}
	for _, tc := range []struct {
		name, code string
		r          documents.ImportRequest
	}{
		{"an id too long", "document_id", documents.ImportRequest{ID: longest + "d", Content: "Shipping to Lhasa takes nine days."}},
		{"HTML nested too deep", "document_format", documents.ImportRequest{ID: "deep", Format: "html", Content: "<p>Rule B.</p>" + strings.Repeat("<font>x ", 520)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := importDoc(t, f, apptest.Admin, tc.r)
			var e struct{ Code string }
			r.Decode(t, &e)
			if r.Status != http.StatusBadRequest || e.Code != tc.code {
				t.Errorf("%d %s, want 400 %s", r.Status, r.Body, tc.code)
			}
		})
	}
}

// Importing and removing a document are admin acts in the audit trail, done
// or failed, with the codes the API answers; an agent's refused attempt is
// left to the decision log.
func TestKnowledgeActsAreAudited(t *testing.T) {
	f := apptest.Start(t)
	if r, _ := importDoc(t, f, apptest.Admin, documents.ImportRequest{ID: "returns", Content: "# Returns\n\nReturns are accepted within 7 days.\n"}); r.Status != http.StatusOK {
		t.Fatalf("import: %d %s", r.Status, r.Body)
	}
	if r, _ := importDoc(t, f, apptest.Admin, documents.ImportRequest{ID: "empty", Content: "   "}); r.Status != http.StatusBadRequest {
		t.Fatalf("empty import: %d %s", r.Status, r.Body)
	}
	if r, _ := importDoc(t, f, "support-bot", documents.ImportRequest{ID: "agents", Content: "# Rule\n\nAgents may not import."}); r.Status != http.StatusForbidden {
		t.Fatalf("agent import: %d %s", r.Status, r.Body)
	}
	for _, id := range []string{"returns", "nope"} {
		f.Do(t, apptest.Admin, http.MethodDelete, "/v1/knowledge/documents/"+id, nil)
	}
	type brief struct{ Action, Target, Outcome, Error, Created, Retired string }
	var got []brief
	for _, e := range auditEvents(t, f, apptest.Admin, "?action=knowledge.") {
		got = append(got, brief{e.Action, e.Target, e.Outcome, e.Error, e.Details["created"], e.Details["retired"]})
	}
	slices.Reverse(got) // the trail reads newest first
	want := []brief{
		{documents.AuditImport, "document:returns", memory.AuditOK, "", "1", "0"},
		{documents.AuditImport, "document:empty", memory.AuditFailed, "document_empty", "", ""},
		{documents.AuditRemove, "document:returns", memory.AuditOK, "", "", "1"},
		{documents.AuditRemove, "document:nope", memory.AuditFailed, "not_found", "", "0"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("trail (-want +got):\n%s", d)
	}
}

// What the guard finds in a document's title is masked in the documents'
// list, as in its sections; a document id holding a secret, which the
// import refuses, is not repeated by the audit trail.
func TestKnowledgeTitleAndTrailHoldNoSecrets(t *testing.T) {
	f := apptest.Start(t)
	if r, _ := importDoc(t, f, apptest.Admin, documents.ImportRequest{ID: "hotline", Content: "# Call 13812345678 or ops@example.com\n\nThe hotline answers from 9 to 18.\n"}); r.Status != http.StatusOK {
		t.Fatalf("import: %d %s", r.Status, r.Body)
	}
	list := f.Do(t, apptest.Admin, http.MethodGet, "/v1/knowledge/documents", nil)
	if list.Status != http.StatusOK || strings.Contains(string(list.Body), "13812345678") || strings.Contains(string(list.Body), "ops@example.com") || !strings.Contains(string(list.Body), "hotline") {
		t.Errorf("documents: %d %s", list.Status, list.Body)
	}
	const secret = "sk-live-4eC39HqLyjWDarjtT1zdp7dc"
	if r, _ := importDoc(t, f, apptest.Admin, documents.ImportRequest{ID: secret, Content: "# Rule\n\nShip on Mondays.\n"}); r.Status == http.StatusOK {
		t.Fatalf("an id holding a secret was imported")
	}
	for _, e := range auditEvents(t, f, apptest.Admin, "?action=knowledge.") {
		if strings.Contains(e.Target, "sk-live") {
			t.Errorf("trail target %q", e.Target)
		}
	}
}

// TestImportBodyLimit: an admin's document may take its own limit (4 MiB),
// past the body limit of other requests, and a larger one is refused as a
// document too large; anyone else's body keeps the common limit, and is
// refused 403 as any request of theirs to an admin route is, whatever it
// holds.
func TestImportBodyLimit(t *testing.T) {
	f := apptest.Start(t)
	doc := func(n int) map[string]string {
		return map[string]string{"id": "big", "format": "text", "content": strings.Repeat("Cartons ship on Fridays. ", n/25)}
	}
	wantError(t, "an admin's document past its limit", f.Do(t, apptest.Admin, http.MethodPost, "/v1/knowledge/import", doc(4<<20+1000)),
		http.StatusRequestEntityTooLarge, "document_too_large")
	wantError(t, "an agent's body past the common limit", f.Do(t, "support-bot", http.MethodPost, "/v1/knowledge/import", doc(1<<20+1000)),
		http.StatusForbidden, "forbidden")
}

// TestKnowledgeImportIntoAnUnknownTeam: team knowledge for a team no agent
// is in (a mistyped name) would reach no one, so it is refused as 422
// unknown_team and nothing is written, as a grant naming no agent is
// refused as unknown_principal. A document already in a team's scope can
// still be imported again once its agents have left the team.
func TestKnowledgeImportIntoAnUnknownTeam(t *testing.T) {
	f := apptest.Start(t)
	content := "# Desk\n\n## Courier\n\nRefund parcels go with courier SF-2231 only.\n"
	r, _ := importDoc(t, f, apptest.Admin, documents.ImportRequest{ID: "desk", Scope: "team", Team: "suport", Content: content})
	expectResponse(t, "import into a team no agent is in", r, http.StatusUnprocessableEntity, "unknown_team")
	list := f.Do(t, apptest.Admin, http.MethodGet, "/v1/knowledge/documents", nil)
	if list.Status != http.StatusOK || strings.Contains(string(list.Body), `"desk"`) {
		t.Errorf("documents after the refused import: %d %s", list.Status, list.Body)
	}

	// support-bot's team is support (apptest.Agents).
	if r, res := importDoc(t, f, apptest.Admin, documents.ImportRequest{ID: "desk", Scope: "team", Team: "support", Content: content}); r.Status != http.StatusOK || res.Counts == nil || res.Counts.Created != 1 {
		t.Fatalf("import into the support team: %d %s", r.Status, r.Body)
	}
	other := "sales"
	r = f.Do(t, apptest.Admin, http.MethodPatch, "/v1/principals/agent/support-bot", identity.PrincipalChange{Team: &other})
	expectResponse(t, "move support-bot to sales", r, http.StatusOK)
	if r, _ := importDoc(t, f, apptest.Admin, documents.ImportRequest{ID: "desk", Scope: "team", Team: "support", Content: content + "\n## Hours\n\nThe desk opens at nine.\n"}); r.Status != http.StatusOK {
		t.Errorf("re-import of a team's document after its agents left: %d %s", r.Status, r.Body)
	}
	r, _ = importDoc(t, f, apptest.Admin, documents.ImportRequest{ID: "desk-2", Scope: "team", Team: "support", Content: content})
	expectResponse(t, "a new document for the emptied team", r, http.StatusUnprocessableEntity, "unknown_team")
}

// TestKnowledgeListingFollowsThePolicy: the documents an admin lists are
// those whose knowledge the tenant's policy lets the admin read; under a
// policy that hides the knowledge base from reads, the listing shows none,
// as recall and reads would.
func TestKnowledgeListingFollowsThePolicy(t *testing.T) {
	f := apptest.Start(t)
	if r, _ := importDoc(t, f, apptest.Admin, documents.ImportRequest{ID: "handbook", Content: handbook(2, nil, -1)}); r.Status != http.StatusOK {
		t.Fatalf("import: %d %s", r.Status, r.Body)
	}
	listed := func() int {
		t.Helper()
		r := f.Do(t, apptest.Admin, http.MethodGet, "/v1/knowledge/documents", nil)
		expectResponse(t, "list documents", r, http.StatusOK)
		var list struct{ Documents []documents.Info }
		r.Decode(t, &list)
		return len(list.Documents)
	}
	if n := listed(); n != 1 {
		t.Fatalf("listed %d documents, want the handbook", n)
	}

	hidden := edited(bundled(t, f), "authz.rego", func(s string) string {
		s = strings.Replace(s, "\tknown_sensitivity\n}", "\tknown_sensitivity\n\tnot kb_hidden\n}", 1)
		return s + "\nkb_hidden if {\n\tinput.action == \"read\"\n\tinput.resource.kind == \"kb_section\"\n}\n"
	})
	r := f.Do(t, apptest.Admin, http.MethodPut, "/v1/policy", policyadmin.NewPolicy{Message: "no knowledge base", Modules: hidden})
	expectResponse(t, "push a policy hiding the knowledge base", r, http.StatusCreated)
	var pushed struct{ Revision policyadmin.PolicyRevision }
	r.Decode(t, &pushed)
	r = f.Do(t, apptest.Admin, http.MethodPost, "/v1/policy/revisions/"+strconv.FormatInt(pushed.Revision.Number, 10)+"/activate", nil)
	expectResponse(t, "activate it", r, http.StatusOK)
	if n := listed(); n != 0 {
		t.Errorf("listed %d documents under a policy that lets the admin read none of their knowledge", n)
	}
}

// TestKnowledgeListCountsSectionsInForce: a section whose memory is deleted
// leaves the document's count, and importing the document again writes it
// anew.
func TestKnowledgeListCountsSectionsInForce(t *testing.T) {
	f := apptest.Start(t)
	doc := documents.ImportRequest{ID: "hours", Content: "# Hours\n\n## Weekdays\n\nThe office opens at 9 am on weekdays.\n\n## Saturdays\n\nThe office opens at 10 am on Saturdays.\n"}
	if r, res := importDoc(t, f, apptest.Admin, doc); r.Status != http.StatusOK || res.Counts == nil || res.Counts.Created != 2 {
		t.Fatalf("import: %d %s, want 2 created", r.Status, r.Body)
	}
	sections := func() int {
		t.Helper()
		list := f.Do(t, apptest.Admin, http.MethodGet, "/v1/knowledge/documents", nil)
		var docs struct{ Documents []documents.Info }
		list.Decode(t, &docs)
		if list.Status != http.StatusOK || len(docs.Documents) != 1 {
			t.Fatalf("list: %d %s, want the one document", list.Status, list.Body)
		}
		return docs.Documents[0].Sections
	}
	if n := sections(); n != 2 {
		t.Fatalf("listed with %d sections, want 2", n)
	}
	mems := f.Do(t, apptest.Admin, http.MethodGet, "/v1/memories?kind="+documents.KindSection+"&limit=10", nil)
	var page struct{ Memories []memory.Memory }
	mems.Decode(t, &page)
	if len(page.Memories) != 2 {
		t.Fatalf("section memories: %s, want 2", mems.Body)
	}
	if r := f.Do(t, apptest.Admin, http.MethodDelete, "/v1/memories/"+page.Memories[0].ID, nil); r.Status != http.StatusOK && r.Status != http.StatusNoContent {
		t.Fatalf("delete a section's memory: %d %s", r.Status, r.Body)
	}
	if n := sections(); n != 1 {
		t.Errorf("after deleting a section's memory, listed with %d sections, want 1", n)
	}
	if r, res := importDoc(t, f, apptest.Admin, doc); r.Status != http.StatusOK || res.Counts == nil ||
		*res.Counts != (documents.Counts{Created: 1, Unchanged: 1}) {
		t.Fatalf("re-import: %d %s, want the deleted section created again", r.Status, r.Body)
	}
	if n := sections(); n != 2 {
		t.Errorf("after the re-import, listed with %d sections, want 2", n)
	}
}
