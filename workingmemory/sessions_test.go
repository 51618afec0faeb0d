package workingmemory

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"mneme/memory"
)

var (
	agentSupport = memory.Principal{Tenant: "acme", Kind: memory.KindAgent, ID: "support-bot", Roles: []string{"agent"}}
	agentBilling = memory.Principal{Tenant: "acme", Kind: memory.KindAgent, ID: "billing-bot", Roles: []string{"agent"}}
)

// fakeSessions is an in-memory SessionStore.
type fakeSessions struct {
	open     map[string]memory.Session
	claimed  map[string]bool
	finished []string
}

func (f *fakeSessions) Append(_ context.Context, s memory.Session, turns []memory.Turn, _ time.Duration, now time.Time) (memory.Session, error) {
	cur, ok := f.open[s.ID]
	if !ok {
		cur = s
		cur.CreatedAt = now
	} else if cur.UserID != s.UserID {
		return memory.Session{}, memory.ErrForbidden
	}
	cur.Turns = append(cur.Turns, turns...)
	cur.UpdatedAt = now
	f.open[s.ID] = cur
	return cur, nil
}

func (f *fakeSessions) Get(_ context.Context, tenant, id string) (memory.Session, error) {
	s, ok := f.open[id]
	if !ok || s.Tenant != tenant {
		return memory.Session{}, memory.ErrNotFound
	}
	return s, nil
}

func (f *fakeSessions) Claim(ctx context.Context, tenant, id string, _ time.Time) (memory.Session, error) {
	if f.claimed[id] {
		return memory.Session{}, memory.ErrNotFound
	}
	s, err := f.Get(ctx, tenant, id)
	if err == nil {
		f.claimed[id] = true
	}
	return s, err
}

func (f *fakeSessions) Finish(_ context.Context, _, id string) error {
	delete(f.open, id)
	f.finished = append(f.finished, id)
	return nil
}

// policy allows what allow says; with allow nil it allows everything.
type policy struct {
	memory.Authorizer
	allow func(p memory.Principal, action string, r memory.Resource) bool
}

func (a *policy) Decide(_ context.Context, p memory.Principal, action string, r memory.Resource, _ time.Time) (memory.Decision, error) {
	return memory.Decision{Allow: a.allow == nil || a.allow(p, action, r)}, nil
}

type extractor struct{ found []memory.NewMemory }

func (x extractor) Extract(context.Context, []memory.Turn) ([]memory.NewMemory, error) {
	return append([]memory.NewMemory(nil), x.found...), nil
}

// creator records what it is asked to write and writes it as the memory
// service would: as the principal, in its tenant.
type creator struct {
	as         []memory.Principal
	got        []memory.NewMemory
	deny       func(p memory.Principal, n memory.NewMemory) bool
	authorized []authorized
	applied    []memory.Job
	// room, when set, is how many memories the tenant's quota has room
	// for; a write of more is refused whole, as the memory service does.
	room *int
}

type authorized struct {
	p  memory.Principal
	n  int
	at time.Time
}

func (c *creator) Write(_ context.Context, p memory.Principal, in []memory.NewMemory) ([]memory.WriteResult, error) {
	for _, n := range in {
		if c.deny != nil && c.deny(p, n) {
			return nil, memory.ErrForbidden // the batch is all or nothing
		}
	}
	if c.room != nil {
		if len(in) > *c.room {
			return nil, &memory.QuotaError{Quota: "memories", Limit: 10}
		}
		*c.room -= len(in)
	}
	c.as = append(c.as, p)
	c.got = append(c.got, in...)
	out := make([]memory.WriteResult, len(in))
	for i, n := range in {
		m := memory.Memory{ID: memory.NewID("mem"), Tenant: p.Tenant, UserID: n.UserID, AgentID: AuthorOf(p),
			SessionID: n.SessionID, Type: n.Type, Kind: n.Kind, Content: n.Content, IdempotencyKey: n.IdempotencyKey}
		out[i] = memory.WriteResult{Outcome: memory.OutcomeCreated, ID: m.ID, Memory: &m}
		// The guard policy's default for health terms: masked, and said so.
		if masked := strings.ReplaceAll(m.Content, "allergic", "[REDACTED:health]"); masked != m.Content {
			m.Content, out[i].Redacted = masked, []string{"health"}
		}
	}
	return out, nil
}

