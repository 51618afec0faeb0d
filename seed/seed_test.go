package seed_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"mneme/memory"
	"mneme/seed"
)

func demo(t *testing.T) *seed.Dataset {
	t.Helper()
	ds, err := seed.Demo()
	if err != nil {
		t.Fatalf("Demo: %v", err)
	}
	return ds
}

func hasHan(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.Is(unicode.Han, r) })
}

func TestDemoShape(t *testing.T) {
	ds := demo(t)
	if ds.Tenant != "acme" {
		t.Errorf("tenant = %q, want acme", ds.Tenant)
	}
	if n := len(ds.Memories); n < seed.MinMemories {
		t.Errorf("%d memories, want at least %d", n, seed.MinMemories)
	}

	wantAgents := []seed.Agent{{ID: "support-bot", Team: "support"}, {ID: "order-bot", Team: "orders"}, {ID: "finance-bot", Team: "finance"}}
	if d := cmp.Diff(wantAgents, ds.Agents); d != "" {
		t.Errorf("agents (-want +got):\n%s", d)
	}
	if len(ds.Users) != 3 {
		t.Errorf("%d users, want 3", len(ds.Users))
	}

	// One key per agent and per user, one admin key, one analyst key, all of
	// the tenant.
	var principals []string
	for _, k := range ds.APIKeys {
		principals = append(principals, k.Kind+":"+k.ID)
		if tenant, ok := seed.KeyTenant(k.Key); !ok || tenant != ds.Tenant {
			t.Errorf("key of %s:%s names tenant %q, want %q", k.Kind, k.ID, tenant, ds.Tenant)
		}
	}
	var want []string
	for _, a := range ds.Agents {
		want = append(want, "agent:"+a.ID)
	}
	for _, u := range ds.Users {
		want = append(want, "user:"+u.ID)
	}
	want = append(want, "admin:admin", "analyst:analyst")
	if d := cmp.Diff(want, principals); d != "" {
		t.Errorf("API key principals (-want +got):\n%s", d)
	}
	for _, k := range ds.APIKeys {
		if k.Kind == memory.KindAnalyst && !slices.Contains(k.Roles, "analyst") {
			t.Errorf("analyst key has roles %v, want the analyst role", k.Roles)
		}
	}

	types := map[string]int{}
	chinese := 0
	for _, m := range ds.Memories {
		types[m.Type]++
		if hasHan(m.Content) {
			chinese++
		}
		if m.CreatedAt.Year() != 2026 {
			t.Errorf("%s created %v, want a time in 2026", m.Ref, m.CreatedAt)
		}
	}
	for _, typ := range memory.Types {
		if types[typ] == 0 {
			t.Errorf("no %s memory", typ)
		}
	}
	if chinese < 10 {
		t.Errorf("%d memories contain Chinese, want at least 10", chinese)
	}
}

// find returns the memories that match every condition.
func find(ds *seed.Dataset, match func(seed.Memory) bool) []seed.Memory {
	var out []seed.Memory
	for _, m := range ds.Memories {
		if match(m) {
			out = append(out, m)
		}
	}
	return out
}

// findOne returns the one memory that matches, or fails the test.
func findOne(t *testing.T, ds *seed.Dataset, what string, match func(seed.Memory) bool) seed.Memory {
	t.Helper()
	ms := find(ds, match)
	if len(ms) != 1 {
		t.Fatalf("%s: found %d memories, want 1", what, len(ms))
	}
	return ms[0]
}

