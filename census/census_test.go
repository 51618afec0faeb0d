package census

import (
	"context"
	"errors"
	"testing"
	"time"

	"mneme/memory"
)

type fakeScoper struct {
	scope memory.Scope
	err   error
	asked []string
}

func (f *fakeScoper) ReadScope(_ context.Context, p memory.Principal, userID string, _ time.Time) (memory.Scope, error) {
	f.asked = append(f.asked, p.ID+"/"+userID)
	return f.scope, f.err
}

type fakeStore struct{ scopes []memory.Scope }

func (f *fakeStore) CountMemories(_ context.Context, scope memory.Scope) ([]Count, error) {
	f.scopes = append(f.scopes, scope)
	return []Count{{UserID: "u1", Type: "profile", Status: "active", N: 3}}, nil
}

func TestNewNamesWhatIsMissing(t *testing.T) {
	_, err := New(Options{})
	if err == nil || err.Error() != "census: Store is required\ncensus: Authz is required" {
		t.Errorf("New(Options{}) = %v", err)
	}
}

func TestCount(t *testing.T) {
	admin := memory.Principal{Tenant: "t1", Kind: memory.KindAdmin, ID: "root"}
	all := memory.Filter{Op: memory.FilterTrue}
	none := memory.Filter{Op: memory.FilterFalse}
	boom := errors.New("boom")
	tests := []struct {
		name      string
		scoper    fakeScoper
		wantQuery bool
		wantErr   error
	}{
		{"the tenant's scope is counted", fakeScoper{scope: memory.Scope{Tenant: "t1", Filter: &all}}, true, nil},
		{"an empty scope counts nothing", fakeScoper{scope: memory.Scope{Tenant: "t1", Filter: &none}}, false, nil},
		{"another tenant's scope counts nothing", fakeScoper{scope: memory.Scope{Tenant: "t2", Filter: &all}}, false, nil},
		{"a policy error fails", fakeScoper{err: boom}, false, boom},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			store := &fakeStore{}
			s, err := New(Options{Store: store, Authz: &tc.scoper})
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Count(context.Background(), admin)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Count error = %v, want %v", err, tc.wantErr)
			}
			if len(tc.scoper.asked) != 1 || tc.scoper.asked[0] != "root/" {
				t.Errorf("scopes asked for %v, want every user of root's", tc.scoper.asked)
			}
			if queried := len(store.scopes) == 1; queried != tc.wantQuery {
				t.Fatalf("queried = %v, want %v", queried, tc.wantQuery)
			}
			if tc.wantQuery && (len(got) != 1 || got[0].N != 3) {
				t.Errorf("Count = %v", got)
			}
			if !tc.wantQuery && len(got) != 0 {
				t.Errorf("Count = %v, want nothing", got)
			}
		})
	}
}