type fixture struct {
	svc      *Service
	sessions *fakeSessions
	authz    *policy
	created  *creator
	queue    *queue
	quota    *quota
}

func newFixture(t *testing.T, found []memory.NewMemory) *fixture {
	t.Helper()
	f := &fixture{
		sessions: &fakeSessions{open: map[string]memory.Session{}, claimed: map[string]bool{}},
		authz:    &policy{}, created: &creator{}, queue: &queue{}, quota: &quota{},
	}
	var err error
	f.svc, err = New(Options{
		Memories: f.created, Sessions: f.sessions, Authz: f.authz, Extract: extractor{found}, Queue: f.queue, Quota: f.quota,
	})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestCloseSessionRecordCountsOneTurn(t *testing.T) {
	f := newFixture(t, []memory.NewMemory{{Type: memory.TypeProfile, Kind: "preference", Key: "contact_channel", Content: "I prefer email"}})
	ctx := context.Background()
	if _, err := f.svc.AppendTurns(ctx, agentSupport, "s-1", memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "I prefer email"},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.CloseSession(ctx, agentSupport, "s-1"); err != nil {
		t.Fatal(err)
	}
	rec := f.created.got[len(f.created.got)-1]
	if rec.Kind != memory.KindSession || !strings.Contains(rec.Content, ", 1 turn)") {
		t.Errorf("record = %q, want it to count \"1 turn\"", rec.Content)
	}
}

func TestNewNamesWhatIsMissing(t *testing.T) {
	_, err := New(Options{})
	for _, name := range []string{"Memories", "Sessions", "Authz", "Extract", "Queue"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("New(Options{}) = %v, want it to name %s", err, name)
		}
	}
}

func TestCloseSessionWritesFindingsAndARecord(t *testing.T) {
	found := []memory.NewMemory{
		{Type: memory.TypeSemantic, Kind: "budget", Key: "budget", Content: "Budget 150,000: 预算15万",
			Entities: []memory.Entity{{ID: "SO-1004", Kind: "order", Name: "SO-1004"}}},
		{Type: memory.TypeProfile, Kind: "preference", Key: "contact_channel", Content: "I prefer email"},
	}
	f := newFixture(t, found)
	ctx := context.Background()
	if _, err := f.svc.AppendTurns(ctx, agentSupport, "s-1", memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "预算15万"}, {Role: memory.RoleUser, Content: "I prefer email"},
		{Role: memory.RoleTool, Content: "credit score 412"}, {Role: memory.RoleSystem, Content: "never reveal the margin"},
	}}); err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.CloseSession(ctx, agentSupport, "s-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Memories) != 3 || res.Reason != "" || len(f.sessions.finished) != 1 {
		t.Fatalf("close = %+v, finished %v", res, f.sessions.finished)
	}
	if len(f.created.as) != 1 || f.created.as[0].ID != agentSupport.ID {
		t.Errorf("written as %+v, want the session's owner %s", f.created.as, agentSupport.ID)
	}
	rec := f.created.got[2]
	if rec.Type != memory.TypeEpisodic || rec.Kind != memory.KindSession || rec.SessionID != "s-1" ||
		!strings.Contains(rec.Content, "about budget, contact channel") || !strings.Contains(rec.Content, "SO-1004") ||
		!strings.Contains(rec.Content, ", 2 turns)") ||
		strings.Contains(rec.Content, "150") {
		t.Errorf("record = %+v", rec)
	}
	for i, m := range f.created.got {
		if m.UserID != "alice" || m.SessionID != "s-1" || m.Tenant != "" || m.AgentID != "" ||
			!strings.HasPrefix(m.IdempotencyKey, "session:s-1:") {
			t.Errorf("memory %d = user %q session %q tenant %q agent %q idem %q", i, m.UserID, m.SessionID, m.Tenant, m.AgentID, m.IdempotencyKey)
		}
	}
	if _, err := f.svc.CloseSession(ctx, agentSupport, "s-1"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("closing again: err = %v, want ErrNotFound", err)
	}
}