func TestDemoRequiredFacts(t *testing.T) {
	ds := demo(t)

	t.Run("membership expiry", func(t *testing.T) {
		m := findOne(t, ds, "alice's membership_expiry", func(m seed.Memory) bool {
			return m.UserID == "alice" && m.Key == "membership_expiry"
		})
		if m.Type != memory.TypeProfile && m.Type != memory.TypeSemantic {
			t.Errorf("type %q, want profile or semantic", m.Type)
		}
		if !strings.Contains(m.Content, "1 March") {
			t.Errorf("content %q does not say 1 March", m.Content)
		}
	})

	t.Run("budget 100k then 150k", func(t *testing.T) {
		ms := find(ds, func(m seed.Memory) bool { return m.UserID == "alice" && m.Key == "budget" })
		if len(ms) != 2 {
			t.Fatalf("%d budget memories for alice, want 2", len(ms))
		}
		for i, want := range []string{"100k", "150k"} {
			if !strings.Contains(ms[i].Content, want) {
				t.Errorf("budget memory %d is %q, want it to say %s", i, ms[i].Content, want)
			}
			if ms[i].AgentID != "order-bot" {
				t.Errorf("budget memory %d written by %s, want order-bot", i, ms[i].AgentID)
			}
		}
		if !ms[1].CreatedAt.After(ms[0].CreatedAt) {
			t.Errorf("150k budget (%v) is not newer than 100k (%v)", ms[1].CreatedAt, ms[0].CreatedAt)
		}
	})

	t.Run("approval rule", func(t *testing.T) {
		m := findOne(t, ds, "approval rule", func(m seed.Memory) bool {
			return m.Kind == "rule" && strings.Contains(m.Content, "50k") && strings.Contains(m.Content, "approval")
		})
		if m.Type != memory.TypeSemantic || m.Scope != memory.ScopeTenant || m.UserID != "" {
			t.Errorf("rule is %s of scope %q about %q, want the tenant's semantic knowledge", m.Type, m.Scope, m.UserID)
		}
		// It replaced an older rule of the same key, and a temporary rule
		// beside it has ended.
		if old := find(ds, func(o seed.Memory) bool { return o.Key == m.Key && o.Ref != m.Ref }); len(old) != 1 || !old[0].CreatedAt.Before(m.CreatedAt) {
			t.Errorf("%d older versions of %s, want one", len(old), m.Key)
		}
		if ended := find(ds, func(o seed.Memory) bool {
			return o.Scope != "" && o.ValidTo != nil && o.ValidTo.Before(m.CreatedAt.AddDate(0, 2, 0))
		}); len(ended) != 1 {
			t.Errorf("%d ended temporary rules, want one", len(ended))
		}
	})

	t.Run("team procedures", func(t *testing.T) {
		for team, word := range map[string]string{"support": "damaged", "orders": "下单"} {
			findOne(t, ds, team+" procedure", func(m seed.Memory) bool {
				return m.Scope == memory.ScopeTeam && m.ScopeID == team && m.Type == memory.TypeProcedural && strings.Contains(m.Content, word)
			})
		}
	})

	t.Run("East China definition", func(t *testing.T) {
		m := findOne(t, ds, "East China definition", func(m seed.Memory) bool {
			return m.Kind == "definition" && strings.Contains(m.Content, "East China")
		})
		for _, p := range []string{"Shanghai", "Jiangsu", "Zhejiang", "Anhui"} {
			if !strings.Contains(m.Content, p) {
				t.Errorf("definition %q lacks %s", m.Content, p)
			}
		}
		if m.Type != memory.TypeSemantic || m.Scope != memory.ScopeTenant {
			t.Errorf("definition is %s of scope %q, want the tenant's semantic knowledge", m.Type, m.Scope)
		}
	})

	t.Run("internal cost", func(t *testing.T) {
		m := findOne(t, ds, "alice's internal cost", func(m seed.Memory) bool {
			return m.UserID == "alice" && m.Kind == "internal_cost"
		})
		if m.AgentID != "finance-bot" || m.Type != memory.TypeSemantic || m.Sensitivity != memory.SensitivityConfidential {
			t.Errorf("internal cost is %s %s by %s, want confidential semantic by finance-bot", m.Sensitivity, m.Type, m.AgentID)
		}
	})

	t.Run("answer style", func(t *testing.T) {
		m := findOne(t, ds, "alice's answer_style", func(m seed.Memory) bool {
			return m.UserID == "alice" && m.Key == "answer_style"
		})
		if m.Type != memory.TypeProfile || m.Kind != "preference" || m.AgentID != "support-bot" {
			t.Errorf("answer style is %s/%s by %s, want profile/preference by support-bot", m.Type, m.Kind, m.AgentID)
		}
		if !strings.Contains(m.Content, "short answers") {
			t.Errorf("content %q does not mention short answers", m.Content)
		}
	})

	t.Run("order facts", func(t *testing.T) {
		chinese := 0
		for _, u := range ds.Users {
			ms := find(ds, func(m seed.Memory) bool {
				return m.UserID == u.ID && m.Kind == "order_status" && m.AgentID == "order-bot"
			})
			if len(ms) < 2 {
				t.Errorf("%s has %d order facts by order-bot, want several", u.ID, len(ms))
			}
			for _, m := range ms {
				if m.Type != memory.TypeEpisodic {
					t.Errorf("%s: type %s, want episodic", m.Ref, m.Type)
				}
				if !slices.ContainsFunc(m.Entities, func(e memory.Entity) bool {
					return e.Kind == "order" && strings.HasPrefix(e.ID, "SO-") && strings.Contains(m.Content, e.ID)
				}) {
					t.Errorf("%s names no order entity that its content mentions", m.Ref)
				}
				if hasHan(m.Content) {
					chinese++
				}
			}
		}
		if chinese == 0 {
			t.Error("no order fact in Chinese")
		}
	})
}

