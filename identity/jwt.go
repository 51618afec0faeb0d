package identity

// JWT bearer tokens from one configured OpenID Connect issuer. This file is
// apart from the API-key code on purpose: the two share only the principal
// they produce.

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/lestrrat-go/httprc/v3"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"

	"mneme/memory"
)

// JWT defaults.
const (
	DefaultIDClaim     = "sub"
	DefaultTenantClaim = "tenant"
	DefaultRolesClaim  = "roles"
	DefaultJWTSkew     = 30 * time.Second
	DefaultJWKSRefresh = 10 * time.Minute
	// DefaultJWKSRefetch is the shortest gap between the fetches a token
	// with an unknown key id may cause: a rotated key is picked up within
	// it, and a flood of forged key ids cannot hammer the issuer.
	DefaultJWKSRefetch = 10 * time.Second
	// MaxTokenBytes bounds what is parsed at all.
	MaxTokenBytes = 8 << 10
	maxRoles      = 32
)

// DefaultJWTAlgorithms are accepted when none are configured.
var DefaultJWTAlgorithms = []string{"RS256", "ES256"}

// asymmetric are the algorithms a JWKS of public keys can verify. HS* is
// absent on purpose: an HMAC "verified" with a public key is a forgery
// anyone can make; so is "none".
var asymmetric = map[string]bool{
	"RS256": true, "RS384": true, "RS512": true, "PS256": true, "PS384": true, "PS512": true,
	"ES256": true, "ES384": true, "ES512": true, "EdDSA": true,
}

// AsymmetricAlgorithm reports whether alg may be configured as accepted.
func AsymmetricAlgorithm(alg string) bool { return asymmetric[alg] }

// ClaimMapping says which claims of a token make its principal.
type ClaimMapping struct {
	Tenant string // claim holding the tenant; required
	// Kind is the claim holding the principal's kind; FixedKind gives every
	// token the same kind instead. Exactly one is set.
	Kind      string
	FixedKind string
	ID        string // claim holding the principal's id; DefaultIDClaim when empty
	Roles     string // claim holding roles (array or space-separated string); optional
}

// Principal maps claims, looked up by name through claim, to a principal.
// Every part must be valid as if it came from an API key; anything else is
// memory.ErrUnauthenticated, with the reason for the log.
func (m ClaimMapping) Principal(claim func(name string) (any, bool)) (memory.Principal, error) {
	str := func(name string) (string, error) {
		v, ok := claim(name)
		if !ok {
			return "", fmt.Errorf("%w: token lacks claim %q", memory.ErrUnauthenticated, name)
		}
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%w: token claim %q is not a string", memory.ErrUnauthenticated, name)
		}
		return s, nil
	}
	var p memory.Principal
	var err error
	if p.Tenant, err = str(m.Tenant); err != nil {
		return memory.Principal{}, err
	}
	if !memory.ValidTenant(p.Tenant) {
		return memory.Principal{}, fmt.Errorf("%w: token tenant is not a valid tenant name", memory.ErrUnauthenticated)
	}
	p.Kind = m.FixedKind
	if m.Kind != "" {
		if p.Kind, err = str(m.Kind); err != nil {
			return memory.Principal{}, err
		}
	}
	if !KnownKind(p.Kind) {
		return memory.Principal{}, fmt.Errorf("%w: token kind %q is not agent, user, admin or analyst", memory.ErrUnauthenticated, p.Kind)
	}
	idClaim := m.ID
	if idClaim == "" {
		idClaim = DefaultIDClaim
	}
	if p.ID, err = str(idClaim); err != nil {
		return memory.Principal{}, err
	}
	if !memory.ValidName(p.ID) || !validID(p.Kind, p.ID) {
		return memory.Principal{}, fmt.Errorf("%w: token claim %q is not a valid principal id", memory.ErrUnauthenticated, idClaim)
	}
	if m.Roles != "" {
		if p.Roles, err = roles(claim, m.Roles); err != nil {
			return memory.Principal{}, err
		}
	}
	return p, nil
}

// roles reads a roles claim: absent is none; an array of strings or one
// space-separated string (as OAuth's "scope") are both common.
func roles(claim func(string) (any, bool), name string) ([]string, error) {
	v, ok := claim(name)
	if !ok {
		return nil, nil
	}
	var out []string
	switch r := v.(type) {
	case string:
		out = strings.Fields(r)
	case []string:
		out = r
	case []any:
		for _, x := range r {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("%w: token claim %q holds a non-string role", memory.ErrUnauthenticated, name)
			}
			out = append(out, s)
		}
	default:
		return nil, fmt.Errorf("%w: token claim %q is neither a list nor a string", memory.ErrUnauthenticated, name)
	}
	if len(out) > maxRoles {
		return nil, fmt.Errorf("%w: token claim %q holds more than %d roles", memory.ErrUnauthenticated, name, maxRoles)
	}
	for _, r := range out {
		if !memory.ValidName(r) {
			return nil, fmt.Errorf("%w: token claim %q holds an invalid role", memory.ErrUnauthenticated, name)
		}
	}
	return out, nil
}