// A close says what the guard masked in each memory it wrote, as a write
// does: a writer told "Guest is [REDACTED:health] to peanuts" and nothing
// else could not tell an allergy from a hidden word of any kind.
func TestCloseSessionSaysWhatWasMasked(t *testing.T) {
	found := []memory.NewMemory{
		{Type: memory.TypeProfile, Kind: "preference", Key: "diet", Content: "I am allergic to peanuts"},
	}
	f := newFixture(t, found)
	ctx := context.Background()
	if _, err := f.svc.AppendTurns(ctx, agentSupport, "s-h", memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "I am allergic to peanuts"},
	}}); err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.CloseSession(ctx, agentSupport, "s-h")
	if err != nil || len(res.Memories) != 2 {
		t.Fatalf("close = %+v, %v", res, err)
	}
	if got := res.Memories[0]; got.Content != "I am [REDACTED:health] to peanuts" || !slices.Equal(got.Redacted, []string{"health"}) {
		t.Errorf("memory = %q redacted %v, want the health term masked and named", got.Content, got.Redacted)
	}
	if got := res.Memories[1]; got.Redacted != nil {
		t.Errorf("record redacted %v, want none", got.Redacted)
	}
	ing, err := f.svc.Ingest(ctx, agentSupport, memory.IngestRequest{UserID: "bob", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "I am allergic to peanuts"},
	}}, "")
	if err != nil || len(ing.Memories) == 0 || !slices.Equal(ing.Memories[0].Redacted, []string{"health"}) {
		t.Errorf("ingest = %+v, %v; want the first memory's redacted to name health", ing, err)
	}
}

// TestCloseSessionKeepsWhatPolicyAllows: an end user's conversation held a
// note, which users may not write; the rest is kept and the note counted,
// rather than the whole session refused (and lost when it expires).
func TestCloseSessionKeepsWhatPolicyAllows(t *testing.T) {
	alice := memory.Principal{Tenant: "acme", Kind: memory.KindUser, ID: "alice"}
	tests := []struct {
		name    string
		deny    func(memory.Principal, memory.NewMemory) bool
		kept    []string // types written, in order
		refused int
		reason  string
	}{
		{"a note among them", func(_ memory.Principal, n memory.NewMemory) bool { return n.Type == memory.TypeSemantic },
			[]string{memory.TypeProfile, memory.TypeEpisodic}, 1, ""},
		{"nothing allowed", func(memory.Principal, memory.NewMemory) bool { return true }, nil, 3, ReasonRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, []memory.NewMemory{
				{Type: memory.TypeSemantic, Kind: "note", Content: "Walrus Logistics is in Dalian"},
				{Type: memory.TypeProfile, Kind: "preference", Key: "contact_channel", Content: "I prefer email"},
			})
			f.created.deny = tt.deny
			ctx := context.Background()
			if _, err := f.svc.AppendTurns(ctx, alice, "s-1", memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{
				{Role: memory.RoleUser, Content: "Remember that my company is Walrus Logistics in Dalian. I prefer email."},
			}}); err != nil {
				t.Fatal(err)
			}
			res, err := f.svc.CloseSession(ctx, alice, "s-1")
			if err != nil {
				t.Fatal(err)
			}
			var kept []string
			for _, m := range res.Memories {
				kept = append(kept, m.Type)
			}
			if !slices.Equal(kept, tt.kept) || res.Refused != tt.refused || res.Reason != tt.reason || len(f.sessions.finished) != 1 {
				t.Errorf("close kept %v, refused %d, reason %q, finished %v; want %v, %d, %q and the session finished",
					kept, res.Refused, res.Reason, f.sessions.finished, tt.kept, tt.refused, tt.reason)
			}
		})
	}
}

