package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"mneme/memory"
)

const testSecret = "0123456789abcdef0123456789abcdef"

// fakeStore resolves key hashes from a map; only what Authenticate and
// EraseUser need does anything.
type fakeStore struct {
	Store
	mu      sync.Mutex
	creds   map[string]Credential // by hash
	err     error
	lookups int
}

func (f *fakeStore) KeyByHash(_ context.Context, tenant, hash string) (Credential, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups++
	if f.err != nil {
		return Credential{}, f.err
	}
	c, ok := f.creds[hash]
	if !ok || c.Principal.Tenant != tenant {
		return Credential{}, memory.ErrNotFound
	}
	return c, nil
}

func (f *fakeStore) TouchKeys(context.Context, string, []string, time.Time) error { return nil }

func (f *fakeStore) set(hash string, c Credential) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.creds[hash] = c
}

type fakeEpochs struct {
	mu  sync.Mutex
	n   map[string]int64
	err error
}

func (f *fakeEpochs) Epoch(_ context.Context, tenant string) (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n[tenant], f.err
}

func (f *fakeEpochs) Bump(_ context.Context, tenant string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.n[tenant]++
	return f.err
}

func testHasher(t testing.TB) Hasher {
	h, err := NewHasher(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestNewRequiresParts(t *testing.T) {
	_, err := New(Options{})
	for _, part := range []string{"Store", "Epochs", "Hasher", "MNEME_KEY_SECRET"} {
		if err == nil || !strings.Contains(err.Error(), part) {
			t.Errorf("New without parts: %v, want an error naming %s", err, part)
		}
	}
}

func TestParseAPIKey(t *testing.T) {
	tests := []struct {
		name       string
		key        string
		wantTenant string // "" means memory.ErrUnauthenticated
	}{
		{"good", "mn_acme_4fB6ixukVUpW3M6bXTGZX7So", "acme"},
		{"secret of exactly 8", "mn_acme_12345678", "acme"},
		{"secret may contain _", "mn_acme_1234_5678", "acme"},
		{"tenant with -.:@", "mn_t-1.a:b@c_12345678", "t-1.a:b@c"},
		{"empty", "", ""},
		{"missing prefix", "acme_4fB6ixukVUpW3M6bXTGZX7So", ""},
		{"wrong prefix", "mk_acme_4fB6ixukVUpW3M6bXTGZX7So", ""},
		{"prefix only", "mn_", ""},
		{"no tenant separator", "mn_acme4fB6ixukVUpW3M6bXTGZX7So", ""},
		{"empty tenant", "mn__4fB6ixukVUpW3M6bXTGZX7So", ""},
		{"short secret", "mn_acme_1234567", ""},
		{"empty secret", "mn_acme_", ""},
		{"tenant with /", "mn_ac/me_4fB6ixukVUpW3M6bXTGZX7So", ""},
		{"tenant with space", "mn_ac me_4fB6ixukVUpW3M6bXTGZX7So", ""},
		{"tenant with non-ASCII", "mn_acmé_4fB6ixukVUpW3M6bXTGZX7So", ""},
		{"tenant too long", "mn_" + strings.Repeat("a", 65) + "_4fB6ixukVUpW3M6bXTGZX7So", ""},
		{"key too long", "mn_acme_" + strings.Repeat("x", 300), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tenant, err := ParseAPIKey(tt.key)
			if tt.wantTenant == "" {
				if !errors.Is(err, memory.ErrUnauthenticated) || tenant != "" {
					t.Errorf("ParseAPIKey = (%q, %v), want memory.ErrUnauthenticated", tenant, err)
				}
				return
			}
			if err != nil || tenant != tt.wantTenant {
				t.Errorf("ParseAPIKey = (%q, %v), want %q", tenant, err, tt.wantTenant)
			}
		})
	}
}

func TestNewAPIKey(t *testing.T) {
	for _, tenant := range []string{"acme", "t-1f2e3d4c", "a.b:c@d"} {
		t.Run(tenant, func(t *testing.T) {
			key := NewAPIKey(tenant)
			if got, err := ParseAPIKey(key); err != nil || got != tenant {
				t.Errorf("ParseAPIKey(NewAPIKey(%q)) = (%q, %v)", tenant, got, err)
			}
			if NewAPIKey(tenant) == key {
				t.Error("two keys are equal")
			}
			if p := KeyPrefix(key); !strings.HasPrefix(key, p) || len(p) != len("mn_"+tenant+"_")+shownSecret {
				t.Errorf("KeyPrefix(%q) = %q", key, p)
			}
		})
	}
}

func TestHasher(t *testing.T) {
	t.Run("secret length", func(t *testing.T) {
		for _, tt := range []struct {
			secret string
			ok     bool
		}{{"", false}, {strings.Repeat("x", MinSecretLen-1), false}, {strings.Repeat("x", MinSecretLen), true}} {
			_, err := NewHasher(tt.secret)
			if (err == nil) != tt.ok || (err != nil && !errors.Is(err, ErrKeySecret)) {
				t.Errorf("NewHasher(%d bytes) = %v, want ok=%v", len(tt.secret), err, tt.ok)
			}
		}
	})
	tests := []struct {
		name, secret, key, want string
	}{
		// Stored hashes must never change: HMAC-SHA256, lower-case hex.
		// The vector is the well-known one for key "key".
		{"known vector", "key", "The quick brown fox jumps over the lazy dog", "f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (Hasher{secret: []byte(tt.secret)}).Hash(tt.key); got != tt.want {
				t.Errorf("Hash = %s, want %s", got, tt.want)
			}
		})
	}
	t.Run("the secret matters", func(t *testing.T) {
		a, _ := NewHasher(testSecret)
		b, _ := NewHasher(strings.ToUpper(testSecret))
		if a.Hash("mn_acme_12345678") == b.Hash("mn_acme_12345678") {
			t.Error("two secrets give one hash")
		}
	})
}

