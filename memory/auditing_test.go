package memory

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// fakeAuditor records the events it is given, as journal.Audit would.
type fakeAuditor struct {
	mu     sync.Mutex
	events []AuditEvent
}

var _ Auditor = (*fakeAuditor)(nil)

func (f *fakeAuditor) Audit(_ context.Context, e AuditEvent) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.events = append(f.events, e)
}

func (f *fakeAuditor) recorded() []AuditEvent {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]AuditEvent(nil), f.events...)
}

func TestAdministrativeActsAreAudited(t *testing.T) {
	adminsAndSelf := func(p Principal, action string, r Resource) (Decision, error) {
		switch {
		case p.Kind == KindAdmin:
			return Decision{Allow: true}, nil
		case action == ActionManage:
			return Decision{}, nil
		}
		return Decision{Allow: action == ActionRead || p.Kind == KindUser && p.ID == r.UserID || r.AgentID == p.ID}, nil
	}
	ctx := WithRequestID(context.Background(), "req-1")
	tombstone := UserTombstoneID("acme", "alice")
	tests := []struct {
		name string
		act  func(f *fixture) error
		want []AuditEvent // Time is the fixture's clock; Details are compared apart
	}{
		{"an admin erases a user", func(f *fixture) error {
			_, err := f.svc.EraseUser(ctx, adminAcme, "alice")
			return err
		}, []AuditEvent{{Tenant: "acme", Actor: "admin:root", Action: AuditUserErase, Target: tombstone, Outcome: AuditOK, RequestID: "req-1"}}},
		{"a user erases themself, unnamed", func(f *fixture) error {
			_, err := f.svc.EraseUser(ctx, userAlice, "alice")
			return err
		}, []AuditEvent{{Tenant: "acme", Actor: "user:self", Action: AuditUserErase, Target: tombstone, Outcome: AuditOK, RequestID: "req-1"}}},
		{"an agent refused an erase is left to the decision log", func(f *fixture) error {
			_, err := f.svc.EraseUser(ctx, agentSupport, "alice")
			return err
		}, nil},
		{"an erase that fails", func(f *fixture) error {
			f.svc.erasers = []Eraser{&fakeEraser{place: "sessions", err: ErrUnavailable}}
			_, err := f.svc.EraseUser(ctx, adminAcme, "alice")
			return err
		}, []AuditEvent{{Tenant: "acme", Actor: "admin:root", Action: AuditUserErase, Target: tombstone, Outcome: AuditFailed, Error: "unavailable", RequestID: "req-1"}}},
		{"an admin deletes a memory", func(f *fixture) error {
			_, err := f.svc.Delete(ctx, adminAcme, "mem_1", "")
			return err
		}, []AuditEvent{{Tenant: "acme", Actor: "admin:root", Action: AuditMemoryDelete, Target: "memory:mem_1", Outcome: AuditOK, RequestID: "req-1"}}},
		{"an admin deletes a memory that does not exist", func(f *fixture) error {
			_, err := f.svc.Delete(ctx, adminAcme, "mem_404", "")
			return err
		}, []AuditEvent{{Tenant: "acme", Actor: "admin:root", Action: AuditMemoryDelete, Target: "memory:mem_404", Outcome: AuditFailed, Error: "not_found", RequestID: "req-1"}}},
		{"a user deletes their own memory, unnamed", func(f *fixture) error {
			_, err := f.svc.Delete(ctx, userAlice, "mem_1", "")
			return err
		}, []AuditEvent{{Tenant: "acme", Actor: "user:self", Action: AuditMemoryDelete, Target: "memory:mem_1", Outcome: AuditOK, RequestID: "req-1"}}},
		{"a user refused a delete is left to the decision log", func(f *fixture) error {
			_, err := f.svc.Delete(ctx, Principal{Tenant: "acme", Kind: KindUser, ID: "bob"}, "mem_1", "")
			return err
		}, nil},
		{"an agent deleting its own memory is everyday work", func(f *fixture) error {
			_, err := f.svc.Delete(ctx, agentSupport, "mem_1", "")
			return err
		}, nil},
		{"an admin sweeps", func(f *fixture) error {
			_, err := f.svc.Sweep(ctx, adminAcme, true)
			return err
		}, []AuditEvent{{Tenant: "acme", Actor: "admin:root", Action: AuditJanitorSweep, Target: "tenant:acme", Outcome: AuditOK, RequestID: "req-1"}}},
		{"an agent refused a sweep", func(f *fixture) error {
			_, err := f.svc.Sweep(ctx, agentSupport, false)
			return err
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			f.authz.decide = adminsAndSelf
			f.store.memories["mem_1"] = stored("mem_1", "Alice prefers green tea in the morning.")
			f.store.history = []Memory{f.store.memories["mem_1"]}
			err := tt.act(f)
			got := f.audit.recorded()
			for i := range tt.want {
				tt.want[i].Time = testNow.UTC()
			}
			if d := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(AuditEvent{}, "Details", "Cause"), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("audit events (-want +got):\n%s (act err: %v)", d, err)
			}
			for _, e := range got {
				// The cause goes with a failed act, for the trail to name
				// it as the API answered it.
				if (e.Outcome == AuditFailed) != (e.Cause != nil) || e.Cause != nil && !errors.Is(err, e.Cause) {
					t.Errorf("event %s %q with cause %v, the act ended with %v", e.Outcome, e.Error, e.Cause, err)
				}
				for k, v := range e.Details {
					if strings.Contains(v, "tea") || strings.Contains(v, "alice") || strings.Contains(k, "alice") {
						t.Errorf("details %s=%s hold content or the user's id", k, v)
					}
				}
			}
		})
	}
}

func TestAuditDetailsAreCounts(t *testing.T) {
	f := newFixture(t, RecallConfig{})
	f.places.held["acme/alice"] = 4
	f.store.memories["mem_1"] = stored("mem_1", "Alice prefers tea.")
	if _, err := f.svc.EraseUser(context.Background(), adminAcme, "alice"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.Sweep(context.Background(), adminAcme, true); err != nil {
		t.Fatal(err)
	}
	got := f.audit.recorded()
	if len(got) != 2 {
		t.Fatalf("events = %+v, want an erase and a sweep", got)
	}
	if got[0].Details["places"] != "4" || got[0].Details[PlaceGraphMemories] != "1" {
		t.Errorf("erase details = %v, want places=4 and one memory", got[0].Details)
	}
	if got[1].Details["dry_run"] != "true" || got[1].Details["scanned"] != "0" {
		t.Errorf("sweep details = %v", got[1].Details)
	}
}

func TestAuditReasonIsStable(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{nil, ""},
		{ErrNotFound, "not_found"},
		{ErrForbidden, "forbidden"},
		{Invalid("user_id", "a secret the client sent"), "invalid_argument"},
		{&GuardError{Field: "content", Kinds: []string{"api_key"}}, "guard_rejected"},
		{errors.Join(errors.New("neo4j: connection refused"), ErrUnavailable), "unavailable"},
		{errors.New("something odd"), "internal"},
	}
	for _, tt := range tests {
		if got := AuditReason(tt.err); got != tt.want {
			t.Errorf("AuditReason(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestRequestIDTravelsOnTheContext(t *testing.T) {
	if got := RequestIDFrom(context.Background()); got != "" {
		t.Errorf("no id: %q", got)
	}
	if got := RequestIDFrom(WithRequestID(context.Background(), "abc")); got != "abc" {
		t.Errorf("RequestIDFrom = %q, want abc", got)
	}
}