// TestCloseSessionWithinQuota: a session ends even when the tenant's quota
// has no room for all it holds: what fits is written, in the order found,
// and the rest is left out and counted.
func TestCloseSessionWithinQuota(t *testing.T) {
	found := []memory.NewMemory{
		{Type: memory.TypeSemantic, Kind: "budget", Key: "budget", Content: "Budget 150,000"},
		{Type: memory.TypeProfile, Kind: "preference", Key: "contact_channel", Content: "I prefer email"},
		{Type: memory.TypeSemantic, Kind: "note", Content: "Walrus Logistics is in Dalian"},
	}
	tests := []struct {
		name    string
		room    int
		kept    []string // kinds written, in order
		refused int
		reason  string
	}{
		{"room for all", 4, []string{"budget", "preference", "note", memory.KindSession}, 0, ""},
		{"room for three", 3, []string{"budget", "preference", "note"}, 1, ReasonQuota},
		{"room for one", 1, []string{"budget"}, 3, ReasonQuota},
		{"no room", 0, nil, 4, ReasonQuota},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, found)
			f.created.room = &tt.room
			ctx := context.Background()
			if _, err := f.svc.AppendTurns(ctx, agentSupport, "s-1", memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{
				{Role: memory.RoleUser, Content: "Budget 150k. I prefer email. Walrus Logistics is in Dalian."},
			}}); err != nil {
				t.Fatal(err)
			}
			res, err := f.svc.CloseSession(ctx, agentSupport, "s-1")
			if err != nil {
				t.Fatalf("close: %v", err)
			}
			var kept []string
			for _, m := range res.Memories {
				kept = append(kept, m.Kind)
			}
			if !slices.Equal(kept, tt.kept) || res.Refused != tt.refused || res.Reason != tt.reason {
				t.Errorf("close kept %v, refused %d, reason %q; want %v, %d, %q", kept, res.Refused, res.Reason, tt.kept, tt.refused, tt.reason)
			}
			if !slices.Equal(f.sessions.finished, []string{"s-1"}) {
				t.Errorf("finished %v, want the session ended", f.sessions.finished)
			}
			seen := map[string]bool{}
			for _, m := range f.created.got {
				if seen[m.IdempotencyKey] {
					t.Errorf("%s written twice", m.IdempotencyKey)
				}
				seen[m.IdempotencyKey] = true
			}
		})
	}
}

func TestCloseSessionWithNothingWorthRemembering(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	if _, err := f.svc.AppendTurns(ctx, agentSupport, "s-1", memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{
		{Role: memory.RoleUser, Content: "hello"},
	}}); err != nil {
		t.Fatal(err)
	}
	res, err := f.svc.CloseSession(ctx, agentSupport, "s-1")
	if err != nil || len(res.Memories) != 0 || res.Reason != ReasonNothingWorthRemembering || len(f.created.got) != 0 {
		t.Errorf("close = %+v, %v; wrote %d", res, err, len(f.created.got))
	}
}

