package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// fieldOf returns the Field of an *InvalidError, or fails the test.
func fieldOf(t *testing.T, err error) string {
	t.Helper()
	var inv *InvalidError
	if !errors.As(err, &inv) {
		t.Fatalf("err = %v (%T), want *InvalidError", err, err)
	}
	return inv.Field
}

// validNew is a memory every principal in these tests may create.
func validNew() NewMemory {
	return NewMemory{UserID: "alice", Type: TypeSemantic, Content: "Alice prefers tea over coffee."}
}

func TestInvalidError(t *testing.T) {
	tests := []struct {
		field, reason, want string
	}{
		{"content", "must not be empty", "content: must not be empty"},
		{"", "bad request", "bad request"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := Invalid(tt.field, tt.reason).Error(); got != tt.want {
				t.Errorf("Error() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNewServiceRequiresEveryDependency(t *testing.T) {
	full := newFixture(t, RecallConfig{}).options(t, RecallConfig{})
	full.Logger, full.Now = nil, nil
	tests := []struct {
		name string
		drop func(*Options)
	}{
		{"Store", func(o *Options) { o.Store = nil }},
		{"Authz", func(o *Options) { o.Authz = nil }},
		{"Embed", func(o *Options) { o.Embed = nil }},
		{"Guard", func(o *Options) { o.Guard = nil }},
		{"Writes", func(o *Options) { o.Writes = nil }},
		{"Warm", func(o *Options) { o.Warm = nil }},
		{"Confirm", func(o *Options) { o.Confirm = nil }},
		{"Forget", func(o *Options) { o.Forget = nil }},
		{"Fence", func(o *Options) { o.Fence = nil }},
		{"Erasers", func(o *Options) { o.Erasers = nil }},
		{"Janitor", func(o *Options) { o.Janitor = nil }},
		{"Sessions", func(o *Options) { o.Sessions = nil }},
		{"Queue", func(o *Options) { o.Queue = nil }},
		{"Search", func(o *Options) { o.Search = nil }},
		{"Recorder", func(o *Options) { o.Recorder = nil }},
		{"Audit", func(o *Options) { o.Audit = nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := full
			tt.drop(&o)
			_, err := NewService(o)
			if err == nil {
				t.Fatal("NewService succeeded without a required dependency")
			}
			if !strings.Contains(err.Error(), tt.name) {
				t.Errorf("err = %q, want it to name %s", err, tt.name)
			}
		})
	}
	t.Run("optional", func(t *testing.T) {
		o := full
		o.MemoryErasers, o.Recall.Reranker = nil, nil
		if _, err := NewService(o); err != nil {
			t.Errorf("NewService without the optional parts: %v", err)
		}
	})
	t.Run("defaults", func(t *testing.T) {
		s, err := NewService(full)
		if err != nil {
			t.Fatal(err)
		}
		if s.log == nil || s.now == nil || s.recall.Keywords == nil || s.recall.RRFK != 60 {
			t.Errorf("defaults not applied: log=%v now=%v recall=%+v", s.log != nil, s.now != nil, s.recall)
		}
	})
}

func TestCreateValidation(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	tests := []struct {
		name      string
		p         Principal
		edit      func(*NewMemory)
		wantField string
	}{
		{"tenant with a space", agentSupport, func(n *NewMemory) { n.Tenant = "ac me" }, "tenant"},
		{"tenant too long", agentSupport, func(n *NewMemory) { n.Tenant = long(65) }, "tenant"},
		// '_' ends the tenant part of an API key, so no tenant may hold one.
		{"tenant with underscore", agentSupport, func(n *NewMemory) { n.Tenant = "acme_corp" }, "tenant"},
		{"principal without tenant", Principal{Kind: KindAgent, ID: "support-bot"}, func(*NewMemory) {}, "tenant"},
		{"user_id missing", agentSupport, func(n *NewMemory) { n.UserID = "" }, "user_id"},
		{"user_id bad character", agentSupport, func(n *NewMemory) { n.UserID = "al/ice" }, "user_id"},
		{"user_id too long", agentSupport, func(n *NewMemory) { n.UserID = long(65) }, "user_id"},
		{"user_id of dots alone", agentSupport, func(n *NewMemory) { n.UserID = ".." }, "user_id"},
		{"session_id of a dot", agentSupport, func(n *NewMemory) { n.SessionID = "." }, "session_id"},
		{"admin without agent_id", adminAcme, func(*NewMemory) {}, "agent_id"},
		{"admin with bad agent_id", adminAcme, func(n *NewMemory) { n.AgentID = "bad agent" }, "agent_id"},
		{"session_id bad", agentSupport, func(n *NewMemory) { n.SessionID = "s 1" }, "session_id"},
		{"session_id too long", agentSupport, func(n *NewMemory) { n.SessionID = long(65) }, "session_id"},
		{"type missing", agentSupport, func(n *NewMemory) { n.Type = "" }, "type"},
		{"type unknown", agentSupport, func(n *NewMemory) { n.Type = "dream" }, "type"},
		{"type wrong case", agentSupport, func(n *NewMemory) { n.Type = "Semantic" }, "type"},
		{"content empty", agentSupport, func(n *NewMemory) { n.Content = "" }, "content"},
		{"content blank", agentSupport, func(n *NewMemory) { n.Content = " \t\n " }, "content"},
		{"content of Hangul fillers", agentSupport, func(n *NewMemory) { n.Content = "\u3164\u3164" }, "content"},
		{"content of invisible marks and spaces", agentSupport, func(n *NewMemory) { n.Content = "\u200b \u2800\u3000\ufe0f" }, "content"},
		{"content invalid UTF-8", agentSupport, func(n *NewMemory) { n.Content = "tea \xff\xfe" }, "content"},
		{"content with a NUL", agentSupport, func(n *NewMemory) { n.Content = "tea \x00 coffee" }, "content"},
		{"content too long", agentSupport, func(n *NewMemory) { n.Content = strings.Repeat("é", MaxContentChars+1) }, "content"},
		{"kind too long", agentSupport, func(n *NewMemory) { n.Kind = long(65) }, "kind"},
		{"kind with a zero-width space", agentSupport, func(n *NewMemory) { n.Kind = "pre\u200bference" }, "kind"},
		{"kind with a bidi override", agentSupport, func(n *NewMemory) { n.Kind = "\u202eevil" }, "kind"},
		{"kind with a tab", agentSupport, func(n *NewMemory) { n.Kind = "pref\terence" }, "kind"},
		{"kind with a Cyrillic e", agentSupport, func(n *NewMemory) { n.Kind = "pre\u0435ference" }, "kind"},
		{"kind with a full-width e", agentSupport, func(n *NewMemory) { n.Kind = "pre\uff45ference" }, "kind"},
		{"key with a Greek epsilon", agentSupport, func(n *NewMemory) { n.Key = "answ\u03b5r_style" }, "key"},
		{"key too long", agentSupport, func(n *NewMemory) { n.Key = long(129) }, "key"},
		{"key with a zero-width space", agentSupport, func(n *NewMemory) { n.Key = "answer\u200b_style" }, "key"},
		{"key with a bidi mark", agentSupport, func(n *NewMemory) { n.Key = "answer_style\u202e" }, "key"},
		{"key with a line break", agentSupport, func(n *NewMemory) { n.Key = "answer\nstyle" }, "key"},
		{"key with a trailing space", agentSupport, func(n *NewMemory) { n.Key = "answer_style " }, "key"},
		{"entity id with a zero-width joiner", agentSupport, func(n *NewMemory) { n.Entities = []Entity{{ID: "SO-1001\u200d"}} }, "entities"},
		{"source too long", agentSupport, func(n *NewMemory) { n.Source = long(65) }, "source"},
		{"idempotency_key too long", agentSupport, func(n *NewMemory) { n.IdempotencyKey = long(129) }, "idempotency_key"},
		{"sensitivity unknown", agentSupport, func(n *NewMemory) { n.Sensitivity = "secret" }, "sensitivity"},
		{"importance below 0", agentSupport, func(n *NewMemory) { n.Importance = ptr(-0.01) }, "importance"},
		{"importance above 1", agentSupport, func(n *NewMemory) { n.Importance = ptr(1.01) }, "importance"},
		{"confidence below 0", agentSupport, func(n *NewMemory) { n.Confidence = ptr(-1.0) }, "confidence"},
		{"confidence above 1", agentSupport, func(n *NewMemory) { n.Confidence = ptr(2.0) }, "confidence"},
		{"entity without id", agentSupport, func(n *NewMemory) { n.Entities = []Entity{{Kind: "order", Name: "A-1"}} }, "entities"},
		{"entity id too long", agentSupport, func(n *NewMemory) { n.Entities = []Entity{{ID: long(129)}} }, "entities"},
		{"entity name too long", agentSupport, func(n *NewMemory) { n.Entities = []Entity{{ID: "o1", Name: long(257)}} }, "entities"},
		{"entity kind too long", agentSupport, func(n *NewMemory) { n.Entities = []Entity{{ID: "o1", Kind: long(65)}} }, "entities"},
		{"second entity bad", agentSupport, func(n *NewMemory) { n.Entities = []Entity{{ID: "o1"}, {ID: ""}} }, "entities"},
		{"entity id with a NUL", agentSupport, func(n *NewMemory) { n.Entities = []Entity{{ID: "../../x\x00"}} }, "entities"},
		{"entity name with an escape", agentSupport, func(n *NewMemory) { n.Entities = []Entity{{ID: "o1", Name: "\x1b[31mred"}} }, "entities"},
		{"too many entities", agentSupport, func(n *NewMemory) { n.Entities = entities(MaxEntities + 1) }, "entities"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			n := validNew()
			tt.edit(&n)
			_, err := create(context.Background(), f.svc, tt.p, []NewMemory{n})
			if got := fieldOf(t, err); got != tt.wantField {
				t.Errorf("field = %q, want %q (err %v)", got, tt.wantField, err)
			}
			if n := f.store.calls(); n != 0 {
				t.Errorf("store got %d calls for invalid input", n)
			}
			if n := f.embed.callCount(); n != 0 {
				t.Errorf("embedder got %d calls for invalid input", n)
			}
		})
	}
}

// entities returns n distinct entities.
func entities(n int) []Entity {
	out := make([]Entity, n)
	for i := range out {
		out[i] = Entity{ID: fmt.Sprintf("product:p%d", i), Kind: "product", Name: fmt.Sprintf("P%d", i)}
	}
	return out
}

// Text that looks alike is stored alike: content, kind and key are kept
// composed (NFC), whichever way their accents were typed.
func TestCreateComposesText(t *testing.T) {
	f := newFixture(t, RecallConfig{})
	n := validNew()
	n.Content, n.Kind, n.Key = "Alice orders from Cafe\u0301 Mu\u0308ller.", "cafe\u0301", "cafe\u0301_owner"
	got, err := create(context.Background(), f.svc, agentSupport, []NewMemory{n})
	if err != nil {
		t.Fatal(err)
	}
	if m := got[0]; m.Content != "Alice orders from Caf\u00e9 M\u00fcller." || m.Kind != "caf\u00e9" || m.Key != "caf\u00e9_owner" {
		t.Errorf("stored %q, kind %q, key %q; want them composed", m.Content, m.Kind, m.Key)
	}
}

func TestCreateAcceptsLimits(t *testing.T) {
	tests := []struct {
		name string
		edit func(*NewMemory)
	}{
		{"content of MaxContentChars multi-byte runes", func(n *NewMemory) { n.Content = strings.Repeat("é", MaxContentChars) }},
		{"importance and confidence 0", func(n *NewMemory) { n.Importance, n.Confidence = ptr(0.0), ptr(0.0) }},
		{"importance and confidence 1", func(n *NewMemory) { n.Importance, n.Confidence = ptr(1.0), ptr(1.0) }},
		{"every sensitivity: restricted", func(n *NewMemory) { n.Sensitivity = SensitivityRestricted }},
		{"names with -_.:@", func(n *NewMemory) { n.UserID, n.SessionID = "alice@example.com", "s-1_a.b:c" }},
		{"MaxEntities entities", func(n *NewMemory) { n.Entities = entities(MaxEntities) }},
		{"field lengths at their limits", func(n *NewMemory) {
			n.Kind, n.Key, n.Source, n.IdempotencyKey = strings.Repeat("k", 64), strings.Repeat("k", 128), strings.Repeat("s", 64), strings.Repeat("i", 128)
		}},
		{"entity at its limits", func(n *NewMemory) {
			n.Entities = []Entity{{ID: strings.Repeat("e", 128), Kind: strings.Repeat("k", 64), Name: strings.Repeat("n", 256)}}
		}},
		{"tenant named explicitly", func(n *NewMemory) { n.Tenant = "acme" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			n := validNew()
			tt.edit(&n)
			if _, err := create(context.Background(), f.svc, agentSupport, []NewMemory{n}); err != nil {
				t.Fatalf("Create: %v", err)
			}
		})
	}
}

func TestCreateBatch(t *testing.T) {
	batch := func(n int) []NewMemory {
		out := make([]NewMemory, n)
		for i := range out {
			out[i] = validNew()
			out[i].Content = fmt.Sprintf("fact %d", i)
		}
		return out
	}
	bad := batch(3)
	bad[1].Type = "dream"
	badContent := batch(2)
	badContent[1].Content = ""

	tests := []struct {
		name      string
		in        []NewMemory
		wantField string // "" means success
	}{
		{"nil", nil, "memories"},
		{"empty", []NewMemory{}, "memories"},
		{"over MaxBatch", batch(MaxBatch + 1), "memories"},
		{"exactly MaxBatch", batch(MaxBatch), ""},
		{"second item bad type", bad, "memories[1].type"},
		{"second item empty content", badContent, "memories[1].content"},
		{"single item is not prefixed", []NewMemory{{UserID: "alice", Type: "dream", Content: "x"}}, "type"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			got, err := create(context.Background(), f.svc, agentSupport, tt.in)
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("Create: %v", err)
				}
				if len(got) != len(tt.in) || len(f.store.created) != 1 {
					t.Errorf("created %d memories in %d store calls, want %d in 1", len(got), len(f.store.created), len(tt.in))
				}
				return
			}
			if field := fieldOf(t, err); field != tt.wantField {
				t.Errorf("field = %q, want %q", field, tt.wantField)
			}
			if n := f.store.calls(); n != 0 {
				t.Errorf("store got %d calls; a bad batch must write nothing", n)
			}
		})
	}
}

