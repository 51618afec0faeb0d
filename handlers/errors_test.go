package handlers

import (
	"fmt"
	"net/http"
	"testing"

	"mneme/memory"
	"mneme/policyadmin"
	"mneme/userids"
	"mneme/workingmemory"
	"mneme/writefence"
)

// The errors this package maps for policy administration, whichever part
// returned them.
func TestClassifyAdminErrors(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantCode   string
	}{
		{"not configured", fmt.Errorf("sessions: %w", memory.ErrNotConfigured), http.StatusNotImplemented, "not_configured"},
		{"policy rejected", fmt.Errorf("push: %w", &policyadmin.PolicyRejectedError{Code: policyadmin.RejectTestFailed, Problems: []string{"x"}}),
			http.StatusUnprocessableEntity, policyadmin.RejectTestFailed},
		{"replica behind", fmt.Errorf("%w: policy revisions: down", memory.ErrUnavailable), http.StatusServiceUnavailable, "unavailable"},
		{"another policy check runs", fmt.Errorf("simulate: %w", &policyadmin.CheckBusyError{}), http.StatusTooManyRequests, "policy_check_busy"},
		{"policy cannot filter reads", fmt.Errorf("read scope: %w: %w: lower", memory.ErrUnavailable, policyadmin.ErrPolicyUntranslatable),
			http.StatusServiceUnavailable, "policy_untranslatable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, code, _ := classify(tt.err)
			if status != tt.wantStatus || code != tt.wantCode {
				t.Errorf("classify = (%d, %q), want (%d, %q)", status, code, tt.wantStatus, tt.wantCode)
			}
		})
	}
}

// The audit trail's reason for a failed act is the code the API answers the
// same error with, so an admin can match the two.
func TestAuditReasonsAreTheAPICodes(t *testing.T) {
	for _, err := range []error{
		memory.ErrNotFound, memory.ErrForbidden, memory.ErrConflict, memory.ErrUnavailable,
		memory.ErrNotConfigured, memory.ErrSessionFull, memory.ErrSessionClosing, memory.ErrSessionTaken, memory.ErrIdempotencyKeyReused, memory.ErrUnauthenticated,
		memory.Invalid("revision", "x"), &memory.GuardError{Field: "content", Kinds: []string{"api_key"}},
		fmt.Errorf("activate: %w", memory.ErrUnavailable), fmt.Errorf("odd"),
	} {
		if _, code, _ := classify(err); memory.AuditReason(err) != code {
			t.Errorf("%v: audit reason %q, API code %q", err, memory.AuditReason(err), code)
		}
	}
}

// Refusals of packages the handlers do not import name their own code: a
// conflict with what is stored is 409, anything else 422.
func TestClassifyRefusals(t *testing.T) {
	for _, tt := range []struct {
		name       string
		err        error
		wantStatus int
		wantCode   string
	}{
		{"a user id's case twin", fmt.Errorf("write: %w", &userids.CaseConflictError{ID: "Carol", Existing: "carol"}), http.StatusConflict, userids.CodeCaseConflict},
		{"a turn out of order", fmt.Errorf("append: %w", &workingmemory.TurnOrderError{Index: 1}), http.StatusUnprocessableEntity, workingmemory.CodeTurnOutOfOrder},
		{"another user's session", fmt.Errorf("session s is about another user: %w", memory.ErrSessionTaken), http.StatusConflict, "session_taken"},
		// Not unavailable: a client that retries 503s would write again,
		// after the erase, what was under way before it. The graph returns
		// it as a conflict with what is stored.
		{"a write begun before its user's erase", fmt.Errorf("write: %w (%w)", writefence.ErrUserErased, memory.ErrConflict), http.StatusConflict, writefence.CodeUserErased},
	} {
		t.Run(tt.name, func(t *testing.T) {
			status, code, msg := classify(tt.err)
			if status != tt.wantStatus || code != tt.wantCode || msg == "" {
				t.Errorf("classify = (%d, %q, %q), want (%d, %q)", status, code, msg, tt.wantStatus, tt.wantCode)
			}
		})
	}
}