func TestSessionPolicy(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	req := memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{{Role: memory.RoleUser, Content: "hi"}}}
	if _, err := f.svc.AppendTurns(ctx, agentSupport, "s-1", req); err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.AppendTurns(ctx, agentSupport, "s-3", memory.AppendRequest{UserID: "alice", AgentID: "billing-bot", Turns: req.Turns}); !errors.Is(err, memory.ErrForbidden) {
		t.Errorf("append as another agent: err = %v, want ErrForbidden", err)
	}
	f.authz.allow = func(p memory.Principal, _ string, r memory.Resource) bool {
		return p.ID == "support-bot" && r.Kind == memory.KindSession && r.UserID == "alice" && r.AgentID == "support-bot"
	}
	if _, err := f.svc.GetSession(ctx, agentSupport, "s-1"); err != nil {
		t.Errorf("allowed read: %v", err)
	}
	if _, err := f.svc.GetSession(ctx, agentBilling, "s-1"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("denied read: err = %v, want ErrNotFound", err)
	}
	if _, err := f.svc.CloseSession(ctx, agentBilling, "s-1"); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("denied close: err = %v, want ErrNotFound", err)
	}
	f.authz.allow = func(memory.Principal, string, memory.Resource) bool { return false }
	if _, err := f.svc.AppendTurns(ctx, agentSupport, "s-2", req); !errors.Is(err, memory.ErrForbidden) {
		t.Errorf("denied append: err = %v, want ErrForbidden", err)
	}
}

func TestAppendTurnsValidates(t *testing.T) {
	f := newFixture(t, nil)
	turn := memory.Turn{Role: memory.RoleUser, Content: "hi"}
	tests := []struct {
		name, id string
		req      memory.AppendRequest
		field    string
	}{
		{"bad id", "a b", memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{turn}}, "session_id"},
		{"no user", "s", memory.AppendRequest{Turns: []memory.Turn{turn}}, "user_id"},
		{"no turns", "s", memory.AppendRequest{UserID: "alice"}, "turns"},
		{"ttl too long", "s", memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{turn}, TTLSeconds: int(memory.MaxSessionTTL/time.Second) + 1}, "ttl_seconds"},
		{"bad turn", "s", memory.AppendRequest{UserID: "alice", Turns: []memory.Turn{turn, {Role: memory.RoleUser}}}, "turns[1].content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.svc.AppendTurns(context.Background(), agentSupport, tt.id, tt.req)
			var inv *memory.InvalidError
			if !errors.As(err, &inv) || inv.Field != tt.field {
				t.Errorf("err = %v, want an invalid %q", err, tt.field)
			}
		})
	}
}

// TestSessionRecordCapsEntities: the record of a long conversation names at
// most the entities one memory may mention.
func TestSessionRecordCapsEntities(t *testing.T) {
	var found []memory.NewMemory
	for i := range memory.MaxEntities + 10 {
		found = append(found, memory.NewMemory{Kind: "order", Entities: []memory.Entity{{ID: fmt.Sprintf("order:so-%d", i), Kind: "order", Name: fmt.Sprintf("SO-%d", i)}}})
	}
	rec := sessionRecord(memory.Session{ID: "s1"}, found)
	if len(rec.Entities) != memory.MaxEntities {
		t.Errorf("the record names %d entities, want %d", len(rec.Entities), memory.MaxEntities)
	}
}

// A turn keeps none of what no memory keeps as said by default, however it
// is written; contact details wait for the close.
func TestTurnsMaskSecrets(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"cn id in fours", "我的身份证号 1101 0519 4912 3100 2X", "我的身份证号 [REDACTED:cn_id]"},
		{"passport in groups", "passport number E 1234 5678, thanks", "passport number [REDACTED:id_number], thanks"},
		{"driver's licence", "driver's licence number D123-4567-8901", "driver's licence number [REDACTED:id_number]"},
		{"one-time code", "验证码 839201", "验证码 [REDACTED:password]"},
		{"letter-spaced password", "p a s s w o r d is hunter2x!", "p a s s w o r d is [REDACTED:password]"},
		{"grouped order number", "order 1234 5678 9012 3456 78", "order 1234 5678 9012 3456 78"},
		{"phone", "call 138 1234 5678", "call 138 1234 5678"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := maskSecrets(tc.text); got != tc.want {
				t.Errorf("maskSecrets(%q) = %q, want %q", tc.text, got, tc.want)
			}
		})
	}
}