// KnownKind reports whether kind is a principal kind.
func KnownKind(kind string) bool {
	switch kind {
	case memory.KindAgent, memory.KindUser, memory.KindAdmin, memory.KindAnalyst:
		return true
	}
	return false
}

// LooksLikeJWT tells a compact JWT from an API key by its shape: three
// base64url parts whose header starts as a JSON object does ("eyJ").
// API keys start with "mn_" and so never pass.
func LooksLikeJWT(token string) bool {
	return strings.HasPrefix(token, "eyJ") && strings.Count(token, ".") == 2
}

// Bucket names a caller's rate-limit bucket: an API key by a digest (never
// the key itself), a token by its principal, so that a refreshed token keeps
// the bucket of the one it replaces. The API and the panel share buckets.
func Bucket(credential string, p memory.Principal) string {
	if LooksLikeJWT(credential) {
		return "sub:" + p.Kind + ":" + p.ID
	}
	sum := sha256.Sum256([]byte(credential))
	return "key:" + hex.EncodeToString(sum[:16])
}

// JWTConfig configures a JWTVerifier.
type JWTConfig struct {
	Issuer   string // the iss every token must carry
	JWKSURL  string // where the issuer publishes its public keys
	Audience string // an aud every token must carry
	Claims   ClaimMapping
	// Algorithms accepted in a token's header; DefaultJWTAlgorithms when
	// empty. Only asymmetric ones are allowed.
	Algorithms []string
	Skew       time.Duration // clock skew allowed on exp, nbf and iat
	// Refresh is the longest a fetched key set is used before it is
	// fetched again; Refetch the shortest gap between fetches an unknown
	// key id causes.
	Refresh time.Duration
	Refetch time.Duration
	// HTTPClient fetches the key set; a client with timeouts by default.
	HTTPClient *http.Client
	Logger     *slog.Logger
	Now        func() time.Time
}

// JWTVerifier verifies bearer tokens against the issuer's published keys
// and maps them to principals. Its key cache refreshes in the background
// until Close.
type JWTVerifier struct {
	cfg   JWTConfig
	algs  map[string]bool
	cache *jwk.Cache
	log   *slog.Logger
	now   func() time.Time

	mu          sync.Mutex // guards lastRefetch
	lastRefetch time.Time
}

// errJWKS is a key set that cannot be fetched: an outage, not a bad token.
var errJWKS = fmt.Errorf("%w: jwks", memory.ErrUnavailable)

