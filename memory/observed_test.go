package memory

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestObservedAt(t *testing.T) {
	at := func(d time.Duration) *time.Time { v := testNow.Add(d); return &v }
	tests := []struct {
		name    string
		p       Principal
		at      *time.Time
		want    time.Time // the memory's valid_from, created_at and updated_at
		wantErr func(error) bool
	}{
		{name: "none: the write's time", p: agentSupport, want: testNow},
		{name: "an agent within the skew", p: agentSupport, at: at(-2 * time.Minute), want: testNow.Add(-2 * time.Minute)},
		{name: "a clock a little ahead is the write's time", p: agentSupport, at: at(time.Minute), want: testNow},
		{name: "an agent may not backdate", p: agentSupport, at: at(-48 * time.Hour),
			wantErr: func(err error) bool { return errors.Is(err, ErrBackdate) && errors.Is(err, ErrForbidden) }},
		{name: "an admin may backdate", p: adminAcme, at: at(-400 * 24 * time.Hour), want: testNow.Add(-400 * 24 * time.Hour)},
		{name: "never in the future", p: adminAcme, at: at(time.Hour),
			wantErr: func(err error) bool { var inv *InvalidError; return errors.As(err, &inv) && inv.Field == "observed_at" }},
		// An explicit zero time is no time: not ignored as if absent.
		{name: "the zero time", p: adminAcme, at: &time.Time{},
			wantErr: func(err error) bool { var inv *InvalidError; return errors.As(err, &inv) && inv.Field == "observed_at" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, recallConfig)
			n := NewMemory{UserID: "alice", Type: TypeSemantic, Content: "Alice prefers tea over coffee.", ObservedAt: tt.at}
			if tt.p.Kind == KindAdmin {
				n.AgentID = "support-bot" // an admin writes on behalf of an agent
			}
			got, err := create(context.Background(), f.svc, tt.p, []NewMemory{n})
			if tt.wantErr != nil {
				if err == nil || !tt.wantErr(err) {
					t.Fatalf("err = %v", err)
				}
				if len(f.store.created) != 0 {
					t.Error("a refused write reached the store")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m := got[0]
			if !m.ValidFrom.Equal(tt.want) || !m.CreatedAt.Equal(tt.want) || !m.UpdatedAt.Equal(tt.want) {
				t.Errorf("valid_from %v, created %v, updated %v; want all %v", m.ValidFrom, m.CreatedAt, m.UpdatedAt, tt.want)
			}
		})
	}
}
