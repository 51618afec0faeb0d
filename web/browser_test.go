package web_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"mneme/internal/apptest"
	"mneme/memory"
)

// EnvScreenshots names the folder the browser test writes its screenshots
// to; without it they go to a temporary folder the test logs.
const EnvScreenshots = "MNEME_PANEL_SCREENSHOTS"

// chromium installs Debian's chromium through the project's script when it
// is missing and returns its path. A browser that cannot be had fails the
// test: the panel is not proven without one.
func chromium(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("../scripts/chromium.sh").Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("scripts/chromium.sh: %v: %s", err, stderr)
	}
	return strings.TrimSpace(string(out))
}

// tab is one headless Chromium tab with the console errors and dialogs it
// has seen.
type tab struct {
	t    *testing.T
	ctx  context.Context
	base string
	dir  string
	shot int

	mu       sync.Mutex
	problems []string
}

func openTab(t *testing.T, base string) *tab {
	t.Helper()
	dir := os.Getenv(EnvScreenshots)
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshots in %s", dir)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.Headless,
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 900),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	tb := &tab{t: t, ctx: ctx, base: base, dir: dir}
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	// Every console error, uncaught exception and browser-log error (a CSP
	// violation, a failed load) is a problem; so is any dialog, which is
	// dismissed so that the page does not hang.
	messages := chromedp.Console(ctx)
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				tb.problem("console %s", m)
			}
		}
	}()
	go func() {
		for d, err := range dialogs {
			if err != nil {
				return
			}
			tb.problem("a %s dialog opened: %q", d.Type, d.Message)
			go func() {
				_ = chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tt *chromedp.Target) error {
					_, err := cdp.Call(ctx, tt, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
					return err
				}))
			}()
		}
	}()
	t.Cleanup(func() {
		tb.mu.Lock()
		defer tb.mu.Unlock()
		for _, p := range tb.problems {
			t.Errorf("browser: %s", p)
		}
	})
	return tb
}

func (b *tab) problem(format string, args ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.problems = append(b.problems, fmt.Sprintf(format, args...))
}

func (b *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("browser: %v", err)
	}
}

func (b *tab) open(path, waitFor string) {
	b.t.Helper()
	b.do(chromedp.Navigate(b.base+path), chromedp.WaitVisible(chromedp.CSS(waitFor)))
}

// submit clicks a form's button and waits until the next page has loaded.
func (b *tab) submit(button string) {
	b.t.Helper()
	b.do(
		chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
			_, err := chromedp.Evaluate[bool](`window.__before = true`)(ctx, t)
			return err
		}),
		chromedp.Click(chromedp.CSS(button), chromedp.NodeVisible),
	)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		done, err := chromedp.Run(b.ctx, chromedp.Evaluate[bool](`document.readyState === "complete" && !window.__before`))
		if err == nil && done {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.t.Fatalf("no new page after clicking %s", button)
}

