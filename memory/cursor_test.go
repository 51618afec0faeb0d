package memory

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCursorRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		c    Cursor
	}{
		{"utc with nanoseconds", Cursor{CreatedAt: time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC), ID: "mem_1"}},
		{"other zone comes back as utc", Cursor{CreatedAt: time.Date(2025, 3, 1, 13, 0, 0, 1, time.FixedZone("CET", 3600)), ID: "mem_2"}},
		{"before 1970", Cursor{CreatedAt: time.Date(1969, 7, 20, 20, 17, 0, 0, time.UTC), ID: "mem_3"}},
		{"id with separator", Cursor{CreatedAt: testNow, ID: "a|b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := encodeCursor(tt.c)
			got, err := decodeCursor(s)
			if err != nil {
				t.Fatalf("decodeCursor(%q): %v", s, err)
			}
			if !got.CreatedAt.Equal(tt.c.CreatedAt) || got.ID != tt.c.ID || got.CreatedAt.Location() != time.UTC {
				t.Errorf("round trip = %+v, want %+v in UTC", got, tt.c)
			}
		})
	}
}

func TestDecodeCursorRejectsGarbage(t *testing.T) {
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	for _, s := range []string{
		"",
		"!!!",
		"bm90IGJhc2U2NA==", // padded standard encoding
		b64("no separator"),
		b64("1740830400000000000|"),
		b64("yesterday|mem_1"),
		b64("|mem_1"),
		b64("99999999999999999999|mem_1"), // overflows int64
	} {
		t.Run(fmt.Sprintf("%q", s), func(t *testing.T) {
			if c, err := decodeCursor(s); err == nil {
				t.Errorf("decodeCursor(%q) = %+v, want an error", s, c)
			}
		})
	}
}

func TestListValidation(t *testing.T) {
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	tests := []struct {
		name      string
		r         ListRequest
		wantField string
	}{
		{"bad user_id", ListRequest{UserID: "al ice"}, "user_id"},
		{"user_id too long", ListRequest{UserID: strings.Repeat("a", 65)}, "user_id"},
		{"unknown type", ListRequest{Type: "dream"}, "type"},
		{"unknown status", ListRequest{Status: "deleted"}, "status"},
		{"negative limit", ListRequest{Limit: -1}, "limit"},
		{"limit over max", ListRequest{Limit: MaxListSize + 1}, "limit"},
		{"from equals to", ListRequest{From: testNow, To: testNow}, "from"},
		{"from after to", ListRequest{From: testNow, To: testNow.Add(-time.Second)}, "from"},
		{"garbage cursor", ListRequest{Cursor: "!!not-a-cursor!!"}, "cursor"},
		{"cursor without id", ListRequest{Cursor: b64("123|")}, "cursor"},
		{"cursor with bad time", ListRequest{Cursor: b64("noon|mem_1")}, "cursor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			_, err := f.svc.List(context.Background(), agentSupport, tt.r)
			if field := fieldOf(t, err); field != tt.wantField {
				t.Errorf("field = %q, want %q (err %v)", field, tt.wantField, err)
			}
			if n := f.store.calls(); n != 0 {
				t.Errorf("store got %d calls", n)
			}
			if n := len(f.authz.scopeCalls); n != 0 {
				t.Errorf("policy scope asked %d times", n)
			}
		})
	}
}

