package policy

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/policyadmin"
)

// A check of modules that passed before answers at once with the same
// report, even while another check holds the gate; other modules, the same
// modules of another tenant, and modules that failed wait for their turn.
func TestCheckPolicyRemembersPassedChecks(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Options{})
	bundled := e.BundledPolicy()
	failing := withModule(t, e, "mine_test.rego", func(string) string {
		return "package mneme.authz_test\n\ntest_fails if false\n"
	})
	first, err := e.CheckPolicy(ctx, "t1", bundled)
	if err != nil {
		t.Fatal(err)
	}
	var rej *policyadmin.PolicyRejectedError
	if _, err := e.CheckPolicy(ctx, "t1", failing); !errors.As(err, &rej) || rej.Code != policyadmin.RejectTestFailed {
		t.Fatalf("failing modules: err = %v, want %s", err, policyadmin.RejectTestFailed)
	}

	// Another tenant's check holds the gate from here on.
	e.checks.wait = 100 * time.Millisecond
	e.checks.slot <- struct{}{}
	t.Cleanup(func() { <-e.checks.slot })

	tests := []struct {
		name    string
		tenant  string
		modules []policyadmin.PolicyModule
		passed  bool // answered with first's report; else busy
	}{
		{"the same modules", "t1", bundled, true},
		{"the same modules in another order", "t1", reversed(bundled), true},
		{"the same modules again", "t1", bundled, true},
		{"other modules", "t1", withModule(t, e, "authz.rego", func(s string) string { return s + "\n# another revision\n" }), false},
		{"the same modules of another tenant", "t2", bundled, false},
		{"modules that failed", "t1", failing, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			report, err := e.CheckPolicy(ctx, tc.tenant, tc.modules)
			if !tc.passed {
				var busy *policyadmin.CheckBusyError
				if !errors.As(err, &busy) {
					t.Errorf("err = %v, want busy: the check waits for the gate", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("err = %v, want the report of the check that passed", err)
			}
			if diff := cmp.Diff(first, report); diff != "" {
				t.Errorf("report (-first +again):\n%s", diff)
			}
		})
	}
}

func reversed(ms []policyadmin.PolicyModule) []policyadmin.PolicyModule {
	out := slices.Clone(ms)
	slices.Reverse(out)
	return out
}

// passedChecks keeps at most its bound, and drops the one used longest
// ago.
func TestPassedChecksBound(t *testing.T) {
	c := newPassedChecks(2)
	report := func(d string) policyadmin.PolicyReport { return policyadmin.PolicyReport{Digest: d} }
	c.put("t1", "a", report("a"))
	c.put("t1", "b", report("b"))
	c.get("t1", "a") // b is now the one used longest ago
	c.put("t1", "c", report("c"))
	c.put("t1", "c", report("c")) // again: nothing more goes
	for _, tc := range []struct {
		tenant, digest string
		kept           bool
	}{
		{"t1", "a", true}, {"t1", "b", false}, {"t1", "c", true}, {"t2", "a", false},
	} {
		r, ok := c.get(tc.tenant, tc.digest)
		if ok != tc.kept || ok && r.Digest != tc.digest {
			t.Errorf("get(%s, %s) = %+v, %v; want kept %v", tc.tenant, tc.digest, r, ok, tc.kept)
		}
	}
	if len(c.reports) != 2 || len(c.order) != 2 {
		t.Errorf("%d reports, %d in order; want 2", len(c.reports), len(c.order))
	}
}
