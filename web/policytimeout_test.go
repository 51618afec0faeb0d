package web

import (
	"fmt"
	"strings"
	"testing"

	"mneme/memory"
	"mneme/policyadmin"
)

// The error page of a policy timeout offers an admin the rollback only
// when an admin's revision is in force: under the bundled policy it cannot
// help, and the engine was overloaded.
func TestPolicyTimeoutPageSaysWhatHelps(t *testing.T) {
	admin := &caller{Principal: memory.Principal{Tenant: "acme", Kind: memory.KindAdmin, ID: "root"}}
	for _, tc := range []struct {
		revision  int64
		rollback  bool
		says, not string
	}{
		{revision: 3, rollback: true, says: "roll it back", not: "overloaded"},
		{revision: 0, rollback: false, says: "overloaded", not: "roll"},
	} {
		t.Run(fmt.Sprint("revision ", tc.revision), func(t *testing.T) {
			err := fmt.Errorf("%w: %w", memory.ErrUnavailable, &policyadmin.PolicyTimeoutError{Revision: tc.revision})
			msg := policyFailure(admin, err)
			if !strings.Contains(msg, tc.says) || strings.Contains(msg, tc.not) {
				t.Errorf("page says %q; want %q and not %q", msg, tc.says, tc.not)
			}
			if got := !bundledTimeout(err); got != tc.rollback {
				t.Errorf("rollback offered = %v, want %v", got, tc.rollback)
			}
		})
	}
}