// A write naming another tenant, or another author than its caller, is
// refused before policy is asked, and says which field.
func TestCreateMayNotNameAnotherPrincipal(t *testing.T) {
	otherTenant := validNew()
	otherTenant.Tenant = "globex"
	otherAgent := validNew()
	otherAgent.AgentID = "billing-bot"
	for _, tt := range []struct {
		name  string
		in    NewMemory
		field string
	}{
		{"tenant", otherTenant, "tenant"},
		{"agent", otherAgent, "agent_id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			_, err := create(context.Background(), f.svc, agentSupport, []NewMemory{tt.in})
			var field *ForbiddenFieldError
			if !errors.Is(err, ErrForbidden) || !errors.As(err, &field) || field.Field != tt.field {
				t.Fatalf("err = %v, want ErrForbidden naming %s", err, tt.field)
			}
			if n := f.store.calls(); n != 0 || len(f.authz.decisions) != 0 {
				t.Errorf("store got %d calls, policy %d; want none", n, len(f.authz.decisions))
			}
		})
	}
}

func TestCreateAgentMayNotNameAnotherAgent(t *testing.T) {
	other := validNew()
	other.AgentID = "billing-bot"
	tests := []struct {
		name string
		in   []NewMemory
	}{
		{"single", []NewMemory{other}},
		{"second of a batch", []NewMemory{validNew(), other}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			_, err := create(context.Background(), f.svc, agentSupport, tt.in)
			if !errors.Is(err, ErrForbidden) {
				t.Fatalf("err = %v, want ErrForbidden", err)
			}
			if n := f.store.calls(); n != 0 {
				t.Errorf("store got %d calls", n)
			}
			if n := len(f.authz.decisions); n > len(tt.in)-1 {
				t.Errorf("policy asked %d times; the forbidden item must not reach it", n)
			}
		})
	}
}