// TestDemoSlotsAreDeliberate guards against accidental supersession: within
// one user, only the budget slot is written twice, and in the tenant's
// knowledge only the approval rule.
func TestDemoSlotsAreDeliberate(t *testing.T) {
	seen := map[string]string{}
	for _, m := range demo(t).Memories {
		if m.Key == "" {
			continue
		}
		slot := m.UserID + "/" + m.Scope + "/" + m.ScopeID + "/" + m.Key
		if prev, ok := seen[slot]; ok && m.Key != "budget" && m.Key != "order_approval_threshold" {
			t.Errorf("%s and %s share the slot %s", prev, m.Ref, slot)
		}
		seen[slot] = m.Ref
	}
}

// covers reports whether grant g lets its grantee read m. It mirrors the
// grant semantics in memory.Grant; the policy engine is the real judge.
func covers(g memory.Grant, m seed.Memory) bool {
	return (g.Source == "*" || g.Source == m.AgentID) &&
		slices.Contains(g.Types, m.Type) &&
		(len(g.Kinds) == 0 || slices.Contains(g.Kinds, m.Kind)) &&
		memory.SensitivityRank(m.Sensitivity) <= memory.SensitivityRank(g.MaxSensitivity)
}

func TestDemoGrants(t *testing.T) {
	ds := demo(t)
	byID := map[string]memory.Grant{}
	for _, g := range ds.Grants {
		byID[g.ID] = g
	}
	want := []memory.Grant{
		{
			ID: "seed-grant-support-reads-orders", Grantee: "support-bot", Source: "order-bot",
			Types: []string{"episodic", "semantic"}, Kinds: []string{"order_status", "rule", "definition"},
			MaxSensitivity: "internal",
		},
		{
			ID: "seed-grant-orders-reads-support-profile", Grantee: "order-bot", Source: "support-bot",
			Types: []string{"profile"}, MaxSensitivity: "internal",
		},
	}
	for _, w := range want {
		g, ok := byID[w.ID]
		if !ok {
			t.Errorf("no grant %s", w.ID)
			continue
		}
		if g.CreatedAt.IsZero() {
			t.Errorf("grant %s has no created_at", w.ID)
		}
		g.CreatedAt = w.CreatedAt
		if d := cmp.Diff(w, g); d != "" {
			t.Errorf("grant %s (-want +got):\n%s", w.ID, d)
		}
	}

	for _, g := range ds.Grants {
		if g.Grantee != "support-bot" {
			continue
		}
		if g.Source == "finance-bot" || g.Source == "*" {
			t.Errorf("grant %s shares %s's memories with support-bot", g.ID, g.Source)
		}
		for _, m := range ds.Memories {
			if m.AgentID == "finance-bot" && covers(g, m) {
				t.Errorf("grant %s lets support-bot read finance memory %s", g.ID, m.Ref)
			}
		}
	}
	// The grants share something real: support-bot sees order facts;
	// order-bot sees alice's answer style. Rules and definitions are the
	// tenant's knowledge, which no grant needs to share.
	for _, c := range []struct{ grant, ref string }{
		{"seed-grant-support-reads-orders", "alice-so1001"},
		{"seed-grant-orders-reads-support-profile", "alice-answer-style"},
	} {
		i := slices.IndexFunc(ds.Memories, func(m seed.Memory) bool { return m.Ref == c.ref })
		if i < 0 || !covers(byID[c.grant], ds.Memories[i]) {
			t.Errorf("grant %s does not cover %s", c.grant, c.ref)
		}
	}
}

