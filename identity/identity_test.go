package identity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"mneme/memory"
)

// fakeKeys resolves API keys from a map keyed by "tenant/hash".
type fakeKeys struct {
	mu      sync.Mutex
	keys    map[string]memory.Principal
	err     error
	lookups []string // "tenant/hash"
}

var _ KeyStore = (*fakeKeys)(nil)

func (f *fakeKeys) LookupAPIKey(_ context.Context, tenant, hash string) (memory.Principal, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lookups = append(f.lookups, tenant+"/"+hash)
	if f.err != nil {
		return memory.Principal{}, f.err
	}
	p, ok := f.keys[tenant+"/"+hash]
	if !ok {
		return memory.Principal{}, memory.ErrNotFound
	}
	return p, nil
}

var agentSupport = memory.Principal{Tenant: "acme", Kind: memory.KindAgent, ID: "support-bot", Roles: []string{"agent"}}

func TestNewRequiresKeys(t *testing.T) {
	if _, err := New(Options{}); err == nil || !strings.Contains(err.Error(), "Keys") {
		t.Errorf("New without a key store: %v, want an error naming Keys", err)
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
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tenant, hash, err := ParseAPIKey(tt.key)
			if tt.wantTenant == "" {
				if !errors.Is(err, memory.ErrUnauthenticated) || tenant != "" || hash != "" {
					t.Errorf("ParseAPIKey = (%q, %q, %v), want memory.ErrUnauthenticated", tenant, hash, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseAPIKey: %v", err)
			}
			if tenant != tt.wantTenant || hash != HashAPIKey(tt.key) {
				t.Errorf("ParseAPIKey = (%q, %q), want (%q, %q)", tenant, hash, tt.wantTenant, HashAPIKey(tt.key))
			}
		})
	}
}

func TestHashAPIKey(t *testing.T) {
	// Stored hashes must never change: plain SHA-256, lower-case hex. The
	// vector is FIPS 180-2's "abc".
	const want = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
	if got := HashAPIKey("abc"); got != want {
		t.Errorf("HashAPIKey(abc) = %q, want %q", got, want)
	}
}

func TestNewAPIKeyRoundTrip(t *testing.T) {
	for _, tenant := range []string{"acme", "t-1f2e3d4c", "a.b:c@d"} {
		t.Run(tenant, func(t *testing.T) {
			key := NewAPIKey(tenant)
			got, hash, err := ParseAPIKey(key)
			if err != nil || got != tenant || hash != HashAPIKey(key) {
				t.Errorf("ParseAPIKey(NewAPIKey(%q)) = (%q, %q, %v)", tenant, got, hash, err)
			}
			if NewAPIKey(tenant) == key {
				t.Error("two keys are equal")
			}
		})
	}
}

func TestAuthenticate(t *testing.T) {
	const key = "mn_acme_4fB6ixukVUpW3M6bXTGZX7So"
	tests := []struct {
		name       string
		key        string
		storeErr   error
		want       memory.Principal
		wantErr    error
		wantLookup bool
	}{
		{"good key", key, nil, agentSupport, nil, true},
		{"malformed key", "not-a-key", nil, memory.Principal{}, memory.ErrUnauthenticated, false},
		{"short secret", "mn_acme_short", nil, memory.Principal{}, memory.ErrUnauthenticated, false},
		{"bad tenant", "mn_ac%me_4fB6ixukVUpW3M6bXTGZX7So", nil, memory.Principal{}, memory.ErrUnauthenticated, false},
		{"unknown key", "mn_acme_0000000000000000", nil, memory.Principal{}, memory.ErrUnauthenticated, true},
		{"wrapped not found", key, fmt.Errorf("lookup: %w", memory.ErrNotFound), memory.Principal{}, memory.ErrUnauthenticated, true},
		{"store down passes through", key, memory.ErrUnavailable, memory.Principal{}, memory.ErrUnavailable, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys := &fakeKeys{keys: map[string]memory.Principal{"acme/" + HashAPIKey(key): agentSupport}, err: tt.storeErr}
			svc, err := New(Options{Keys: keys})
			if err != nil {
				t.Fatal(err)
			}
			got, err := svc.Authenticate(context.Background(), tt.key)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == memory.ErrUnavailable && errors.Is(err, memory.ErrUnauthenticated) {
				t.Error("an outage must not read as a bad key")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("principal (-want +got):\n%s", diff)
			}
			if gotLookup := len(keys.lookups) > 0; gotLookup != tt.wantLookup {
				t.Errorf("store looked up: %v, want %v", gotLookup, tt.wantLookup)
			}
			if tt.wantLookup {
				if want := "acme/" + HashAPIKey(tt.key); keys.lookups[0] != want {
					t.Errorf("lookup %q, want %q", keys.lookups[0], want)
				}
			}
		})
	}
}