func TestCreateDefaults(t *testing.T) {
	ignore := cmpopts.IgnoreFields(Memory{}, "ID", "Embedding")
	base := Memory{
		Tenant: "acme", UserID: "alice", Type: TypeSemantic, Content: "Alice prefers tea over coffee.",
		Status: StatusActive, Sensitivity: SensitivityInternal, Importance: 0.5, Confidence: 1,
		ValidFrom: testNow, CreatedAt: testNow, UpdatedAt: testNow, Version: 1, EvidenceCount: 1,
		EmbeddingModel: "fake", EmbeddingDim: 2,
	}
	with := func(edit func(*Memory)) Memory { m := base; edit(&m); return m }
	tests := []struct {
		name string
		p    Principal
		in   NewMemory
		want Memory
	}{
		{"agent writes as itself", agentSupport, validNew(), with(func(m *Memory) { m.AgentID = "support-bot" })},
		{"agent names itself", agentSupport, func() NewMemory { n := validNew(); n.AgentID = "support-bot"; return n }(),
			with(func(m *Memory) { m.AgentID = "support-bot" })},
		{"user writes as user:<id>", userAlice, validNew(), with(func(m *Memory) { m.AgentID = "user:alice" })},
		{"admin names an agent", adminAcme, func() NewMemory { n := validNew(); n.AgentID = "billing-bot"; return n }(),
			with(func(m *Memory) { m.AgentID = "billing-bot" })},
		{"explicit values are kept", agentSupport, NewMemory{
			UserID: "alice", SessionID: "s1", Type: TypeProfile, Kind: "habit", Key: "drink",
			Content: "tea", Sensitivity: SensitivityConfidential, Importance: ptr(0.9), Confidence: ptr(0.0),
			Source: "chat", Entities: []Entity{{ID: "p1", Kind: "product", Name: "Tea"}}, IdempotencyKey: "req-1",
		}, with(func(m *Memory) {
			m.AgentID, m.SessionID, m.Type, m.Kind, m.Key, m.Content = "support-bot", "s1", TypeProfile, "habit", "drink", "tea"
			m.Sensitivity, m.Importance, m.Confidence, m.Source = SensitivityConfidential, 0.9, 0, "chat"
			m.Entities, m.IdempotencyKey = []Entity{{ID: "p1", Kind: "product", Name: "Tea"}}, "req-1"
		})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			got, err := create(context.Background(), f.svc, tt.p, []NewMemory{tt.in})
			if err != nil {
				t.Fatalf("Create: %v", err)
			}
			if len(got) != 1 {
				t.Fatalf("got %d memories, want 1", len(got))
			}
			if diff := cmp.Diff(tt.want, got[0], ignore); diff != "" {
				t.Errorf("memory (-want +got):\n%s", diff)
			}
			if !strings.HasPrefix(got[0].ID, "mem_") {
				t.Errorf("id %q lacks the mem_ prefix", got[0].ID)
			}
			// The write decision sees the built memory's metadata, not its content.
			wantDecision := []decideCall{{Principal: tt.p, Action: ActionWrite, Resource: ResourceOf(got[0])}}
			if diff := cmp.Diff(wantDecision, f.authz.decisions); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCreateIDsAreUnique(t *testing.T) {
	f := newFixture(t, RecallConfig{})
	// Another content: the same one twice would be one memory, reinforced.
	other := validNew()
	other.Content = "Alice prefers green tea."
	got, err := create(context.Background(), f.svc, agentSupport, []NewMemory{validNew(), other})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].ID == got[1].ID {
		t.Errorf("two memories share id %q", got[0].ID)
	}
}

func TestCreatePolicy(t *testing.T) {
	// A policy that ran out of time refuses too, but as the service being
	// busy: the client may retry, where a denial or a broken policy is final.
	busy := func(Principal, string, Resource) (Decision, error) {
		return Decision{}, fmt.Errorf("%w: policy evaluation ran out of time: %w", ErrUnavailable, context.DeadlineExceeded)
	}
	tests := []struct {
		name   string
		decide func(Principal, string, Resource) (Decision, error)
		want   error
	}{
		{"deny", denyAll, ErrForbidden},
		{"policy error", failAll, ErrForbidden},
		{"policy out of time", busy, ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			f.authz.decide = tt.decide
			_, err := create(context.Background(), f.svc, agentSupport, []NewMemory{validNew(), validNew()})
			if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if n := f.store.calls(); n != 0 {
				t.Errorf("store got %d calls after a denial", n)
			}
			if n := f.embed.callCount(); n != 0 {
				t.Errorf("embedder got %d calls after a denial", n)
			}
		})
	}
	t.Run("one denied item denies the batch", func(t *testing.T) {
		f := newFixture(t, RecallConfig{})
		f.authz.decide = func(_ Principal, _ string, r Resource) (Decision, error) {
			return Decision{Allow: r.Sensitivity != SensitivityRestricted}, nil
		}
		second := validNew()
		second.Sensitivity = SensitivityRestricted
		_, err := create(context.Background(), f.svc, agentSupport, []NewMemory{validNew(), second})
		if !errors.Is(err, ErrForbidden) {
			t.Fatalf("err = %v, want ErrForbidden", err)
		}
		if n := f.store.calls(); n != 0 {
			t.Errorf("store got %d calls", n)
		}
	})
}

func TestCreateEmbeds(t *testing.T) {
	f := newFixture(t, RecallConfig{})
	a, b := validNew(), validNew()
	a.Content, b.Content = "short", "a longer piece of content"
	got, err := create(context.Background(), f.svc, agentSupport, []NewMemory{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"short", "a longer piece of content"}}, f.embed.calls); diff != "" {
		t.Errorf("embedder calls (-want +got):\n%s", diff)
	}
	for i, m := range f.store.created[0] {
		if diff := cmp.Diff(vectorOf(m.Content), m.Embedding); diff != "" {
			t.Errorf("stored memory %d embedding (-want +got):\n%s", i, diff)
		}
		if diff := cmp.Diff(m.Embedding, got[i].Embedding); diff != "" {
			t.Errorf("returned memory %d embedding differs from stored:\n%s", i, diff)
		}
	}
}