func TestKeyTenant(t *testing.T) {
	for _, tc := range []struct {
		key    string
		tenant string
		ok     bool
	}{
		{"mn_acme_4fB6ixukVUpW3M6bXTGZX7So", "acme", true},
		{"mn_acme-east_4fB6ixukVUpW3M6bXTGZX7So", "acme-east", true},
		{"mn_acme_short", "", false},
		{"mn_ACME_4fB6ixukVUpW3M6bXTGZX7So", "", false},
		{"sk_acme_4fB6ixukVUpW3M6bXTGZX7So", "", false},
		{"mn__4fB6ixukVUpW3M6bXTGZX7So", "", false},
		{"", "", false},
	} {
		tenant, ok := seed.KeyTenant(tc.key)
		if tenant != tc.tenant || ok != tc.ok {
			t.Errorf("KeyTenant(%q) = %q, %v; want %q, %v", tc.key, tenant, ok, tc.tenant, tc.ok)
		}
	}
}

func TestParseRejectsBadData(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*seed.Dataset)
		want   string // part of the error
	}{
		{"unknown type", func(ds *seed.Dataset) { ds.Memories[3].Type = "dream" }, `unknown type "dream"`},
		{"unknown status", func(ds *seed.Dataset) { ds.Memories[3].Status = "gone" }, `unknown status "gone"`},
		{"unknown sensitivity", func(ds *seed.Dataset) { ds.Memories[3].Sensitivity = "secret" }, `unknown sensitivity "secret"`},
		{"duplicate ref", func(ds *seed.Dataset) { ds.Memories[4].Ref = ds.Memories[3].Ref }, "ref empty or duplicate"},
		{"unknown user", func(ds *seed.Dataset) { ds.Memories[3].UserID = "mallory" }, `unknown user "mallory"`},
		{"unknown agent", func(ds *seed.Dataset) { ds.Memories[3].AgentID = "spy-bot" }, `unknown agent "spy-bot"`},
		{"empty content", func(ds *seed.Dataset) { ds.Memories[3].Content = " " }, "empty content"},
		{"importance out of range", func(ds *seed.Dataset) { ds.Memories[3].Importance = 2 }, "importance"},
		{"too few memories", func(ds *seed.Dataset) { ds.Memories = ds.Memories[:10] }, "want at least 50"},
		{"key of another tenant", func(ds *seed.Dataset) { ds.APIKeys[0].Key = "mn_other_4fB6ixukVUpW3M6bXTGZX7So" }, "api_keys[0]: key must look like mn_acme_"},
		{"duplicate key", func(ds *seed.Dataset) { ds.APIKeys[1].Key = ds.APIKeys[0].Key }, "duplicate key"},
		{"key of unknown agent", func(ds *seed.Dataset) { ds.APIKeys[0].ID = "spy-bot" }, `unknown agent "spy-bot"`},
		{"unknown principal kind", func(ds *seed.Dataset) { ds.APIKeys[0].Kind = "robot" }, `unknown principal kind "robot"`},
		{"grant to unknown agent", func(ds *seed.Dataset) { ds.Grants[0].Grantee = "spy-bot" }, `unknown grantee "spy-bot"`},
		{"grant of unknown type", func(ds *seed.Dataset) { ds.Grants[0].Types = []string{"dream"} }, `unknown type "dream"`},
		{"grant without types", func(ds *seed.Dataset) { ds.Grants[0].Types = nil }, "no types"},
		{"grant to another tenant", func(ds *seed.Dataset) { ds.Grants[0].Tenant = "other" }, `tenant "other"`},
		{"duplicate agent", func(ds *seed.Dataset) { ds.Agents[1].ID = ds.Agents[0].ID }, "duplicate id"},
		{"bad tenant", func(ds *seed.Dataset) { ds.Tenant = "Acme Inc" }, `tenant "Acme Inc"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ds := demo(t)
			tc.mutate(ds)
			data, err := json.Marshal(ds)
			if err != nil {
				t.Fatal(err)
			}
			_, err = seed.Parse(data)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse: err = %v, want one mentioning %q", err, tc.want)
			}
		})
	}

	t.Run("unknown field", func(t *testing.T) {
		data, err := json.Marshal(demo(t))
		if err != nil {
			t.Fatal(err)
		}
		data = []byte(strings.Replace(string(data), `"ref":`, `"reff":"x","ref":`, 1))
		if _, err := seed.Parse(data); err == nil || !strings.Contains(err.Error(), "reff") {
			t.Errorf("Parse with an unknown field: err = %v", err)
		}
	})
}

// recordingSink records every call. Like a real sink it keeps one active
// memory per (user, key) slot and ignores a repeated idempotency key, so the
// state after Load can be checked as well as the calls.
type recordingSink struct {
	calls    []string
	memories []memory.Memory // as written, in order
	seen     map[string]bool // idempotency keys
	active   map[string]int  // slot → index into memories
	failOn   string          // fail WriteMemory for this idempotency key
}

var errSinkDown = errors.New("sink down")

func newRecordingSink() *recordingSink {
	return &recordingSink{seen: map[string]bool{}, active: map[string]int{}}
}

func (s *recordingSink) record(format string, args ...any) {
	s.calls = append(s.calls, fmt.Sprintf(format, args...))
}

func (s *recordingSink) PutAPIKey(_ context.Context, key string, p memory.Principal) error {
	s.record("PutAPIKey %s %+v", key, p)
	return nil
}

func (s *recordingSink) EnsureAgent(_ context.Context, tenant, id, team string) error {
	s.record("EnsureAgent %s %s %s", tenant, id, team)
	return nil
}

func (s *recordingSink) EnsureUser(_ context.Context, tenant, id, name string) error {
	s.record("EnsureUser %s %s %s", tenant, id, name)
	return nil
}

func (s *recordingSink) PutGrant(_ context.Context, g memory.Grant) error {
	s.record("PutGrant %+v", g)
	return nil
}

func (s *recordingSink) WriteMemory(_ context.Context, m memory.Memory) error {
	s.record("WriteMemory %+v", m)
	if m.IdempotencyKey == s.failOn {
		return errSinkDown
	}
	if s.seen[m.IdempotencyKey] {
		return nil
	}
	s.seen[m.IdempotencyKey] = true
	s.memories = append(s.memories, m)
	if m.Key != "" && m.Status == memory.StatusActive {
		slot := m.Tenant + "/" + m.UserID + "/" + m.Key
		if i, ok := s.active[slot]; ok {
			s.memories[i].Status = memory.StatusSuperseded
		}
		s.active[slot] = len(s.memories) - 1
	}
	return nil
}

func TestLoad(t *testing.T) {
	ds := demo(t)
	sink := newRecordingSink()

	rep, err := seed.Load(t.Context(), ds, sink)
	if err != nil {
		t.Fatalf("first Load: %v", err)
	}
	wantRep := seed.Report{
		Tenant: "acme", Agents: len(ds.Agents), Users: len(ds.Users), APIKeys: len(ds.APIKeys),
		Grants: len(ds.Grants), Memories: len(ds.Memories),
	}
	if d := cmp.Diff(wantRep, rep); d != "" {
		t.Errorf("report (-want +got):\n%s", d)
	}
	first := slices.Clone(sink.calls)

	// Order: agents and users before anything refers to them, memories in
	// file order.
	var kinds []string
	for _, c := range first {
		kind, _, _ := strings.Cut(c, " ")
		if len(kinds) == 0 || kinds[len(kinds)-1] != kind {
			kinds = append(kinds, kind)
		}
	}
	if d := cmp.Diff([]string{"EnsureAgent", "EnsureUser", "PutAPIKey", "PutGrant", "WriteMemory"}, kinds); d != "" {
		t.Errorf("call order (-want +got):\n%s", d)
	}
	for i, m := range sink.memories {
		ref := ds.Memories[i].Ref
		if m.IdempotencyKey != "seed:"+ref {
			t.Errorf("memory %d: idempotency key %q, want seed:%s", i, m.IdempotencyKey, ref)
		}
		if m.Tenant != "acme" || m.ID != "" || m.Status == "" || m.CreatedAt.IsZero() || m.ValidFrom.IsZero() {
			t.Errorf("memory %s written as %+v", ref, m)
		}
	}

	rep2, err := seed.Load(t.Context(), ds, sink)
	if err != nil {
		t.Fatalf("second Load: %v", err)
	}
	if d := cmp.Diff(rep, rep2); d != "" {
		t.Errorf("second report differs (-first +second):\n%s", d)
	}
	if d := cmp.Diff(first, sink.calls[len(first):]); d != "" {
		t.Errorf("second Load made different calls (-first +second):\n%s", d)
	}
	if len(sink.memories) != len(ds.Memories) {
		t.Errorf("after two loads the sink holds %d memories, want %d", len(sink.memories), len(ds.Memories))
	}

	// The budget slot ends at 150k: the 100k memory came first and was
	// superseded by the 150k one.
	var budgets []string
	for _, m := range sink.memories {
		if m.UserID == "alice" && m.Key == "budget" {
			budgets = append(budgets, m.Status+": "+m.Content)
		}
	}
	if len(budgets) != 2 || !strings.HasPrefix(budgets[0], "superseded") || !strings.Contains(budgets[0], "100k") ||
		!strings.HasPrefix(budgets[1], "active") || !strings.Contains(budgets[1], "150k") {
		t.Errorf("alice's budget slot after Load: %q, want 100k superseded then 150k active", budgets)
	}
}

func TestLoadStopsAtFirstError(t *testing.T) {
	ds := demo(t)
	sink := newRecordingSink()
	sink.failOn = seed.IdempotencyKey(ds.Memories[5].Ref)
	rep, err := seed.Load(t.Context(), ds, sink)
	if !errors.Is(err, errSinkDown) {
		t.Fatalf("Load: err = %v, want errSinkDown", err)
	}
	if !strings.Contains(err.Error(), ds.Memories[5].Ref) {
		t.Errorf("error %q does not name the memory", err)
	}
	if rep.Memories != 5 {
		t.Errorf("report counts %d memories, want the 5 written before the failure", rep.Memories)
	}
}

func TestLoadRefusesInvalidData(t *testing.T) {
	ds := demo(t)
	ds.Memories[0].Type = "dream"
	sink := newRecordingSink()
	if _, err := seed.Load(t.Context(), ds, sink); err == nil {
		t.Fatal("Load of an invalid dataset succeeded")
	}
	if len(sink.calls) != 0 {
		t.Errorf("Load of an invalid dataset wrote %d calls, want none", len(sink.calls))
	}
}

func TestKeyOf(t *testing.T) {
	ds, err := seed.Demo()
	if err != nil {
		t.Fatal(err)
	}
	keys := ds.KeyOf()
	if len(keys) != len(ds.APIKeys) {
		t.Fatalf("KeyOf has %d keys for %d API keys: ids collide", len(keys), len(ds.APIKeys))
	}
	for _, k := range ds.APIKeys {
		if keys[k.ID] != k.Key {
			t.Errorf("KeyOf()[%q] = %q, want %q", k.ID, keys[k.ID], k.Key)
		}
	}
}
