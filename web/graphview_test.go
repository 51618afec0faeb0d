package web_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"mneme/internal/apptest"
	"mneme/seed"
)

// waitFor polls a JavaScript condition until it holds.
func (b *tab) waitFor(what, js string) {
	b.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		ok, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](js))
		if err == nil && ok {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.t.Fatalf("waited in vain for %s", what)
}

func (b *tab) eval(js string) string {
	b.t.Helper()
	s, err := chromedp.Run(b.ctx, chromedp.Evaluate[string](js))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", js, err)
	}
	return s
}

// TestGraphViewInTheBrowser: the demo's analyst opens the graph view,
// searches Lianhua Trading, expands it by clicking its node, and sees the
// readable memories around it and not finance-bot's confidential note;
// opens a memory's versions, filters, and exports what is shown.
func TestGraphViewInTheBrowser(t *testing.T) {
	f := apptest.Start(t)
	ds, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.App.LoadDemo(context.Background()); err != nil {
		t.Fatalf("load demo: %v", err)
	}
	b := openTab(t, f.URL)
	b.signIn(ds.KeyOf()["analyst"])
	b.do(chromedp.WaitVisible(chromedp.CSS("#q")))
	if got := b.eval(`location.pathname`); got != "/panel/graph" {
		t.Errorf("the analyst landed on %s, want the graph view", got)
	}

	b.do(chromedp.SendKeys(chromedp.CSS("#q"), "Lianhua"), chromedp.Click(chromedp.CSS("#search"), chromedp.NodeVisible))
	b.do(chromedp.Click(chromedp.CSS(`button.entity[data-id="lianhua-trading"]`), chromedp.NodeVisible))
	b.waitFor("the entity drawn", `document.querySelector('#shown tr[data-key="entity:lianhua-trading"]') !== null`)
	b.screenshot("graph-search")

	// A click on the drawn node expands it.
	b.eval(`graphView.cy.getElementById("entity:lianhua-trading").emit("tap"), ""`)
	b.waitFor("memories around Lianhua Trading", `document.querySelectorAll('#shown tr[data-label="memory"]').length > 0`)
	shown := b.text("#shown")
	for _, want := range []string{"150k CNY", "30-day terms", "user:alice", "agent:order-bot"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the neighbourhood lacks %q: %s", want, shown)
		}
	}
	for _, not := range []string{"82% of list price", "landed cost", "internal_cost"} {
		if strings.Contains(shown, not) {
			t.Errorf("the analyst sees %q", not)
		}
	}
	if n := b.eval(`String(graphView.cy.nodes().length)`); n == "0" || n == "1" {
		t.Errorf("the graph draws %s nodes", n)
	}
	b.screenshot("graph-expanded")

	// Open the 150k budget: its two versions.
	b.eval(`Array.from(document.querySelectorAll('#shown tr[data-label="memory"]')).find(tr => tr.textContent.includes("150k CNY")).querySelector("button.open").click(), ""`)
	b.do(chromedp.WaitVisible(chromedp.CSS("#detail")))
	b.waitFor("the budget's versions", `document.querySelectorAll('#versions tbody tr').length === 2`)
	if v := b.text("#versions"); !strings.Contains(v, "100k") || !strings.Contains(v, "150k") {
		t.Errorf("versions: %s", v)
	}
	b.screenshot("graph-memory")

	// Export what is shown.
	csv := b.eval(`graphView.csv()`)
	js := b.eval(`JSON.stringify(graphView.json())`)
	if !strings.HasPrefix(csv, "key,label,id,") || !strings.Contains(csv, "150k CNY") || strings.Contains(csv, "82%") {
		t.Errorf("CSV export: %.300s", csv)
	}
	cells := b.eval(`["=HYPERLINK(\"http://x\")", "=cmd|' /C calc'!A0", "+1", "@SUM(A1)", "plain, text"].map(graphView.csvCell).join(" ")`)
	if want := `"'=HYPERLINK(""http://x"")" '=cmd|' /C calc'!A0 '+1 '@SUM(A1) "plain, text"`; cells != want {
		t.Errorf("CSV cells %s, want %s: formulas neutralised, text quoted", cells, want)
	}
	if !strings.Contains(js, `"entity:lianhua-trading"`) || strings.Contains(js, "82%") {
		t.Errorf("JSON export: %.300s", js)
	}
	b.do(chromedp.Click(chromedp.CSS("#export-json"), chromedp.NodeVisible), chromedp.Click(chromedp.CSS("#export-csv"), chromedp.NodeVisible))

	// A filter no memory meets leaves the entity alone.
	b.do(chromedp.SendKeys(chromedp.CSS("#f-since"), "2099-01-01"), chromedp.Click(chromedp.CSS("#apply"), chromedp.NodeVisible))
	b.waitFor("the filtered view", `document.querySelector('#shown tr[data-key="entity:lianhua-trading"]') !== null && document.body.dataset.expanded.split(" ").length > 2`)
	if n := b.count(`#shown tr[data-label="memory"]`); n != 0 {
		t.Errorf("with since 2099, %d memories are shown", n)
	}
	b.screenshot("graph-filtered")
}
