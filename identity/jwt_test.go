package identity_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"

	"mneme/identity"
	"mneme/internal/testidp"
	"mneme/memory"
)

// verifier returns a verifier of is's tokens.
func verifier(t testing.TB, is *testidp.Issuer, refetch time.Duration) *identity.JWTVerifier {
	t.Helper()
	v, err := identity.NewJWTVerifier(identity.JWTConfig{
		Issuer: testidp.IssuerName, JWKSURL: is.URL, Audience: testidp.Audience,
		Claims:  identity.ClaimMapping{Tenant: "tenant", Kind: "kind", Roles: "roles"},
		Skew:    5 * time.Second,
		Refetch: refetch,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = v.Close(context.Background()) })
	return v
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestJWTVerify(t *testing.T) {
	is := testidp.New(t)
	v := verifier(t, is, time.Millisecond)
	ctx := context.Background()

	t.Run("valid", func(t *testing.T) {
		for _, kid := range []string{"rsa-1", "ec-1"} {
			p, err := v.Verify(ctx, is.Sign(kid, testidp.Claims{"roles": []string{"support", "tier1"}}))
			if err != nil {
				t.Fatalf("%s: %v", kid, err)
			}
			want := memory.Principal{Tenant: "acme", Kind: memory.KindAgent, ID: "support-bot", Roles: []string{"support", "tier1"}}
			if d := cmp.Diff(want, p); d != "" {
				t.Errorf("%s: principal (-want +got):\n%s", kid, d)
			}
		}
	})

	// A token signed by a key the issuer never published.
	stranger := testidp.New(t)
	stranger.AddKey("rsa-9", jwa.RS256())
	// An HMAC token keyed with the RSA public key's JWK: the classic
	// algorithm confusion.
	pubJSON := is.PublicJWK("rsa-1")
	hmacKey, _ := jwk.Import(pubJSON)
	_ = hmacKey.Set(jwk.KeyIDKey, "rsa-1")
	hsTok := jwt.New()
	_ = hsTok.Set("iss", testidp.IssuerName)
	_ = hsTok.Set("aud", testidp.Audience)
	_ = hsTok.Set("sub", "x")
	_ = hsTok.Set("tenant", "acme")
	_ = hsTok.Set("kind", "admin")
	_ = hsTok.Set("exp", time.Now().Add(time.Hour))
	hs, err := jwt.Sign(hsTok, jwt.WithKey(jwa.HS256(), hmacKey))
	if err != nil {
		t.Fatal(err)
	}
	valid := is.Sign("rsa-1", nil)
	payload := b64(`{"iss":"` + testidp.IssuerName + `","aud":"` + testidp.Audience + `","sub":"x","tenant":"acme","kind":"admin","exp":` +
		jsonNumber(time.Now().Add(time.Hour).Unix()) + `}`)

	bad := []struct {
		name, token string
	}{
		{"expired", is.Sign("rsa-1", testidp.Claims{"exp": time.Now().Add(-time.Minute).Unix()})},
		{"not yet valid", is.Sign("rsa-1", testidp.Claims{"nbf": time.Now().Add(time.Minute).Unix()})},
		{"no expiry", is.Sign("rsa-1", testidp.Claims{"exp": nil})},
		{"wrong audience", is.Sign("rsa-1", testidp.Claims{"aud": "someone-else"})},
		{"wrong issuer", is.Sign("rsa-1", testidp.Claims{"iss": "https://evil.example"})},
		{"unsigned", b64(`{"alg":"none","kid":"rsa-1"}`) + "." + payload + "."},
		{"unsigned without kid", b64(`{"alg":"none"}`) + "." + payload + "."},
		{"hmac with the public key", string(hs)},
		{"unknown key", stranger.Sign("rsa-9", nil)},
		{"known kid, other key", func() string { stranger.AddKey("rsa-1", jwa.RS256()); return stranger.Sign("rsa-1", nil) }()},
		{"tampered payload", tamper(valid)},
		{"malformed", "eyJhbGciOiJSUzI1NiJ9.not-json.sig"},
		{"two parts", "eyJhbGciOiJSUzI1NiJ9.e30"},
		{"bad tenant", is.Sign("rsa-1", testidp.Claims{"tenant": "a_b"})},
		{"unknown kind", is.Sign("rsa-1", testidp.Claims{"kind": "root"})},
		{"no subject", is.Sign("rsa-1", testidp.Claims{"sub": nil})},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := v.Verify(ctx, c.token)
			if !errors.Is(err, memory.ErrUnauthenticated) {
				t.Fatalf("Verify = %v, want ErrUnauthenticated", err)
			}
			t.Log(err)
		})
	}
}