// A text the embedder can only map to the zero vector is stored with no
// vector: cosine is undefined for it, and the store's similarity refuses it.
func TestCreateKeepsNoZeroVector(t *testing.T) {
	f := newFixture(t, RecallConfig{})
	f.embed.zero = true
	if _, err := create(context.Background(), f.svc, agentSupport, []NewMemory{validNew()}); err != nil {
		t.Fatal(err)
	}
	m := f.store.created[0][0]
	if m.Embedding != nil || m.EmbeddingModel == "" || m.EmbeddingDim != 2 {
		t.Errorf("stored embedding %v, model %q, dimension %d; want no vector, the model and its dimension", m.Embedding, m.EmbeddingModel, m.EmbeddingDim)
	}
}

func TestCreateErrorsPassThrough(t *testing.T) {
	embedErr := errTest("embedder down")
	t.Run("embedder", func(t *testing.T) {
		f := newFixture(t, RecallConfig{})
		f.embed.err = embedErr
		_, err := create(context.Background(), f.svc, agentSupport, []NewMemory{validNew()})
		if !errors.Is(err, embedErr) {
			t.Fatalf("err = %v, want the embedder's error wrapped", err)
		}
		if n := f.store.calls(); n != 0 {
			t.Errorf("store got %d calls", n)
		}
	})
	t.Run("store", func(t *testing.T) {
		f := newFixture(t, RecallConfig{})
		f.store.createErr = ErrUnavailable
		_, err := create(context.Background(), f.svc, agentSupport, []NewMemory{validNew()})
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}
	})
}

