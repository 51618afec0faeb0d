// Package testidp is an OpenID Connect issuer for tests: keys generated in
// the test, their public halves served as a JWKS that can be rotated, and
// tokens signed with them.
package testidp

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// Issuer is a test identity provider: keys generated in the test, their
// public halves served as a JWKS that can be rotated.
type Issuer struct {
	t      testing.TB
	URL    string // the JWKS
	mu     sync.Mutex
	keys   map[string]jwk.Key // kid → private key
	served []string           // kids published
	hits   int
}

// Fetches returns how many times the JWKS was fetched.
func (is *Issuer) Fetches() int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.hits
}

// PublicJWK returns the public half of kid as JSON.
func (is *Issuer) PublicJWK(kid string) []byte {
	is.mu.Lock()
	defer is.mu.Unlock()
	pub, err := is.keys[kid].PublicKey()
	if err != nil {
		is.t.Fatal(err)
	}
	raw, _ := json.Marshal(pub)
	return raw
}

// The issuer and audience of every token Sign makes.
const (
	IssuerName = "https://idp.example"
	Audience   = "mneme"
)

// New starts a JWKS server publishing one RSA and one EC key.
func New(t testing.TB) *Issuer {
	t.Helper()
	is := &Issuer{t: t, keys: map[string]jwk.Key{}}
	is.AddKey("rsa-1", jwa.RS256())
	is.AddKey("ec-1", jwa.ES256())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		is.mu.Lock()
		defer is.mu.Unlock()
		is.hits++
		set := jwk.NewSet()
		for _, kid := range is.served {
			pub, err := is.keys[kid].PublicKey()
			if err != nil {
				t.Errorf("public key: %v", err)
			}
			_ = set.AddKey(pub)
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	}))
	t.Cleanup(srv.Close)
	is.URL = srv.URL
	return is
}

// AddKey generates a key and publishes it.
func (is *Issuer) AddKey(kid string, alg jwa.SignatureAlgorithm) {
	is.t.Helper()
	var raw any
	var err error
	if alg == jwa.ES256() {
		raw, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	} else {
		raw, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil {
		is.t.Fatal(err)
	}
	key, err := jwk.Import(raw)
	if err != nil {
		is.t.Fatal(err)
	}
	_ = key.Set(jwk.KeyIDKey, kid)
	_ = key.Set(jwk.AlgorithmKey, alg)
	is.mu.Lock()
	defer is.mu.Unlock()
	is.keys[kid] = key
	is.served = append(is.served, kid)
}

// Unpublish stops serving kid; the key can still sign.
func (is *Issuer) Unpublish(kid string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.served = slices.DeleteFunc(is.served, func(k string) bool { return k == kid })
}

// Claims are a token's claims beyond the defaults Sign sets.
type Claims map[string]any

// Sign returns a token signed by kid, with iss, aud, sub, tenant, kind and
// a one-hour exp unless claims override them (a nil value removes one).
func (is *Issuer) Sign(kid string, claims Claims) string {
	is.t.Helper()
	now := time.Now()
	all := Claims{
		"iss": IssuerName, "aud": Audience, "sub": "support-bot", "tenant": "acme", "kind": "agent",
		"exp": now.Add(time.Hour).Unix(), "iat": now.Unix(),
	}
	for k, v := range claims {
		all[k] = v
	}
	tok := jwt.New()
	for k, v := range all {
		if v == nil {
			continue
		}
		if k == "exp" || k == "iat" || k == "nbf" {
			v = time.Unix(v.(int64), 0)
		}
		if err := tok.Set(k, v); err != nil {
			is.t.Fatalf("set %s: %v", k, err)
		}
	}
	is.mu.Lock()
	key := is.keys[kid]
	is.mu.Unlock()
	alg, _ := key.Algorithm()
	signed, err := jwt.Sign(tok, jwt.WithKey(alg, key))
	if err != nil {
		is.t.Fatalf("sign: %v", err)
	}
	return string(signed)
}
