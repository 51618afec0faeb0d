package policy

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"mneme/memory"
	"mneme/policyadmin"
)

// slowTimeout is the deadline of the engines that meet slow rules: far
// longer than the bundled policy's decisions take, even under -race on a
// busy host, and far shorter than slowBody runs.
const slowTimeout = 250 * time.Millisecond

// slowBody takes seconds to evaluate.
const slowBody = "\tcount({1 | some i in numbers.range(1, 3000); some k in numbers.range(1, 3000); i == k + 100000}) >= 0\n"

// slowpoke holds for writes of memories of kind slowpoke only.
const slowpoke = "\tinput.action == \"write\"\n\tinput.resource.kind == \"slowpoke\"\n"

// withSlowRule returns the bundled policy with a rule that is slow when
// cond holds.
func withSlowRule(t testing.TB, e *Engine, cond string) []policyadmin.PolicyModule {
	return withModule(t, e, "authz.rego", func(s string) string {
		return s + "\npermits contains \"slow\" if {\n" + cond + slowBody + "}\n"
	})
}

func TestCheckRefusesSlowDecisions(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Options{Timeout: slowTimeout})
	tests := []struct {
		name, cond string
		// says is in the rejection; "" is a check that passes.
		says string
	}{
		{"slow on every write: the decision table meets it", "\tinput.action == \"write\"\n",
			`bundled decision case "agent writes a memory for a user of its tenant"`},
		{"slow on one kind of decision the table lacks: the representative inputs meet it",
			"\tinput.action == \"delete\"\n\tinput.principal.kind == \"admin\"\n\tinput.resource.type == \"procedural\"\n\tinput.resource.sensitivity == \"restricted\"\n",
			"the decision of admin root: delete of a restricted procedural memory about u1 by other-agent"},
		{"slow on analysts' reads of shared knowledge: their read filter meets it", "\tinput.principal.kind == \"analyst\"\n\tinput.resource.scope == \"tenant\"\n",
			"the read filter of analyst ana"},
		// No finite check meets a rule slow on one value of a field only:
		// request time bounds it (TestSlowDecisionAtRequestTime).
		{"slow on writes of one kind of memory only: no check meets it", "\tinput.action == \"write\"\n\tinput.resource.kind == \"slowpoke\"\n", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.CheckPolicy(ctx, "acme", withSlowRule(t, e, tc.cond))
			if tc.says == "" {
				if err != nil {
					t.Fatalf("check: %v, want a pass", err)
				}
				return
			}
			var rejected *policyadmin.PolicyRejectedError
			if !errors.As(err, &rejected) || rejected.Code != policyadmin.RejectTooSlow {
				t.Fatalf("check: %v, want %s", err, policyadmin.RejectTooSlow)
			}
			if !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "takes longer than the 250ms a decision may take") {
				t.Errorf("rejection %q does not say %q and the deadline", err, tc.says)
			}
		})
	}
}

// A rule slow only with some grant of the tenant passes a check while the
// tenant has none, and is checked again, and refused, once it has one: a
// passed check is kept for the grants it ran with.
func TestCheckTimesWithTheTenantsGrants(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Options{Timeout: slowTimeout})
	modules := withSlowRule(t, e, "\tinput.action == \"delete\"\n\tdata.grants[input.principal.tenant][\"slow-grantee\"]\n")
	if _, err := e.CheckPolicy(ctx, "acme", modules); err != nil {
		t.Fatalf("check without the grant: %v", err)
	}
	grant := memory.Grant{ID: "g-slow", Tenant: "acme", Grantee: "slow-grantee", Source: "*", Types: memory.Types, MaxSensitivity: memory.SensitivityInternal}
	if err := e.UseGrants(ctx, "acme", 1, []memory.Grant{grant}); err != nil {
		t.Fatal(err)
	}
	_, err := e.CheckPolicy(ctx, "acme", modules)
	var rejected *policyadmin.PolicyRejectedError
	if !errors.As(err, &rejected) || rejected.Code != policyadmin.RejectTooSlow {
		t.Fatalf("check with the grant: %v, want %s", err, policyadmin.RejectTooSlow)
	}
	// Another tenant, without the grant, passes.
	if _, err := e.CheckPolicy(ctx, "globex", modules); err != nil {
		t.Errorf("globex's check: %v", err)
	}
}