func TestImport(t *testing.T) {
	created := testNow.Add(-48 * time.Hour)
	tests := []struct {
		name       string
		status     string
		wantStatus string
		wantField  string
	}{
		{"default status", "", StatusActive, ""},
		{"candidate", StatusCandidate, StatusCandidate, ""},
		{"unknown status", "pending", "", "status"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			n := validNew()
			n.Tenant, n.AgentID = "acme", "support-bot"
			got, err := f.svc.Import(context.Background(), n, created, tt.status)
			if tt.wantField != "" {
				if field := fieldOf(t, err); field != tt.wantField {
					t.Errorf("field = %q, want %q", field, tt.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.wantStatus || !got.CreatedAt.Equal(created) {
				t.Errorf("got status %q created %v", got.Status, got.CreatedAt)
			}
			if len(f.store.created) != 1 || len(f.store.created[0]) != 1 {
				t.Fatalf("store.CreateMemories calls: %v", f.store.created)
			}
			if diff := cmp.Diff(vectorOf(n.Content), f.store.created[0][0].Embedding); diff != "" {
				t.Errorf("stored embedding (-want +got):\n%s", diff)
			}
			if len(f.authz.decisions) != 0 {
				t.Errorf("import asked policy %d times; it acts for the system", len(f.authz.decisions))
			}
		})
	}
}

func TestImportFailures(t *testing.T) {
	boom := errTest("boom")
	tests := []struct {
		name  string
		edit  func(*NewMemory)
		setup func(*fixture)
		want  error
	}{
		{"invalid", func(n *NewMemory) { n.Type = "" }, func(*fixture) {}, nil},
		{"embedder", func(*NewMemory) {}, func(f *fixture) { f.embed.err = boom }, boom},
		{"store", func(*NewMemory) {}, func(f *fixture) { f.store.createErr = boom }, boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			tt.setup(f)
			n := validNew()
			n.Tenant, n.AgentID = "acme", "support-bot"
			tt.edit(&n)
			_, err := f.svc.Import(context.Background(), n, testNow, "")
			if tt.want == nil {
				fieldOf(t, err)
				return
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestGet(t *testing.T) {
	m := stored("mem_1", "Alice prefers tea.")
	tests := []struct {
		name    string
		decide  func(Principal, string, Resource) (Decision, error)
		getErr  error
		id      string
		want    Memory
		wantErr error
	}{
		{"allowed", nil, nil, "mem_1", m, nil},
		{"denied reads as not found", denyAll, nil, "mem_1", Memory{}, ErrNotFound},
		{"policy error reads as not found", failAll, nil, "mem_1", Memory{}, ErrNotFound},
		{"missing", nil, nil, "mem_2", Memory{}, ErrNotFound},
		{"store down", nil, ErrUnavailable, "mem_1", Memory{}, ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			f.store.memories[m.ID] = m
			f.store.getErr = tt.getErr
			f.authz.decide = tt.decide
			got, err := f.svc.Get(context.Background(), agentBilling, tt.id)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if errors.Is(err, ErrForbidden) {
				t.Errorf("a read must never say forbidden: that leaks existence")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("memory (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("other tenant's id", func(t *testing.T) {
		f := newFixture(t, RecallConfig{})
		f.store.memories[m.ID] = m
		other := Principal{Tenant: "globex", Kind: KindAgent, ID: "support-bot"}
		if _, err := f.svc.Get(context.Background(), other, m.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("err = %v, want ErrNotFound", err)
		}
	})
}

func TestHistory(t *testing.T) {
	head := stored("mem_3", "v3")
	chain := []Memory{head, stored("mem_2", "v2"), stored("mem_1", "v1")}
	tests := []struct {
		name        string
		decide      func(Principal, string, Resource) (Decision, error)
		wantIDs     []string
		wantErr     error
		wantHistory int // store.History calls
	}{
		{"all visible", nil, []string{"mem_3", "mem_2", "mem_1"}, nil, 1},
		{"head denied", denyIDs("mem_3"), nil, ErrNotFound, 0},
		{"old version denied is dropped", denyIDs("mem_2"), []string{"mem_3", "mem_1"}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			f.store.memories[head.ID] = head
			f.store.history = chain
			f.authz.decide = tt.decide
			got, err := f.svc.History(context.Background(), agentSupport, head.ID)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			var ids []string
			for _, m := range got {
				ids = append(ids, m.ID)
			}
			if diff := cmp.Diff(tt.wantIDs, ids); diff != "" {
				t.Errorf("ids (-want +got):\n%s", diff)
			}
			if f.store.historyCalls != tt.wantHistory {
				t.Errorf("store.History called %d times, want %d", f.store.historyCalls, tt.wantHistory)
			}
		})
	}
}

func TestHistoryStoreError(t *testing.T) {
	f := newFixture(t, RecallConfig{})
	m := stored("mem_1", "v1")
	f.store.memories[m.ID] = m
	f.store.historyErr = ErrUnavailable
	if _, err := f.svc.History(context.Background(), agentSupport, m.ID); !errors.Is(err, ErrUnavailable) {
		t.Errorf("err = %v, want ErrUnavailable", err)
	}
}

func TestDelete(t *testing.T) {
	m := stored("mem_1", "Alice prefers tea.")
	tests := []struct {
		name        string
		p           Principal
		decide      func(Principal, string, Resource) (Decision, error)
		wantErr     error
		wantDeleted []deleteCall
	}{
		{"allowed", agentSupport, nil, nil,
			[]deleteCall{{Tenant: "acme", IDs: []string{"mem_1"}, By: "agent:support-bot", Reason: "deleted through the API"}}},
		{"user deletes", userAlice, nil, nil,
			[]deleteCall{{Tenant: "acme", IDs: []string{"mem_1"}, By: "user:alice", Reason: "deleted through the API"}}},
		{"may read, may not delete", agentBilling, denyAction(ActionDelete), ErrForbidden, nil},
		{"may not read", agentBilling, denyAll, ErrNotFound, nil},
		{"policy error", agentBilling, failAll, ErrNotFound, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			f.store.memories[m.ID] = m
			f.authz.decide = tt.decide
			_, err := f.svc.Delete(context.Background(), tt.p, m.ID, "")
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantDeleted, f.store.deleted); diff != "" {
				t.Errorf("deletes (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("store error passes through", func(t *testing.T) {
		f := newFixture(t, RecallConfig{})
		f.store.memories[m.ID] = m
		f.store.deleteErr = ErrUnavailable
		if _, err := f.svc.Delete(context.Background(), agentSupport, m.ID, ""); !errors.Is(err, ErrUnavailable) {
			t.Errorf("err = %v, want ErrUnavailable", err)
		}
	})
}

func TestUpdate(t *testing.T) {
	prev := stored("mem_1", "Alice prefers tea.")
	prev.Version = 3
	prev.Kind, prev.Key, prev.SessionID, prev.Source = "preference", "drink", "s1", "chat"
	prev.Entities = []Entity{{ID: "p1", Kind: "product", Name: "Tea"}}

	// next is what build makes of prev at testNow, before the update applies.
	next := prev
	next.ValidFrom, next.CreatedAt, next.UpdatedAt, next.Version = testNow, testNow, testNow, 1
	next.EmbeddingModel, next.EmbeddingDim = "fake", 2
	with := func(edit func(*Memory)) Memory { m := next; edit(&m); return m }

	tests := []struct {
		name    string
		p       Principal
		ifMatch int
		u       UpdateRequest
		want    Memory
	}{
		{"content, by the author", agentSupport, 3, UpdateRequest{Content: ptr("Alice prefers green tea.")},
			with(func(m *Memory) { m.Content = "Alice prefers green tea." })},
		{"by another agent keeps the author", agentBilling, 0, UpdateRequest{Importance: ptr(0.9)},
			with(func(m *Memory) { m.Importance = 0.9 })},
		{"by an admin keeps the author", adminAcme, 7, UpdateRequest{Kind: ptr("habit"), Sensitivity: ptr(SensitivityConfidential), Confidence: ptr(0.4)},
			with(func(m *Memory) { m.Kind, m.Sensitivity, m.Confidence = "habit", SensitivityConfidential, 0.4 })},
		// Only the user's confirmation makes a guess active.
		{"of a candidate stays a candidate", agentSupport, 0, UpdateRequest{Importance: ptr(0.6)},
			with(func(m *Memory) { m.Status, m.Importance = StatusCandidate, 0.6 })},
	}
	ignore := cmpopts.IgnoreFields(Memory{}, "ID", "Embedding")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			prev := prev
			if tt.want.Status == StatusCandidate {
				prev.Status = StatusCandidate
			}
			f.store.memories[prev.ID] = prev
			got, err := f.svc.Update(context.Background(), tt.p, prev.ID, tt.ifMatch, tt.u)
			if err != nil {
				t.Fatalf("Update: %v", err)
			}
			if len(f.store.replaced) != 1 {
				t.Fatalf("store.ReplaceMemory called %d times, want 1", len(f.store.replaced))
			}
			r := f.store.replaced[0]
			if r.Tenant != "acme" || r.PrevID != prev.ID || r.ExpectVersion != tt.ifMatch {
				t.Errorf("ReplaceMemory(%q, %q, %d), want (acme, %q, %d)", r.Tenant, r.PrevID, r.ExpectVersion, prev.ID, tt.ifMatch)
			}
			if diff := cmp.Diff(tt.want, r.Next, ignore); diff != "" {
				t.Errorf("next version (-want +got):\n%s", diff)
			}
			if r.Next.ID == prev.ID || !strings.HasPrefix(r.Next.ID, "mem_") {
				t.Errorf("next id %q: want a fresh mem_ id", r.Next.ID)
			}
			if diff := cmp.Diff(vectorOf(tt.want.Content), r.Next.Embedding); diff != "" {
				t.Errorf("next embedding (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([][]string{{tt.want.Content}}, f.embed.calls); diff != "" {
				t.Errorf("embedder calls (-want +got):\n%s", diff)
			}
			if got.ID != r.Next.ID {
				t.Errorf("returned %q, want the store's answer %q", got.ID, r.Next.ID)
			}
			// The caller, not the author, needs read on prev and write on next.
			want := []decideCall{
				{Principal: tt.p, Action: ActionRead, Resource: ResourceOf(prev)},
				{Principal: tt.p, Action: ActionWrite, Resource: ResourceOf(r.Next)},
			}
			if diff := cmp.Diff(want, f.authz.decisions); diff != "" {
				t.Errorf("decisions (-want +got):\n%s", diff)
			}
		})
	}
}

const errEmbedderDown = errTest("embedder down")

func TestUpdateFailures(t *testing.T) {
	prev := stored("mem_1", "Alice prefers tea.")
	tests := []struct {
		name       string
		decide     func(Principal, string, Resource) (Decision, error)
		replaceErr error
		u          UpdateRequest
		wantErr    error
		wantField  string
	}{
		{"may not read", denyAll, nil, UpdateRequest{Content: ptr("x")}, ErrNotFound, ""},
		{"may read, may not write", denyAction(ActionWrite), nil, UpdateRequest{Content: ptr("x")}, ErrForbidden, ""},
		{"conflict from store", nil, ErrConflict, UpdateRequest{Content: ptr("x")}, ErrConflict, ""},
		{"empty content", nil, nil, UpdateRequest{Content: ptr("  ")}, nil, "content"},
		{"bad sensitivity", nil, nil, UpdateRequest{Sensitivity: ptr("top")}, nil, "sensitivity"},
		{"importance out of range", nil, nil, UpdateRequest{Importance: ptr(1.5)}, nil, "importance"},
		{"kind too long", nil, nil, UpdateRequest{Kind: ptr(strings.Repeat("k", 65))}, nil, "kind"},
		{"kind with a zero-width space", nil, nil, UpdateRequest{Kind: ptr("pre\u200bference")}, nil, "kind"},
		{"embedder down", nil, nil, UpdateRequest{Content: ptr("embed me")}, errEmbedderDown, ""},
		// A version that changes nothing is refused, not written.
		{"nothing to change", nil, nil, UpdateRequest{}, nil, "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			f.store.memories[prev.ID] = prev
			f.store.replaceErr = tt.replaceErr
			f.authz.decide = tt.decide
			if tt.wantErr == errEmbedderDown {
				f.embed.err = errEmbedderDown
			}
			_, err := f.svc.Update(context.Background(), agentBilling, prev.ID, 1, tt.u)
			if tt.wantField != "" {
				if field := fieldOf(t, err); field != tt.wantField {
					t.Errorf("field = %q, want %q", field, tt.wantField)
				}
			} else if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.replaceErr == nil && len(f.store.replaced) != 0 {
				t.Errorf("store.ReplaceMemory called after a failure")
			}
		})
	}
}

func TestUserWithLongestIDMayWrite(t *testing.T) {
	f := newFixture(t, RecallConfig{})
	id := strings.Repeat("u", 64)
	p := Principal{Tenant: "acme", Kind: KindUser, ID: id}
	n := validNew()
	n.UserID = id
	got, err := create(context.Background(), f.svc, p, []NewMemory{n})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	if got[0].AgentID != "user:"+id {
		t.Errorf("author = %q, want user:%s", got[0].AgentID, id)
	}
}

// shortEmbedder returns one vector fewer than it was asked for.
type shortEmbedder struct{ fakeEmbedder }

func (e *shortEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := e.fakeEmbedder.Embed(ctx, texts)
	return vecs[:len(vecs)-1], err
}

func (e *shortEmbedder) EmbedQuery(context.Context, string) ([]float32, error) { return nil, nil }

func TestEmbedderReturningTooFewVectors(t *testing.T) {
	f := newFixture(t, RecallConfig{})
	opts := f.options(t, RecallConfig{})
	opts.Embed = &shortEmbedder{}
	svc := f.service(t, opts)
	ctx := context.Background()
	if _, err := create(ctx, svc, agentSupport, []NewMemory{validNew()}); err == nil || !strings.Contains(err.Error(), "0 vectors for 1 texts") {
		t.Errorf("Create = %v, want an embed error", err)
	}
	f.authz.scope = aliceScope
	if _, err := svc.Recall(ctx, agentSupport, RecallRequest{UserID: "alice", Query: "tea"}); err == nil {
		t.Errorf("Recall succeeded with no query vector")
	}
	if f.store.calls() != 0 {
		t.Errorf("the store was called %d times", f.store.calls())
	}
}

// wideEmbedder claims dimension 2 but returns vectors of 3.
type wideEmbedder struct{ fakeEmbedder }

func (e *wideEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	vecs, err := e.fakeEmbedder.Embed(ctx, texts)
	for i := range vecs {
		vecs[i] = append(vecs[i], 0)
	}
	return vecs, err
}

func (e *wideEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vec, err := e.fakeEmbedder.EmbedQuery(ctx, text)
	return append(vec, 0), err
}

func TestEmbedderReturningVectorsOfAnotherSize(t *testing.T) {
	f := newFixture(t, RecallConfig{})
	opts := f.options(t, RecallConfig{})
	opts.Embed = &wideEmbedder{}
	svc := f.service(t, opts)
	_, err := create(context.Background(), svc, agentSupport, []NewMemory{validNew()})
	if err == nil || !strings.Contains(err.Error(), "dimension 3 from model fake of dimension 2") {
		t.Errorf("Create = %v, want a dimension error", err)
	}
	if f.store.calls() != 0 {
		t.Errorf("the store was called %d times", f.store.calls())
	}
}

// Write commits through the deduplicated write with the service's rules:
// a repeat in one write reinforces, an inference is a candidate waiting for
// its user, a preference one waiting for its threshold.
func TestWriteOutcomes(t *testing.T) {
	f := newFixture(t, RecallConfig{})
	tea, again := validNew(), validNew()
	guess := validNew()
	guess.Content, guess.Source = "Alice may be vegetarian.", SourceInferred
	pref := validNew()
	pref.Type, pref.Kind, pref.Content = TypeProfile, "preference", "Alice prefers aisle seats."
	got, err := f.svc.Write(context.Background(), agentSupport, []NewMemory{tea, again, guess, pref})
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct{ Outcome, Status, Reason string }
	var outcomes []outcome
	for _, r := range got {
		outcomes = append(outcomes, outcome{r.Outcome, r.Status, r.Reason})
	}
	want := []outcome{
		{OutcomeCreated, StatusActive, ""},
		{OutcomeReinforced, StatusActive, ""},
		{OutcomeCreated, StatusCandidate, ReasonInferred},
		{OutcomeCreated, StatusCandidate, ReasonThreshold},
	}
	if diff := cmp.Diff(want, outcomes); diff != "" {
		t.Errorf("outcomes (-want +got):\n%s", diff)
	}
	if got[1].ID != got[0].ID {
		t.Errorf("the repeat reinforced %s, want %s", got[1].ID, got[0].ID)
	}
	if len(f.store.writes) != 1 {
		t.Fatalf("%d deduplicated writes, want 1", len(f.store.writes))
	}
	w := f.store.writes[0]
	wantRules := WriteRules{Dedup: true, DuplicateThreshold: 1, Thresholds: DefaultThresholds}
	if diff := cmp.Diff(wantRules, w.Rules, cmpopts.IgnoreFields(WriteRules{}, "Displaces")); diff != "" {
		t.Errorf("rules (-want +got):\n%s", diff)
	}
	// A write supersedes only heads its writer's scope covers.
	f.authz.hidden = map[string]bool{"mem_hidden": true}
	by := w.Memories[0].AgentID
	if w.Rules.Displaces == nil || w.Rules.Displaces(w.Memories[0], Memory{ID: "mem_hidden", AgentID: by}) || !w.Rules.Displaces(w.Memories[0], Memory{ID: "mem_seen", AgentID: by}) {
		t.Error("the write's rules do not ask policy which heads it may supersede")
	}
	// Nor another agent's business fact it reads.
	if w.Rules.Displaces(w.Memories[0], Memory{ID: "mem_seen", AgentID: "finance-bot", Type: TypeSemantic}) {
		t.Error("the write may supersede another agent's fact")
	}
	if len(w.ScopeOf) != len(w.Memories) || len(w.Scopes) != 1 {
		t.Errorf("scopes %d for %d memories (scope of each %v)", len(w.Scopes), len(w.Memories), w.ScopeOf)
	}
}

// One idempotency key on two memories of a request that say different
// things refuses the request (only the first would be stored); on two that
// say the same it is a repeat.
func TestWriteOneKeyTwice(t *testing.T) {
	keyed := func(content string) NewMemory {
		n := validNew()
		n.Content, n.IdempotencyKey = content, "k-1"
		return n
	}
	other := keyed("Alice prefers green tea.")
	other.UserID = "bob"
	tests := []struct {
		name      string
		in        []NewMemory
		wantField string
	}{
		{"the same memory", []NewMemory{keyed("Alice prefers tea."), validNew(), keyed("Alice prefers tea.")}, ""},
		{"another content", []NewMemory{keyed("Alice prefers tea."), validNew(), keyed("Alice prefers coffee.")}, "memories[2].idempotency_key"},
		{"another user", []NewMemory{keyed("Alice prefers green tea."), other}, "memories[1].idempotency_key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, RecallConfig{})
			_, err := f.svc.Write(context.Background(), agentSupport, tt.in)
			sameUser := tt.in[0].UserID == tt.in[len(tt.in)-1].UserID
			var errAsync error
			if sameUser { // a queued write is about one user
				_, errAsync = f.svc.CreateAsync(context.Background(), agentSupport, tt.in, "")
			}
			if tt.wantField == "" {
				if err != nil || errAsync != nil {
					t.Fatalf("Write: %v; CreateAsync: %v", err, errAsync)
				}
				return
			}
			if field := fieldOf(t, err); field != tt.wantField {
				t.Errorf("field %q, want %q", field, tt.wantField)
			}
			if sameUser {
				if field := fieldOf(t, errAsync); field != tt.wantField {
					t.Errorf("queued: field %q, want %q", field, tt.wantField)
				}
			}
			if len(f.store.writes) != 0 || len(f.queue.jobs) != 0 {
				t.Errorf("%d writes reached the store and %d jobs the queue, want none", len(f.store.writes), len(f.queue.jobs))
			}
		})
	}
}

// Queued writes are the same deduplicated write, checked for staleness.
func TestApplyMemoryJobsChecksStaleness(t *testing.T) {
	f := newFixture(t, RecallConfig{})
	payload, err := json.Marshal([]NewMemory{validNew()})
	if err != nil {
		t.Fatal(err)
	}
	job := Job{ID: "job-1", Kind: JobMemories, Tenant: "acme", UserID: "alice", Principal: agentSupport, AcceptedAt: testNow, Payload: payload}
	res, err := f.svc.ApplyMemoryJobs(context.Background(), []Job{job})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || res[0].Err != nil || len(res[0].Memories) != 1 || res[0].Memories[0].Outcome != OutcomeCreated {
		t.Fatalf("results = %+v", res)
	}
	if len(f.store.writes) != 1 || !f.store.writes[0].Rules.CheckStale || !f.store.writes[0].Rules.Dedup {
		t.Errorf("writes = %+v, want one deduplicated write that checks staleness", f.store.writes)
	}
}

// TestApplyMemoryJobsBoundsATransaction: a batch of full jobs is written in
// transactions of at most MaxApplyGroup memories, every memory once.
func TestApplyMemoryJobsBoundsATransaction(t *testing.T) {
	f := newFixture(t, RecallConfig{})
	var jobs []Job
	for j := range 25 {
		in := make([]NewMemory, MaxBatch)
		for i := range in {
			in[i] = NewMemory{UserID: "alice", Type: TypeSemantic, Content: fmt.Sprintf("Crate %d of shipment %d holds %d office chairs.", i, j, 2+i%7)}
		}
		payload, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, Job{ID: fmt.Sprintf("job-%d", j), Kind: JobMemories, Tenant: "acme", UserID: "alice", Principal: agentSupport, AcceptedAt: testNow, Payload: payload})
	}
	res, err := f.svc.ApplyMemoryJobs(context.Background(), jobs)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, w := range f.store.writes {
		if len(w.Memories) > MaxApplyGroup {
			t.Errorf("one transaction of %d memories, more than %d", len(w.Memories), MaxApplyGroup)
		}
		total += len(w.Memories)
	}
	if want := 25 * MaxBatch; total != want || len(f.store.writes) != (want+MaxApplyGroup-1)/MaxApplyGroup {
		t.Errorf("%d memories in %d transactions, want %d in %d", total, len(f.store.writes), want, (want+MaxApplyGroup-1)/MaxApplyGroup)
	}
	for j, r := range res {
		if r.Err != nil || len(r.Memories) != MaxBatch || r.Memories[MaxBatch-1].ID == "" {
			t.Fatalf("job %d: %v, %d memories", j, r.Err, len(r.Memories))
		}
	}
}

// TestCreateAsyncSent: what the queue compares under one idempotency key is
// the request as its sender sent it, so a retry matches even when the guard
// masks differently by then, and another body does not.
func TestCreateAsyncSent(t *testing.T) {
	f := newFixture(t, RecallConfig{})
	send := func(p Principal, content, emailAction string) Job {
		t.Helper()
		f.guard.actions = map[string]string{"email": emailAction}
		n := NewMemory{UserID: "alice", Type: TypeSemantic, Content: content}
		if _, err := f.svc.CreateAsync(context.Background(), p, []NewMemory{n}, "k"); err != nil {
			t.Fatal(err)
		}
		return f.queue.jobs[len(f.queue.jobs)-1]
	}
	const mail = "Reach Alice at alice@example.com about the paper order"
	first := send(agentSupport, mail, GuardRedact)
	retry := send(agentSupport, mail, GuardAllow)
	if len(first.Sent) == 0 || string(retry.Sent) != string(first.Sent) {
		t.Errorf("a retry after the guard changed: sent %s, first %s", retry.Sent, first.Sent)
	}
	if string(retry.Payload) == string(first.Payload) {
		t.Errorf("the guard masked the same both times (%s): the test shows nothing", first.Payload)
	}
	if other := send(agentSupport, "Alice orders paper monthly", GuardAllow); string(other.Sent) == string(first.Sent) {
		t.Error("another body was sent as the first one")
	}
}
