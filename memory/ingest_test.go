package memory

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// fakeExtractor returns found for any turns and records what it saw.
type fakeExtractor struct {
	found []NewMemory
	err   error
	saw   []Turn
}

func (f *fakeExtractor) Extract(_ context.Context, turns []Turn) ([]NewMemory, error) {
	f.saw = turns
	out := make([]NewMemory, len(f.found))
	copy(out, f.found)
	return out, f.err
}

func ingestFixture(t *testing.T, x *fakeExtractor) *fixture {
	t.Helper()
	f := newFixture(t, RecallConfig{})
	f.svc.extract = x
	return f
}

func TestIngestValidates(t *testing.T) {
	f := ingestFixture(t, &fakeExtractor{})
	turn := Turn{Role: RoleUser, Content: "my budget is 100k"}
	tests := []struct {
		name  string
		req   IngestRequest
		field string
	}{
		{"no user", IngestRequest{Turns: []Turn{turn}}, "user_id"},
		{"bad session", IngestRequest{UserID: "alice", SessionID: "a b", Turns: []Turn{turn}}, "session_id"},
		{"no turns", IngestRequest{UserID: "alice"}, "turns"},
		{"too many turns", IngestRequest{UserID: "alice", Turns: make([]Turn, MaxIngestTurns+1)}, "turns"},
		{"bad role", IngestRequest{UserID: "alice", Turns: []Turn{turn, {Role: "narrator", Content: "x"}}}, "turns[1].role"},
		{"empty content", IngestRequest{UserID: "alice", Turns: []Turn{{Role: RoleUser, Content: " "}}}, "turns[0].content"},
		{"long content", IngestRequest{UserID: "alice", Turns: []Turn{{Role: RoleUser, Content: strings.Repeat("x", MaxTurnChars+1)}}}, "turns[0].content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.svc.Ingest(context.Background(), agentSupport, tt.req)
			if got := fieldOf(t, err); got != tt.field {
				t.Errorf("field = %q, want %q", got, tt.field)
			}
		})
	}
}

func TestIngestWritesThroughCreate(t *testing.T) {
	x := &fakeExtractor{found: []NewMemory{
		// An extractor cannot choose whose memory it is or who wrote it.
		{Tenant: "other", UserID: "bob", AgentID: "billing-bot", Type: TypeSemantic, Kind: "budget", Key: "budget", Content: "Budget 100,000"},
	}}
	f := ingestFixture(t, x)
	turns := []Turn{{Role: RoleUser, Content: "my budget is 100k"}}
	res, err := f.svc.Ingest(context.Background(), agentSupport, IngestRequest{UserID: "alice", SessionID: "s-1", Turns: turns})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) != 1 || res.Reason != "" {
		t.Fatalf("result = %+v", res)
	}
	m := res.Memories[0]
	if m.Tenant != "acme" || m.UserID != "alice" || m.AgentID != "support-bot" || m.SessionID != "s-1" || m.Key != "budget" {
		t.Errorf("stored = %+v", m)
	}
	if len(x.saw) != 1 || x.saw[0].Content != "my budget is 100k" {
		t.Errorf("extractor saw %+v", x.saw)
	}
}

func TestIngestNothingFound(t *testing.T) {
	f := ingestFixture(t, &fakeExtractor{})
	res, err := f.svc.Ingest(context.Background(), agentSupport, IngestRequest{UserID: "alice", Turns: []Turn{{Role: RoleUser, Content: "hi"}}})
	if err != nil || len(res.Memories) != 0 || res.Reason != ReasonNothingWorthRemembering || res.Memories == nil {
		t.Fatalf("result = %+v, %v", res, err)
	}
	if f.store.calls() != 0 {
		t.Errorf("store called %d times for nothing", f.store.calls())
	}
}

func TestIngestPolicyAndErrors(t *testing.T) {
	found := []NewMemory{{Type: TypeSemantic, Kind: "note", Content: "Note: the dock closes at 5"}}
	req := IngestRequest{UserID: "alice", Turns: []Turn{{Role: RoleUser, Content: "remember the dock closes at 5"}}}

	f := ingestFixture(t, &fakeExtractor{found: found})
	f.authz.decide = denyAll
	if _, err := f.svc.Ingest(context.Background(), agentSupport, req); !errors.Is(err, ErrForbidden) {
		t.Errorf("denied write: err = %v, want ErrForbidden", err)
	}

	f = ingestFixture(t, &fakeExtractor{err: errTest("model down")})
	if _, err := f.svc.Ingest(context.Background(), agentSupport, req); !errors.Is(err, errTest("model down")) {
		t.Errorf("extractor error: err = %v", err)
	}
	// A service without an extractor is refused by NewService
	// (TestNewServiceRequiresEveryDependency).
}