// A decision of the policy in force cut by the engine's deadline denies
// with ErrPolicyTimeout, a 503 of its own, and makes its tenant hot; one
// whose caller's own deadline ended first is only out of time.
func TestSlowDecisionAtRequestTime(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Options{Timeout: slowTimeout})
	if err := e.UsePolicy(ctx, "acme", 1, 1, withSlowRule(t, e, slowpoke)); err != nil {
		t.Fatal(err)
	}
	bot := memory.Principal{Tenant: "acme", Kind: memory.KindAgent, ID: "support-bot"}
	slow := memory.Resource{Tenant: "acme", UserID: "alice", AgentID: "support-bot", Type: memory.TypeSemantic, Kind: "slowpoke", Sensitivity: memory.SensitivityInternal, Status: memory.StatusActive}

	d, err := e.Decide(ctx, bot, memory.ActionWrite, slow, testNow)
	for _, want := range []error{policyadmin.ErrPolicyTimeout, memory.ErrUnavailable, context.DeadlineExceeded} {
		if !errors.Is(err, want) {
			t.Errorf("slow decision: %v, not %v", err, want)
		}
	}
	if d.Allow {
		t.Error("a slow decision allowed")
	}
	if !e.hot.isHot("acme") || e.hot.isHot("globex") {
		t.Errorf("hot: acme %v, globex %v; want acme only", e.hot.isHot("acme"), e.hot.isHot("globex"))
	}
	// A quick decision of acme's policy still decides.
	quick := slow
	quick.Kind = "fact"
	if d, err := e.Decide(ctx, bot, memory.ActionWrite, quick, testNow); err != nil || !d.Allow {
		t.Errorf("quick decision: %+v, %v", d, err)
	}

	// The caller's deadline, ended before the engine's, is not the policy's.
	e2 := newEngine(t, Options{Timeout: 5 * time.Second})
	if err := e2.UsePolicy(ctx, "acme", 1, 1, withSlowRule(t, e2, slowpoke)); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = e2.Decide(short, bot, memory.ActionWrite, slow, testNow)
	if !errors.Is(err, memory.ErrUnavailable) || errors.Is(err, policyadmin.ErrPolicyTimeout) || e2.hot.isHot("acme") {
		t.Errorf("decision past the caller's deadline: %v (hot %v), want unavailable, not a policy timeout", err, e2.hot.isHot("acme"))
	}
}

// While a tenant is hot, its slow decisions run hotSlots at a time: the
// others run out of time waiting, without evaluating, while another
// tenant's decisions go on.
func TestHotTenantRunsFewEvaluations(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Options{Timeout: slowTimeout})
	e.hot = newHotTenants(1, time.Now)
	if err := e.UsePolicy(ctx, "acme", 1, 1, withSlowRule(t, e, slowpoke)); err != nil {
		t.Fatal(err)
	}
	bot := memory.Principal{Tenant: "acme", Kind: memory.KindAgent, ID: "support-bot"}
	slow := memory.Resource{Tenant: "acme", UserID: "alice", AgentID: "support-bot", Type: memory.TypeSemantic, Kind: "slowpoke", Sensitivity: memory.SensitivityInternal, Status: memory.StatusActive}
	if _, err := e.Decide(ctx, bot, memory.ActionWrite, slow, testNow); !errors.Is(err, policyadmin.ErrPolicyTimeout) {
		t.Fatalf("first slow decision: %v", err)
	}
	// The one slot, held here for as long as the others try: whatever the
	// scheduler's order, each of them must give up waiting.
	release, err := e.hot.enter(ctx, "acme")
	if err != nil {
		t.Fatal(err)
	}
	const n = 4
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := slow
			r.ID = string(rune('a' + i))
			_, errs[i] = e.Decide(ctx, bot, memory.ActionWrite, r, testNow)
		}()
	}
	// globex runs the bundled policy, unlimited.
	other := memory.Principal{Tenant: "globex", Kind: memory.KindAgent, ID: "support-bot"}
	for i := range 20 {
		r := slow
		r.Tenant, r.ID = "globex", string(rune('a'+i))
		if d, err := e.Decide(ctx, other, memory.ActionWrite, r, testNow); err != nil || !d.Allow {
			t.Errorf("globex decision %d: %+v, %v", i, d, err)
		}
	}
	wg.Wait()
	release()
	for i, err := range errs {
		if !errors.Is(err, policyadmin.ErrPolicyTimeout) {
			t.Errorf("slow decision %d: %v, want a policy timeout", i, err)
		}
	}
	if shed := e.hot.shed.Load(); shed != n {
		t.Errorf("%d decisions ran out of time waiting for acme's slot, want %d", shed, n)
	}
	// The slot free again, the next decision evaluates (and runs out).
	if _, err := e.Decide(ctx, bot, memory.ActionWrite, slow, testNow); !errors.Is(err, policyadmin.ErrPolicyTimeout) || e.hot.shed.Load() != n {
		t.Errorf("a decision with the slot free: %v (shed %d)", err, e.hot.shed.Load())
	}
}