func (b *tab) text(sel string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel), chromedp.NodeVisible))
	if err != nil {
		b.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

func (b *tab) count(sel string) int {
	b.t.Helper()
	n, err := chromedp.Run(b.ctx, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
	if err != nil {
		b.t.Fatalf("count %s: %v", sel, err)
	}
	return n
}

func (b *tab) screenshot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("screenshot: %v", err)
	}
	b.shot++
	if err := os.WriteFile(filepath.Join(b.dir, fmt.Sprintf("%02d-%s.png", b.shot, name)), png, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

func (b *tab) signIn(key string) {
	b.t.Helper()
	b.open("/panel/signin", "#key")
	b.do(chromedp.SendKeys(chromedp.CSS("#key"), key))
	b.submit(`#signin button[type="submit"]`)
}

// TestPanelInTheBrowser walks the panel in a real headless Chromium against
// the real service: admin overview, a user's memories and versions, a recall
// under Recalls, a delete under Deletions, an end user, an agent's refused
// sign-in, and memory content with markup that must not run.
func TestPanelInTheBrowser(t *testing.T) {
	f := apptest.Start(t)
	budget1 := write(t, f, "order-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeProfile, Kind: "budget", Key: "budget", Content: "Alice's purchasing budget is 30,000 CNY."})
	budget2 := write(t, f, "order-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeProfile, Kind: "budget", Key: "budget", Content: "Alice's purchasing budget is 45,000 CNY."})
	office := write(t, f, "support-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeSemantic, Content: "Alice works from the Shenzhen office."})
	write(t, f, "support-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Content: `<script>alert("xss")</script> Alice asked about invoices.`})
	write(t, f, "support-bot", memory.NewMemory{UserID: "alice", Type: memory.TypeEpisodic, Content: `<img src=x onerror="alert(1)"> Alice sent a photo of the damaged chair.`})
	write(t, f, "support-bot", memory.NewMemory{UserID: "bob", Type: memory.TypeSemantic, Content: "Bob prefers calls in the morning."})

	// What the API says alice holds is what the overview must show.
	r := f.Do(t, "admin", http.MethodGet, "/v1/memories?user_id=alice&limit=500", nil)
	var listed struct {
		Memories []memory.Memory `json:"memories"`
	}
	r.Decode(t, &listed)
	if len(listed.Memories) < 5 {
		t.Fatalf("alice has %d memories through the API, want at least the 5 written", len(listed.Memories))
	}

	b := openTab(t, f.URL)

	// Admin: the overview shows the seeded counts.
	b.signIn(f.Keys["admin"])
	if got := b.text(`tr[data-user="alice"] td.total`); got != strconv.Itoa(len(listed.Memories)) {
		t.Errorf("overview shows %s memories for alice, want %d", got, len(listed.Memories))
	}
	if got := b.text(`tr[data-user="bob"] td.total`); got != "1" {
		t.Errorf("overview shows %s memories for bob, want 1", got)
	}
	b.screenshot("admin-overview")

	// Alice: her memories, and the budget's two versions.
	b.open("/panel/users/alice", "#memories")
	if n := b.count("#memories tbody tr[data-id]"); n != len(listed.Memories) {
		t.Errorf("alice's page lists %d memories, want %d", n, len(listed.Memories))
	}
	if got := b.text(`tr[data-id="` + office + `"] td.content`); got != "Alice works from the Shenzhen office." {
		t.Errorf("office memory shows %q", got)
	}
	// The markup is shown as text, and did not become elements.
	if got := b.count("#memories td.content script, #memories td.content img"); got != 0 {
		t.Errorf("memory content became %d elements", got)
	}
	body := b.text("#memories")
	for _, s := range []string{`<script>alert("xss")</script>`, `<img src=x onerror="alert(1)">`} {
		if !strings.Contains(body, s) {
			t.Errorf("alice's page does not show %q as text", s)
		}
	}
	b.screenshot("alice-memories")
	b.open("/panel/users/alice?history="+budget2, "#history")
	hist := b.text("#history")
	if !strings.Contains(hist, "30,000 CNY") || !strings.Contains(hist, "45,000 CNY") || b.count("#history tbody tr") != 2 {
		t.Errorf("budget history shows: %s", hist)
	}
	b.screenshot("alice-budget-history")
	_ = budget1

	// A recall through the API appears under Recalls with its memories.
	rr := f.Do(t, "order-bot", http.MethodPost, "/v1/recall", memory.RecallRequest{UserID: "alice", Query: "What is Alice's purchasing budget?"})
	var recalled memory.RecallResult
	if rr.Decode(t, &recalled); rr.Status != http.StatusOK || len(recalled.Memories) == 0 {
		t.Fatalf("recall = %d: %s", rr.Status, rr.Body)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		b.open("/panel/recalls?user=alice", "#recall-user")
		if b.count(".recall") > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the recall never appeared under Recalls")
		}
		time.Sleep(300 * time.Millisecond)
	}
	if got := b.text(".recall q.question"); got != "What is Alice's purchasing budget?" {
		t.Errorf("recall question shows %q", got)
	}
	if b.count(`.recall tr[data-id="`+recalled.Memories[0].Memory.ID+`"]`) == 0 {
		t.Errorf("the recall's first memory %s is not listed", recalled.Memories[0].Memory.ID)
	}
	// With its score parts, as the API explained them, and the context block
	// handed over.
	first := recalled.Memories[0]
	if got, want := b.text(`.recall tr[data-id="`+first.Memory.ID+`"] dd.fused`), fmt.Sprintf("%.4f", first.Explain.Fused); got != want {
		t.Errorf("the first memory's fused score shows %q, want %q", got, want)
	}
	b.do(chromedp.Click(chromedp.CSS(".recall details.context summary"), chromedp.NodeVisible))
	if got := b.text(".recall pre.context-block"); strings.TrimSpace(got) != strings.TrimSpace(recalled.Context) {
		t.Errorf("context block shows\n%s\nwant\n%s", got, recalled.Context)
	}
	b.screenshot("recalls")
	// The user page explains the memory from that, its last, recall.
	b.open("/panel/users/alice", "#memories")
	b.submit(`tr[data-id="` + first.Memory.ID + `"] a.explain`)
	if got, want := b.text("#explain dd.fused"), fmt.Sprintf("%.4f", first.Explain.Fused); got != want {
		t.Errorf("the user page's last-recall explain shows fused %q, want %q", got, want)
	}
	if got := b.text("#explain q.question"); got != "What is Alice's purchasing budget?" {
		t.Errorf("the last recall's question shows %q", got)
	}
	b.screenshot("alice-last-recall")

	// Delete a memory: it leaves the list and appears under Deletions.
	b.open("/panel/users/alice", "#memories")
	b.submit(`tr[data-id="` + office + `"] button.delete`)
	b.open("/panel/users/alice", "#memories")
	if b.count(`tr[data-id="`+office+`"]`) != 0 {
		t.Error("the deleted memory is still listed")
	}
	b.screenshot("alice-after-delete")
	b.open("/panel/deletions", "#deletions")
	if dels := b.text("#deletions"); !strings.Contains(dels, office) || strings.Contains(dels, "Shenzhen") {
		t.Errorf("deletions page: %s", dels)
	}
	b.screenshot("deletions")
	b.submit("#signout")

	// Bob sees his own memory and none of alice's.
	b.signIn(f.Keys["bob"])
	mine := b.text("#memories")
	if !strings.Contains(mine, "Bob prefers calls") {
		t.Errorf("bob's page lacks his memory: %s", mine)
	}
	for _, s := range []string{"Alice", "budget", "xss"} {
		if strings.Contains(mine, s) {
			t.Errorf("bob's page shows %q", s)
		}
	}
	b.screenshot("bob-memories")
	b.submit("#signout")

	// An agent's key cannot sign in.
	b.signIn(f.Keys["support-bot"])
	if msg := b.text("#message"); !strings.Contains(msg, "agents use the API") {
		t.Errorf("agent sign-in says %q", msg)
	}
	if b.count("#signout") != 0 {
		t.Error("an agent key opened a session")
	}
	b.screenshot("agent-refused")
}