func jsonNumber(n int64) string { b, _ := json.Marshal(n); return string(b) }

// TestJWTKeyRotation: a key published after the verifier started is used
// at its first token; a key withdrawn is refused once the set is fetched
// again.
func TestJWTKeyRotation(t *testing.T) {
	is := testidp.New(t)
	v := verifier(t, is, time.Millisecond)
	ctx := context.Background()
	if _, err := v.Verify(ctx, is.Sign("rsa-1", nil)); err != nil {
		t.Fatalf("before rotation: %v", err)
	}
	is.AddKey("rsa-2", jwa.RS256())
	is.Unpublish("rsa-1")
	time.Sleep(5 * time.Millisecond)
	if _, err := v.Verify(ctx, is.Sign("rsa-2", nil)); err != nil {
		t.Fatalf("new key after rotation: %v", err)
	}
	if _, err := v.Verify(ctx, is.Sign("rsa-1", nil)); !errors.Is(err, memory.ErrUnauthenticated) {
		t.Fatalf("withdrawn key after rotation: %v, want ErrUnauthenticated", err)
	}
}

// TestJWTRefetchIsThrottled: tokens naming unknown keys fetch the key set
// at most once per Refetch.
func TestJWTRefetchIsThrottled(t *testing.T) {
	is := testidp.New(t)
	v := verifier(t, is, time.Hour)
	ctx := context.Background()
	if _, err := v.Verify(ctx, is.Sign("rsa-1", nil)); err != nil {
		t.Fatal(err)
	}
	stranger := testidp.New(t)
	stranger.AddKey("forged", jwa.RS256())
	before := is.Fetches()
	for range 20 {
		if _, err := v.Verify(ctx, stranger.Sign("forged", nil)); !errors.Is(err, memory.ErrUnauthenticated) {
			t.Fatalf("forged: %v", err)
		}
	}
	if got := is.Fetches() - before; got > 1 {
		t.Errorf("20 unknown key ids fetched the key set %d times, want at most 1", got)
	}
}