// A decision that runs out of time waiting for its hot tenant's slot is a
// policy timeout, but does not keep the tenant hot: a busy host alone must
// not hold a tenant's policy to one slot for as long as the load lasts.
func TestWaitingDoesNotHeat(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	e := newEngine(t, Options{Timeout: 50 * time.Millisecond})
	e.hot = newHotTenants(1, func() time.Time { return now })
	e.hot.ranOut("acme")
	release, err := e.hot.enter(ctx, "acme") // the one slot, taken
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	now = now.Add(hotCooldown - time.Second)
	bot := memory.Principal{Tenant: "acme", Kind: memory.KindAgent, ID: "support-bot"}
	r := memory.Resource{ID: "m1", Tenant: "acme", UserID: "alice", AgentID: "support-bot", Type: memory.TypeSemantic, Sensitivity: memory.SensitivityInternal, Status: memory.StatusActive}
	if _, err := e.Decide(ctx, bot, memory.ActionRead, r, testNow); !errors.Is(err, policyadmin.ErrPolicyTimeout) {
		t.Fatalf("a decision waiting for the slot past its deadline: %v, want a policy timeout", err)
	}
	now = now.Add(2 * time.Second)
	if e.hot.isHot("acme") {
		t.Error("acme still hot after its cooldown: the wait heated it again")
	}
}

func TestHotTenants(t *testing.T) {
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	h := newHotTenants(2, func() time.Time { return now })
	enter := func(tenant string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		_, err := h.enter(ctx, tenant)
		return err
	}
	for range 5 {
		if err := enter("acme"); err != nil {
			t.Fatalf("a tenant never hot waits: %v", err)
		}
	}
	h.ranOut("acme")
	h.ranOut("")
	tests := []struct {
		name    string
		tenant  string
		advance time.Duration
		// free is how many enter at once before one waits.
		free int
	}{
		{"a hot tenant runs its slots", "acme", 0, 2},
		{"another tenant is not limited", "globex", 0, 5},
		{"nor is a draft's evaluation", "", 0, 5},
		{"a hot tenant is limited until the cooldown", "acme", hotCooldown - time.Second, 0},
		{"and free after it", "acme", time.Second, 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			now = now.Add(tc.advance)
			free := 0
			for free < 5 && enter(tc.tenant) == nil { // released never
				free++
			}
			if free != tc.free {
				t.Errorf("%d entered at once, want %d", free, tc.free)
			}
		})
	}
	var none *hotTenants
	if _, err := none.enter(context.Background(), "acme"); err != nil {
		t.Errorf("nil gate: %v", err)
	}
}

// A policy timeout points an admin at a rollback only when an admin's
// revision is in force: under the bundled policy, rolling back cannot help,
// and the engine was overloaded.
func TestPolicyTimeoutSaysWhatHelps(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Options{Timeout: slowTimeout})
	e.hot = newHotTenants(1, time.Now)
	if err := e.UsePolicy(ctx, "acme", 1, 1, withSlowRule(t, e, slowpoke)); err != nil {
		t.Fatal(err)
	}
	slow := memory.Resource{Tenant: "acme", UserID: "alice", AgentID: "support-bot", Type: memory.TypeSemantic, Kind: "slowpoke", Sensitivity: memory.SensitivityInternal, Status: memory.StatusActive}
	_, err := e.Decide(ctx, memory.Principal{Tenant: "acme", Kind: memory.KindAgent, ID: "support-bot"}, memory.ActionWrite, slow, testNow)
	if msg := policyadmin.TimeoutMessage(err); !errors.Is(err, policyadmin.ErrPolicyTimeout) || !strings.Contains(msg, "rolls the policy back") {
		t.Errorf("timeout under revision 1: %v, says %q; want a rollback", err, msg)
	}

	// globex runs the bundled policy; busy, its one slot held, a decision
	// runs out of time waiting.
	e.hot.ranOut("globex")
	release, err := e.hot.enter(ctx, "globex")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	quick := slow
	quick.Tenant, quick.Kind = "globex", "fact"
	_, err = e.Decide(ctx, memory.Principal{Tenant: "globex", Kind: memory.KindAgent, ID: "support-bot"}, memory.ActionWrite, quick, testNow)
	msg := policyadmin.TimeoutMessage(err)
	if !errors.Is(err, policyadmin.ErrPolicyTimeout) || strings.Contains(msg, "roll") || !strings.Contains(msg, "overloaded") {
		t.Errorf("timeout under the bundled policy: %v, says %q; want overloaded, and no rollback", err, msg)
	}
}