// NewJWTVerifier checks cfg and starts the key cache. It does not wait for
// the first fetch: memoryd starts while the issuer is down, and tokens are
// answered 503 until its keys arrive.
func NewJWTVerifier(cfg JWTConfig) (*JWTVerifier, error) {
	if cfg.Issuer == "" || cfg.JWKSURL == "" || cfg.Audience == "" {
		return nil, errors.New("identity: a JWT verifier needs an issuer, a JWKS URL and an audience")
	}
	if cfg.Claims.Tenant == "" || (cfg.Claims.Kind == "") == (cfg.Claims.FixedKind == "") {
		return nil, errors.New("identity: the claim mapping needs a tenant claim and either a kind claim or a fixed kind")
	}
	if len(cfg.Algorithms) == 0 {
		cfg.Algorithms = DefaultJWTAlgorithms
	}
	algs := map[string]bool{}
	for _, a := range cfg.Algorithms {
		if !asymmetric[a] {
			return nil, fmt.Errorf("identity: JWT algorithm %q is not an accepted asymmetric one", a)
		}
		algs[a] = true
	}
	if cfg.Skew < 0 {
		cfg.Skew = 0
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = DefaultJWKSRefresh
	}
	if cfg.Refetch <= 0 {
		cfg.Refetch = DefaultJWKSRefetch
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	v := &JWTVerifier{cfg: cfg, algs: algs, log: cfg.Logger, now: cfg.Now}
	if v.log == nil {
		v.log = slog.Default()
	}
	if v.now == nil {
		v.now = time.Now
	}
	// The cache's workers live until Close, not as long as some request.
	cache, err := jwk.NewCache(context.Background(), httprc.NewClient())
	if err != nil {
		return nil, fmt.Errorf("identity: jwks cache: %w", err)
	}
	err = cache.Register(context.Background(), cfg.JWKSURL,
		jwk.WithHTTPClient(cfg.HTTPClient), jwk.WithWaitReady(false),
		jwk.WithMinInterval(min(cfg.Refetch, cfg.Refresh)), jwk.WithMaxInterval(cfg.Refresh))
	if err != nil {
		_ = cache.Shutdown(context.Background())
		return nil, fmt.Errorf("identity: jwks %s: %w", cfg.JWKSURL, err)
	}
	v.cache = cache
	return v, nil
}

// Close stops the key cache's workers.
func (v *JWTVerifier) Close(ctx context.Context) error { return v.cache.Shutdown(ctx) }

// Verify checks a token's signature, issuer, audience and times and
// returns its principal. A token that fails any check is
// memory.ErrUnauthenticated; a key set that cannot be fetched is
// memory.ErrUnavailable.
func (v *JWTVerifier) Verify(ctx context.Context, token string) (memory.Principal, error) {
	if len(token) > MaxTokenBytes {
		return memory.Principal{}, fmt.Errorf("%w: token longer than %d bytes", memory.ErrUnauthenticated, MaxTokenBytes)
	}
	var outage error
	keys := jws.KeyProviderFunc(func(ctx context.Context, sink jws.KeySink, sig *jws.Signature, _ *jws.Message) error {
		key, alg, err := v.keyFor(ctx, sig.ProtectedHeaders())
		if errors.Is(err, memory.ErrUnavailable) {
			outage = err
		}
		if err != nil {
			return err
		}
		sink.Key(alg, key)
		return nil
	})
	tok, err := jwt.ParseString(token,
		jwt.WithKeyProvider(keys),
		jwt.WithValidate(true),
		jwt.WithIssuer(v.cfg.Issuer),
		jwt.WithAudience(v.cfg.Audience),
		jwt.WithRequiredClaim(jwt.ExpirationKey),
		jwt.WithAcceptableSkew(v.cfg.Skew),
		jwt.WithClock(jwt.ClockFunc(v.now)),
		jwt.WithContext(ctx),
	)
	if outage != nil {
		return memory.Principal{}, outage
	}
	if err != nil {
		return memory.Principal{}, fmt.Errorf("%w: token: %w", memory.ErrUnauthenticated, err)
	}
	return v.cfg.Claims.Principal(func(name string) (any, bool) {
		var val any
		if tok.Get(name, &val) != nil {
			return nil, false
		}
		return val, true
	})
}

// keyFor returns the published key a signature names, with the algorithm
// to verify it by. The header's algorithm must be one configured, and the
// key's own, when it states one.
func (v *JWTVerifier) keyFor(ctx context.Context, h jws.Headers) (jwk.Key, jwa.SignatureAlgorithm, error) {
	alg, ok := h.Algorithm()
	if !ok || !v.algs[alg.String()] {
		return nil, alg, fmt.Errorf("%w: token algorithm %q is not accepted", memory.ErrUnauthenticated, alg.String())
	}
	kid, ok := h.KeyID()
	if !ok || kid == "" {
		return nil, alg, fmt.Errorf("%w: token names no key (kid)", memory.ErrUnauthenticated)
	}
	set, err := v.cache.Lookup(ctx, v.cfg.JWKSURL)
	var key jwk.Key
	found := false
	if err == nil {
		key, found = set.LookupKeyID(kid)
	}
	if !found {
		// A key id not yet seen may be a rotation: fetch again, at most
		// once per Refetch, before calling the token forged.
		if set, err = v.refetch(ctx); err != nil {
			return nil, alg, err
		}
		if key, found = set.LookupKeyID(kid); !found {
			return nil, alg, fmt.Errorf("%w: token key %q is not published by the issuer", memory.ErrUnauthenticated, kid)
		}
	}
	if ka, ok := key.Algorithm(); ok && ka.String() != alg.String() {
		return nil, alg, fmt.Errorf("%w: token algorithm %s differs from its key's %s", memory.ErrUnauthenticated, alg, ka)
	}
	return key, alg, nil
}

// refetch fetches the key set again unless that happened less than
// Refetch ago, and returns the freshest set there is.
func (v *JWTVerifier) refetch(ctx context.Context) (jwk.Set, error) {
	v.mu.Lock()
	due := v.now().Sub(v.lastRefetch) >= v.cfg.Refetch
	if due {
		v.lastRefetch = v.now()
	}
	v.mu.Unlock()
	if due {
		set, err := v.cache.Refresh(ctx, v.cfg.JWKSURL)
		if err == nil {
			return set, nil
		}
		v.log.WarnContext(ctx, "jwks fetch failed", "url", v.cfg.JWKSURL, "err", err)
	}
	set, err := v.cache.Lookup(ctx, v.cfg.JWKSURL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", errJWKS, v.cfg.JWKSURL, err)
	}
	return set, nil
}