func TestListQuery(t *testing.T) {
	cursor := Cursor{CreatedAt: testNow.Add(-time.Minute), ID: "mem_9"}
	from, to := testNow.Add(-24*time.Hour), testNow
	tests := []struct {
		name string
		r    ListRequest
		want ListQuery
	}{
		{"defaults ask one more than the default page", ListRequest{}, ListQuery{Limit: DefaultListSize + 1}},
		{"limit 1", ListRequest{Limit: 1}, ListQuery{Limit: 2}},
		{"max limit", ListRequest{Limit: MaxListSize}, ListQuery{Limit: MaxListSize + 1}},
		{"filters pass through", ListRequest{
			UserID: "alice", Type: TypeEpisodic, Kind: "order", Status: StatusSuperseded, From: from, To: to, Limit: 10,
		}, ListQuery{UserID: "alice", Type: TypeEpisodic, Kind: "order", Status: StatusSuperseded, From: from, To: to, Limit: 11}},
		{"only from", ListRequest{From: from}, ListQuery{From: from, Limit: DefaultListSize + 1}},
		{"cursor decodes into After", ListRequest{Cursor: encodeCursor(cursor), Limit: 5}, ListQuery{After: &cursor, Limit: 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			scope := Scope{Tenant: "acme", Clauses: []Clause{{UserID: "alice", AgentIDs: []string{"support-bot"}}}}
			f.authz.scope = scope
			if _, err := f.svc.List(context.Background(), agentSupport, tt.r); err != nil {
				t.Fatalf("List: %v", err)
			}
			if diff := cmp.Diff([]ListQuery{tt.want}, f.store.listCalls); diff != "" {
				t.Errorf("store query (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]Scope{scope}, f.store.listScopes); diff != "" {
				t.Errorf("store scope (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{tt.r.UserID}, f.authz.scopeCalls); diff != "" {
				t.Errorf("ReadScope user (-want +got):\n%s", diff)
			}
		})
	}
}

func TestListPages(t *testing.T) {
	rows := make([]Memory, 4)
	for i := range rows {
		rows[i] = stored(fmt.Sprintf("mem_%d", i), fmt.Sprintf("fact %d", i))
		rows[i].CreatedAt = testNow.Add(-time.Duration(i) * time.Minute)
	}
	ids := func(ms []Memory) []string {
		out := []string{}
		for _, m := range ms {
			out = append(out, m.ID)
		}
		return out
	}
	tests := []struct {
		name       string
		limit      int
		rows       []Memory
		decide     func(Principal, string, Resource) (Decision, error)
		wantIDs    []string
		wantCursor *Cursor
	}{
		{"no rows", 3, nil, nil, []string{}, nil},
		{"fewer rows than the page", 3, rows[:2], nil, []string{"mem_0", "mem_1"}, nil},
		{"exactly a page: no next cursor", 3, rows[:3], nil, []string{"mem_0", "mem_1", "mem_2"}, nil},
		{"one more than a page: cursor at the last kept", 3, rows[:4], nil, []string{"mem_0", "mem_1", "mem_2"},
			&Cursor{CreatedAt: rows[2].CreatedAt, ID: "mem_2"}},
		{"page of one", 1, rows[:2], nil, []string{"mem_0"}, &Cursor{CreatedAt: rows[0].CreatedAt, ID: "mem_0"}},
		// Defence in depth: the store returned a memory policy denies.
		{"denied row is dropped", 3, rows[:3], denyIDs("mem_1"), []string{"mem_0", "mem_2"}, nil},
		// The cursor follows the store's rows, so a dropped row at the end of
		// a page neither repeats nor stalls the listing.
		{"denied last row still moves the cursor", 3, rows[:4], denyIDs("mem_2"), []string{"mem_0", "mem_1"},
			&Cursor{CreatedAt: rows[2].CreatedAt, ID: "mem_2"}},
		{"policy error drops", 3, rows[:2], failAll, []string{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			f.store.list = tt.rows
			f.authz.decide = tt.decide
			page, err := f.svc.List(context.Background(), agentSupport, ListRequest{Limit: tt.limit})
			if err != nil {
				t.Fatalf("List: %v", err)
			}
			if page.Memories == nil {
				t.Error("Memories is nil; clients expect []")
			}
			if diff := cmp.Diff(tt.wantIDs, ids(page.Memories)); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if tt.wantCursor == nil {
				if page.NextCursor != "" {
					t.Errorf("NextCursor = %q, want none", page.NextCursor)
				}
				return
			}
			got, err := decodeCursor(page.NextCursor)
			if err != nil {
				t.Fatalf("NextCursor %q does not decode: %v", page.NextCursor, err)
			}
			if !got.CreatedAt.Equal(tt.wantCursor.CreatedAt) || got.ID != tt.wantCursor.ID {
				t.Errorf("NextCursor = %+v, want %+v", got, *tt.wantCursor)
			}
			// Feeding the cursor back asks the store for what follows it.
			if _, err := f.svc.List(context.Background(), agentSupport, ListRequest{Limit: tt.limit, Cursor: page.NextCursor}); err != nil {
				t.Fatalf("List with cursor: %v", err)
			}
			after := f.store.listCalls[1].After
			if after == nil || !after.CreatedAt.Equal(tt.wantCursor.CreatedAt) || after.ID != tt.wantCursor.ID {
				t.Errorf("second query After = %+v, want %+v", after, *tt.wantCursor)
			}
		})
	}
}

func TestListErrors(t *testing.T) {
	scopeErr := errTest("opa down")
	tests := []struct {
		name     string
		scopeErr error
		listErr  error
		want     error
	}{
		{"read scope", scopeErr, nil, scopeErr},
		{"store", nil, ErrUnavailable, ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			f.authz.scopeErr = tt.scopeErr
			f.store.listErr = tt.listErr
			_, err := f.svc.List(context.Background(), agentSupport, ListRequest{})
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if tt.scopeErr != nil && f.store.calls() != 0 {
				t.Error("store queried without a scope")
			}
		})
	}
}