func TestStatusAt(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	past, future := now.Add(-time.Second), now.Add(time.Second)
	tests := []struct {
		name string
		key  Key
		want string
	}{
		{"plain", Key{}, StatusActive},
		{"expires later", Key{ExpiresAt: &future}, StatusActive},
		{"expired", Key{ExpiresAt: &past}, StatusExpired},
		{"expires now", Key{ExpiresAt: &now}, StatusExpired},
		{"in grace", Key{GraceUntil: &future}, StatusRotating},
		{"grace over", Key{GraceUntil: &past}, StatusRotated},
		{"revoked wins", Key{RevokedAt: &past, GraceUntil: &future}, StatusRevoked},
		{"expiry before grace end", Key{ExpiresAt: &past, GraceUntil: &future}, StatusExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.key.StatusAt(now); got != tt.want {
				t.Errorf("StatusAt = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestCacheFresh(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		entry cacheEntry
		epoch int64
		want  bool
	}{
		{"same epoch", cacheEntry{epoch: 3, loaded: now}, 3, true},
		{"older epoch", cacheEntry{epoch: 2, loaded: now}, 3, false},
		{"newer epoch (read before a bump seen here)", cacheEntry{epoch: 4, loaded: now}, 3, true},
		{"aged out", cacheEntry{epoch: 3, loaded: now.Add(-time.Minute)}, 3, false},
		{"just young enough", cacheEntry{epoch: 3, loaded: now.Add(-time.Minute + time.Nanosecond)}, 3, true},
		{"from the future (clock jump)", cacheEntry{epoch: 3, loaded: now.Add(time.Second)}, 3, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.entry.fresh(tt.epoch, now, time.Minute); got != tt.want {
				t.Errorf("fresh = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestFullCacheKeepsKnownKeys: a flood of made-up keys fills the cache
// with unknown ones; when it is full they go, and the keys in use stay.
func TestFullCacheKeepsKnownKeys(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	c := newKeyCache(100, time.Minute)
	c.put("known", cacheEntry{found: true, epoch: 1, loaded: now})
	for i := range 250 {
		c.put(fmt.Sprintf("made-up-%d", i), cacheEntry{found: false, epoch: 1, loaded: now})
	}
	if _, ok := c.get("known", 1, now); !ok {
		t.Error("a flood of unknown keys evicted a known one")
	}
	if len(c.entries) > 100 {
		t.Errorf("%d entries, more than the cache's 100", len(c.entries))
	}
	// Full of known keys, it starts over rather than grow.
	for i := range 150 {
		c.put(fmt.Sprintf("known-%d", i), cacheEntry{found: true, epoch: 1, loaded: now})
	}
	if len(c.entries) > 100 {
		t.Errorf("%d entries, more than the cache's 100", len(c.entries))
	}
}

// authFixture is a Service over fakes with one key of tenant acme.
type authFixture struct {
	svc    *Service
	store  *fakeStore
	epochs *fakeEpochs
	key    string
	hash   string
	now    time.Time
}

func newAuthFixture(t testing.TB, noCache bool) *authFixture {
	f := &authFixture{
		store:  &fakeStore{creds: map[string]Credential{}},
		epochs: &fakeEpochs{n: map[string]int64{}},
		key:    "mn_acme_4fB6ixukVUpW3M6bXTGZX7So",
		now:    time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC),
	}
	h := testHasher(t)
	f.hash = h.Hash(f.key)
	f.store.set(f.hash, Credential{Key: Key{ID: "key_1"}, Principal: agentSupport})
	svc, err := New(Options{Store: f.store, Epochs: f.epochs, Hasher: h, Now: func() time.Time { return f.now }, NoCache: noCache})
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	return f
}

var agentSupport = memory.Principal{Tenant: "acme", Kind: memory.KindAgent, ID: "support-bot", Roles: []string{"agent"}}

func TestAuthenticate(t *testing.T) {
	ctx := context.Background()
	type step struct {
		do          func(f *authFixture)
		key         string // "" means the fixture's key
		want        error
		wantLookups int // lookups so far
	}
	revoke := func(f *authFixture) {
		at := f.now
		f.store.set(f.hash, Credential{Key: Key{ID: "key_1", RevokedAt: &at}, Principal: agentSupport})
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"cached after the first lookup", []step{{want: nil, wantLookups: 1}, {want: nil, wantLookups: 1}}},
		{"malformed key never reaches the store", []step{{key: "not-a-key", want: memory.ErrUnauthenticated, wantLookups: 0}}},
		{"unknown key is cached as unknown", []step{
			{key: "mn_acme_0000000000000000", want: memory.ErrUnauthenticated, wantLookups: 1},
			{key: "mn_acme_0000000000000000", want: memory.ErrUnauthenticated, wantLookups: 1},
		}},
		{"other tenant's key name", []step{{key: "mn_other_4fB6ixukVUpW3M6bXTGZX7So", want: memory.ErrUnauthenticated, wantLookups: 1}}},
		{"revoke without a bump is served from cache (until max age)", []step{
			{wantLookups: 1}, {do: revoke, wantLookups: 1},
		}},
		{"revoke with a bump is refused at once", []step{
			{wantLookups: 1},
			{do: func(f *authFixture) { revoke(f); _ = f.epochs.Bump(ctx, "acme") }, want: memory.ErrUnauthenticated, wantLookups: 2},
		}},
		{"another tenant's bump leaves the entry", []step{
			{wantLookups: 1}, {do: func(f *authFixture) { _ = f.epochs.Bump(ctx, "other") }, wantLookups: 1},
		}},
		{"entries age out", []step{
			{wantLookups: 1}, {do: func(f *authFixture) { f.now = f.now.Add(defaultCacheMaxAge) }, wantLookups: 2},
		}},
		{"expiry is checked on cached entries", []step{
			{do: func(f *authFixture) {
				exp := f.now.Add(time.Second)
				f.store.set(f.hash, Credential{Key: Key{ID: "key_1", ExpiresAt: &exp}, Principal: agentSupport})
			}, wantLookups: 1},
			{do: func(f *authFixture) { f.now = f.now.Add(time.Second) }, want: memory.ErrUnauthenticated, wantLookups: 1},
		}},
		{"grace end is checked on cached entries", []step{
			{do: func(f *authFixture) {
				end := f.now.Add(time.Second)
				f.store.set(f.hash, Credential{Key: Key{ID: "key_1", GraceUntil: &end}, Principal: agentSupport})
			}, wantLookups: 1},
			{do: func(f *authFixture) { f.now = f.now.Add(time.Second) }, want: memory.ErrUnauthenticated, wantLookups: 1},
		}},
		{"store down is unavailable, not a bad key", []step{
			{do: func(f *authFixture) { f.store.err = memory.ErrUnavailable }, want: memory.ErrUnavailable, wantLookups: 1},
		}},
		{"epochs down is unavailable", []step{
			{do: func(f *authFixture) { f.epochs.err = errors.New("redis down") }, want: memory.ErrUnavailable, wantLookups: 0},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newAuthFixture(t, false)
			for i, s := range tt.steps {
				if s.do != nil {
					s.do(f)
				}
				key := s.key
				if key == "" {
					key = f.key
				}
				got, err := f.svc.Authenticate(ctx, key)
				if !errors.Is(err, s.want) {
					t.Fatalf("step %d: err = %v, want %v", i, err, s.want)
				}
				if s.want == memory.ErrUnavailable && errors.Is(err, memory.ErrUnauthenticated) {
					t.Errorf("step %d: an outage must not read as a bad key", i)
				}
				if s.want == nil {
					if d := cmp.Diff(agentSupport, got); d != "" {
						t.Errorf("step %d: principal (-want +got):\n%s", i, d)
					}
				}
				if f.store.lookups != s.wantLookups {
					t.Errorf("step %d: %d lookups, want %d", i, f.store.lookups, s.wantLookups)
				}
			}
		})
	}
}

func TestNoCacheLooksUpEveryTime(t *testing.T) {
	f := newAuthFixture(t, true)
	for range 3 {
		if _, err := f.svc.Authenticate(context.Background(), f.key); err != nil {
			t.Fatal(err)
		}
	}
	if f.store.lookups != 3 {
		t.Errorf("%d lookups, want 3", f.store.lookups)
	}
}

func TestLastUsedAtMostOnceAMinute(t *testing.T) {
	f := newAuthFixture(t, false)
	ctx := context.Background()
	for range 5 {
		if _, err := f.svc.Authenticate(ctx, f.key); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(f.svc.touches.ch); n != 1 {
		t.Errorf("%d touches queued in a minute, want 1", n)
	}
	f.now = f.now.Add(touchEvery)
	if _, err := f.svc.Authenticate(ctx, f.key); err != nil {
		t.Fatal(err)
	}
	if n := len(f.svc.touches.ch); n != 2 {
		t.Errorf("%d touches queued after a minute, want 2", n)
	}
}

// The audit trail names a failed act as the API answers it, not by the
// domain error identity's errors wrap.
func TestAuditReasonSpeaksLikeTheAPI(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{ErrTenantExists, "tenant_exists"},
		{fmt.Errorf("create acme/agent:x: %w", ErrPrincipalExists), "principal_exists"},
		{ErrKeyInactive, "key_inactive"},
		{ErrNoOwner, "unknown_principal"},
		{memory.ErrConflict, "conflict"},
		{memory.ErrNotFound, "not_found"},
		{nil, ""},
	}
	for _, tt := range tests {
		if got := auditReason(tt.err); got != tt.want {
			t.Errorf("auditReason(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
