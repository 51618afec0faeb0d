package app

import (
	"context"
	"fmt"
	"testing"
	"time"

	"mneme/handlers"
	"mneme/memory"
	"mneme/policyadmin"
	"mneme/stall"
	"mneme/writefence"
)

// recorded keeps the events it is given.
type recorded []memory.AuditEvent

func (r *recorded) Audit(_ context.Context, e memory.AuditEvent) { *r = append(*r, e) }

// The trail records a failed act under the code the API answered it with:
// a request refused 503 unavailable because a store stalled under it, and
// refusals only the API had a code of its own for, are not recorded as an
// internal error or a coarser code.
func TestTheTrailNamesTheCodeTheClientGot(t *testing.T) {
	stalled, stop := context.WithCancelCause(context.Background())
	stop(&stall.Error{Store: "neo4j", Since: time.Now()})
	closed, hangUp := context.WithCancel(context.Background())
	hangUp()
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		want string
	}{
		{"store stalled under the request", stalled, fmt.Errorf("neo4j: %w", context.Canceled), "unavailable"},
		{"quota", context.Background(), &memory.QuotaError{Quota: "memories", Limit: 10}, "quota_exceeded"},
		{"backdate", context.Background(), memory.ErrBackdate, "backdate_forbidden"},
		{"user erased", context.Background(), fmt.Errorf("write: %w", writefence.ErrUserErased), "user_erased"},
		{"policy timeout", context.Background(), fmt.Errorf("%w: %w", memory.ErrUnavailable, policyadmin.ErrPolicyTimeout), "policy_timeout"},
		{"policy changed", context.Background(), policyadmin.ErrPolicyChanged, "policy_changed"},
		{"not found", context.Background(), memory.ErrNotFound, "not_found"},
		{"invalid", context.Background(), memory.Invalid("user_id", "is required"), "invalid_argument"},
		{"store unavailable", context.Background(), memory.ErrUnavailable, "unavailable"},
		{"client went away", closed, fmt.Errorf("neo4j: %w", context.Canceled), "internal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got recorded
			e := memory.NewAuditEvent(tt.ctx, memory.Principal{Tenant: "acme", Kind: memory.KindAdmin, ID: "root"}, "user.export", "user:alice", tt.err, memory.AuditReason(tt.err))
			answeredAudit{&got}.Audit(tt.ctx, e)
			if len(got) != 1 {
				t.Fatalf("%d events recorded, want 1", len(got))
			}
			if got[0].Error != tt.want || got[0].Outcome != memory.AuditFailed {
				t.Errorf("recorded %s %q, want failed %q", got[0].Outcome, got[0].Error, tt.want)
			}
			if tt.ctx.Err() == nil {
				if _, code, _ := handlers.Classify(tt.err); code != got[0].Error {
					t.Errorf("recorded %q, the API answers %q", got[0].Error, code)
				}
			}
		})
	}
	var got recorded
	answeredAudit{&got}.Audit(context.Background(), memory.NewAuditEvent(context.Background(), memory.Principal{Tenant: "acme"}, "user.export", "user:alice", nil, ""))
	if len(got) != 1 || got[0].Outcome != memory.AuditOK || got[0].Error != "" {
		t.Errorf("a done act recorded as %+v", got)
	}
}