// TestJWTIssuerDown: keys that cannot be fetched are an outage, not a bad
// token.
func TestJWTIssuerDown(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	v, err := identity.NewJWTVerifier(identity.JWTConfig{
		Issuer: testidp.IssuerName, JWKSURL: srv.URL, Audience: testidp.Audience,
		Claims: identity.ClaimMapping{Tenant: "tenant", FixedKind: memory.KindUser}, Refetch: time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close(context.Background())
	is := testidp.New(t)
	if _, err := v.Verify(context.Background(), is.Sign("rsa-1", nil)); !errors.Is(err, memory.ErrUnavailable) {
		t.Fatalf("Verify with the issuer down = %v, want ErrUnavailable", err)
	}
}

func TestClaimMapping(t *testing.T) {
	base := map[string]any{"sub": "u-1", "tenant": "acme", "kind": "user", "email": "bob@acme.example", "org": "globex"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	cases := []struct {
		name    string
		mapping identity.ClaimMapping
		claims  map[string]any
		want    memory.Principal // zero: ErrUnauthenticated
	}{
		{"kind claim, sub", identity.ClaimMapping{Tenant: "tenant", Kind: "kind"}, base,
			memory.Principal{Tenant: "acme", Kind: "user", ID: "u-1"}},
		{"fixed kind, id claim", identity.ClaimMapping{Tenant: "org", FixedKind: "agent", ID: "email"}, base,
			memory.Principal{Tenant: "globex", Kind: "agent", ID: "bob@acme.example"}},
		{"roles as list", identity.ClaimMapping{Tenant: "tenant", Kind: "kind", Roles: "roles"}, with("roles", []any{"analyst", "eu"}),
			memory.Principal{Tenant: "acme", Kind: "user", ID: "u-1", Roles: []string{"analyst", "eu"}}},
		{"roles as scope string", identity.ClaimMapping{Tenant: "tenant", Kind: "kind", Roles: "scope"}, with("scope", "read write"),
			memory.Principal{Tenant: "acme", Kind: "user", ID: "u-1", Roles: []string{"read", "write"}}},
		{"roles absent", identity.ClaimMapping{Tenant: "tenant", Kind: "kind", Roles: "roles"}, base,
			memory.Principal{Tenant: "acme", Kind: "user", ID: "u-1"}},
		{"no tenant", identity.ClaimMapping{Tenant: "tenant", Kind: "kind"}, with("tenant", nil), memory.Principal{}},
		{"tenant not a string", identity.ClaimMapping{Tenant: "tenant", Kind: "kind"}, with("tenant", 7.0), memory.Principal{}},
		{"tenant with underscore", identity.ClaimMapping{Tenant: "tenant", Kind: "kind"}, with("tenant", "a_b"), memory.Principal{}},
		{"tenant with space", identity.ClaimMapping{Tenant: "tenant", Kind: "kind"}, with("tenant", "a b"), memory.Principal{}},
		{"unknown kind", identity.ClaimMapping{Tenant: "tenant", Kind: "kind"}, with("kind", "superuser"), memory.Principal{}},
		{"no kind", identity.ClaimMapping{Tenant: "tenant", Kind: "kind"}, with("kind", nil), memory.Principal{}},
		{"bad fixed kind", identity.ClaimMapping{Tenant: "tenant", FixedKind: "root"}, base, memory.Principal{}},
		{"id too long", identity.ClaimMapping{Tenant: "tenant", Kind: "kind"}, with("sub", string(make([]byte, 65))), memory.Principal{}},
		{"id with slash", identity.ClaimMapping{Tenant: "tenant", Kind: "kind"}, with("sub", "a/b"), memory.Principal{}},
		{"an agent named as a user's own writing", identity.ClaimMapping{Tenant: "tenant", Kind: "kind"}, with("kind", "agent", "sub", "user:bob"), memory.Principal{}},
		{"role not a string", identity.ClaimMapping{Tenant: "tenant", Kind: "kind", Roles: "roles"}, with("roles", []any{"a", 1.0}), memory.Principal{}},
		{"role invalid", identity.ClaimMapping{Tenant: "tenant", Kind: "kind", Roles: "roles"}, with("roles", []any{"a b"}), memory.Principal{}},
		{"roles an object", identity.ClaimMapping{Tenant: "tenant", Kind: "kind", Roles: "roles"}, with("roles", map[string]any{}), memory.Principal{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.mapping.Principal(func(n string) (any, bool) { v, ok := c.claims[n]; return v, ok })
			if c.want.Tenant == "" {
				if !errors.Is(err, memory.ErrUnauthenticated) {
					t.Fatalf("Principal = %+v, %v; want ErrUnauthenticated", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(c.want, got); d != "" {
				t.Errorf("principal (-want +got):\n%s", d)
			}
		})
	}
}

func TestLooksLikeJWT(t *testing.T) {
	for tok, want := range map[string]bool{
		"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln": true,
		"mn_acme_4fB6ixukVUpW3M6bXTGZX7So":          false,
		"mn_a.b.c_4fB6ixukVUpW3M6bXTGZX7So":         false,
		"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0":      false,
		"":                                          false,
	} {
		if got := identity.LooksLikeJWT(tok); got != want {
			t.Errorf("LooksLikeJWT(%q) = %v, want %v", tok, got, want)
		}
	}
}

// BenchmarkJWTVerify is the cost of authenticating one request by JWT with
// the key set cached: ns/op, and the P50 and P99 of single verifications.
func BenchmarkJWTVerify(b *testing.B) {
	for _, kid := range []string{"rsa-1", "ec-1"} {
		b.Run(kid, func(b *testing.B) {
			is := testidp.New(b)
			v := verifier(b, is, time.Minute)
			ctx := context.Background()
			tok := is.Sign(kid, testidp.Claims{"roles": []string{"support"}})
			if _, err := v.Verify(ctx, tok); err != nil { // fills the cache
				b.Fatal(err)
			}
			lat := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if _, err := v.Verify(ctx, tok); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			b.ReportMetric(float64(lat[len(lat)*50/100].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Nanoseconds()), "p99-ns")
		})
	}
}

// tamper changes the middle character of a token, to one it is not: a
// fixed replacement left one token in 64 as it was, and valid.
func tamper(token string) string {
	i, c := len(token)/2, byte('A')
	if token[i] == c {
		c = 'B'
	}
	return token[:i] + string(c) + token[i+1:]
}
