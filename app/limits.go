package app

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"mneme/identity"
	"mneme/quota"
	"mneme/ratelimit"
)

// OIDCConfig accepts JWT bearer tokens from one OpenID Connect issuer
// besides API keys. It is off while Issuer is empty.
type OIDCConfig struct {
	Issuer   string // the iss tokens must carry
	JWKSURL  string // the issuer's public keys
	Audience string // an aud tokens must carry
	// Claim → principal: TenantClaim and IDClaim name claims; the kind is
	// the fixed Kind when set, else the KindClaim claim; RolesClaim is
	// optional (empty: no roles).
	TenantClaim string
	KindClaim   string
	Kind        string
	IDClaim     string
	RolesClaim  string
	Algorithms  []string      // accepted header algorithms, asymmetric only
	Skew        time.Duration // clock skew allowed on exp, nbf, iat
	JWKSRefresh time.Duration // longest a fetched key set is used
}

// On reports whether tokens are accepted.
func (o OIDCConfig) On() bool { return o.Issuer != "" }

// LimitsConfig is the per-caller rate limit and the per-tenant quotas,
// all off by default: a deployment behind its own gateway should not meet
// surprise 429s, and an unlimited one pays no Redis round trip for them.
type LimitsConfig struct {
	// Rate is each caller's requests per second (0: no limit) and Burst
	// its bucket (0: one second's worth, at least 1).
	Rate  float64
	Burst int
	// KindRates overrides Rate and Burst per principal kind.
	KindRates map[string]ratelimit.Rate
	// QuotaMemories and QuotaChars cap each tenant's memories (every
	// status and version) and their content characters; 0 is no cap.
	QuotaMemories int64
	QuotaChars    int64
	// QuotaRefresh is how old a replica's count of a tenant may be.
	QuotaRefresh time.Duration
}

func defaultOIDC() OIDCConfig {
	return OIDCConfig{
		TenantClaim: identity.DefaultTenantClaim, KindClaim: "kind", IDClaim: identity.DefaultIDClaim,
		RolesClaim: identity.DefaultRolesClaim, Algorithms: slices.Clone(identity.DefaultJWTAlgorithms),
		Skew: identity.DefaultJWTSkew, JWKSRefresh: identity.DefaultJWKSRefresh,
	}
}

func defaultLimits() LimitsConfig {
	return LimitsConfig{QuotaRefresh: quota.DefaultRefresh}
}

// oidcFlags binds the token settings' flags and environment variables.
func oidcFlags(b *binder, o *OIDCConfig) {
	b.bind(stringValue(&o.Issuer), "oidc-issuer", "MNEME_OIDC_ISSUER", "accept JWT bearer tokens of this issuer; empty: API keys only")
	b.bind(stringValue(&o.JWKSURL), "oidc-jwks-url", "MNEME_OIDC_JWKS_URL", "the issuer's JWKS URL")
	b.bind(stringValue(&o.Audience), "oidc-audience", "MNEME_OIDC_AUDIENCE", "audience tokens must name")
	b.bind(stringValue(&o.TenantClaim), "oidc-tenant-claim", "MNEME_OIDC_TENANT_CLAIM", "claim holding the tenant")
	b.bind(stringValue(&o.KindClaim), "oidc-kind-claim", "MNEME_OIDC_KIND_CLAIM", "claim holding the kind: agent, user, admin or analyst")
	b.bind(stringValue(&o.Kind), "oidc-kind", "MNEME_OIDC_KIND", "one kind for every token instead of -oidc-kind-claim")
	b.bind(stringValue(&o.IDClaim), "oidc-id-claim", "MNEME_OIDC_ID_CLAIM", "claim holding the principal id")
	b.bind(stringValue(&o.RolesClaim), "oidc-roles-claim", "MNEME_OIDC_ROLES_CLAIM", "claim holding roles; empty: none")
	b.bind((*stringList)(&o.Algorithms), "oidc-algorithms", "MNEME_OIDC_ALGORITHMS", "accepted signature algorithms, e.g. RS256,ES256")
	b.bind(durationValue(&o.Skew), "oidc-skew", "MNEME_OIDC_SKEW", "clock skew allowed on exp and nbf")
	b.bind(durationValue(&o.JWKSRefresh), "oidc-jwks-refresh", "MNEME_OIDC_JWKS_REFRESH", "longest a fetched JWKS is used")
}

// limitsFlags binds the rate limit's and the quotas' flags and variables.
func limitsFlags(b *binder, l *LimitsConfig) {
	b.bind(float64Value(&l.Rate), "rate-limit", "MNEME_RATE_LIMIT", "requests per second per API key or token subject, 0 = no limit")
	b.bind(intValue(&l.Burst), "rate-burst", "MNEME_RATE_BURST", "requests a caller may send at once, 0 = one second's worth")
	b.bind((*kindRates)(&l.KindRates), "rate-limit-kinds", "MNEME_RATE_LIMIT_KINDS", "per kind rate[:burst], e.g. agent=200:400,user=5")
	b.bind(int64Value(&l.QuotaMemories), "quota-memories", "MNEME_QUOTA_MEMORIES", "most memories per tenant, 0 = no quota")
	b.bind(int64Value(&l.QuotaChars), "quota-chars", "MNEME_QUOTA_CHARS", "most content characters per tenant, 0 = no quota")
	b.bind(durationValue(&l.QuotaRefresh), "quota-refresh", "MNEME_QUOTA_REFRESH", "how often a replica recounts a tenant for its quotas")
}

func (o OIDCConfig) validate() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if !o.On() {
		if o.JWKSURL != "" || o.Audience != "" {
			bad("-oidc-jwks-url and -oidc-audience (MNEME_OIDC_*) need -oidc-issuer (MNEME_OIDC_ISSUER)")
		}
		return errs
	}
	if u, err := url.Parse(o.Issuer); err != nil || !oneOf(u.Scheme, "http", "https") || u.Host == "" {
		bad("-oidc-issuer (MNEME_OIDC_ISSUER): %q is not an http(s) URL", o.Issuer)
	}
	if u, err := url.Parse(o.JWKSURL); err != nil || !oneOf(u.Scheme, "http", "https") || u.Host == "" {
		bad("-oidc-jwks-url (MNEME_OIDC_JWKS_URL): %q is not an http(s) URL; tokens need the issuer's keys", o.JWKSURL)
	}
	if strings.TrimSpace(o.Audience) == "" {
		bad("-oidc-audience (MNEME_OIDC_AUDIENCE): required with -oidc-issuer, or tokens minted for other services would pass")
	}
	if o.TenantClaim == "" {
		bad("-oidc-tenant-claim (MNEME_OIDC_TENANT_CLAIM): required")
	}
	if o.IDClaim == "" {
		bad("-oidc-id-claim (MNEME_OIDC_ID_CLAIM): required")
	}
	switch {
	case o.Kind != "" && !identity.KnownKind(o.Kind):
		bad("-oidc-kind (MNEME_OIDC_KIND): %q is not agent, user, admin or analyst", o.Kind)
	case o.Kind == "" && o.KindClaim == "":
		bad("-oidc-kind-claim (MNEME_OIDC_KIND_CLAIM): required unless -oidc-kind fixes the kind")
	}
	if len(o.Algorithms) == 0 {
		bad("-oidc-algorithms (MNEME_OIDC_ALGORITHMS): at least one, e.g. RS256")
	}
	for _, a := range o.Algorithms {
		if !identity.AsymmetricAlgorithm(a) {
			bad("-oidc-algorithms (MNEME_OIDC_ALGORITHMS): %q is not accepted; use RS*, PS*, ES* or EdDSA (never none or HS*)", a)
		}
	}
	if o.Skew < 0 || o.Skew > 5*time.Minute {
		bad("-oidc-skew (MNEME_OIDC_SKEW): %s is outside 0..5m", o.Skew)
	}
	if o.JWKSRefresh < 10*time.Second {
		bad("-oidc-jwks-refresh (MNEME_OIDC_JWKS_REFRESH): %s is shorter than 10s", o.JWKSRefresh)
	}
	return errs
}

func (l LimitsConfig) validate() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if l.Rate < 0 || math.IsNaN(l.Rate) || math.IsInf(l.Rate, 0) {
		bad("-rate-limit (MNEME_RATE_LIMIT): %v must be a number of requests per second, 0 or more", l.Rate)
	}
	if l.Burst < 0 {
		bad("-rate-burst (MNEME_RATE_BURST): %d must not be negative", l.Burst)
	}
	if l.QuotaMemories < 0 {
		bad("-quota-memories (MNEME_QUOTA_MEMORIES): %d must not be negative", l.QuotaMemories)
	}
	if l.QuotaChars < 0 {
		bad("-quota-chars (MNEME_QUOTA_CHARS): %d must not be negative", l.QuotaChars)
	}
	if l.QuotaRefresh < 100*time.Millisecond {
		bad("-quota-refresh (MNEME_QUOTA_REFRESH): %s is shorter than 100ms", l.QuotaRefresh)
	}
	return errs
}

// limiter returns the rate limiter the configuration asks for, or nil.
func (l LimitsConfig) limiter(rdb redis.Scripter) *ratelimit.Limiter {
	opts := ratelimit.Options{Default: ratelimit.Rate{PerSecond: l.Rate, Burst: burstOf(l.Rate, l.Burst)}, Kinds: map[string]ratelimit.Rate{}}
	on := opts.Default.On()
	for kind, r := range l.KindRates {
		opts.Kinds[kind] = ratelimit.Rate{PerSecond: r.PerSecond, Burst: burstOf(r.PerSecond, r.Burst)}
		on = on || r.On()
	}
	if !on {
		return nil
	}
	return ratelimit.New(rdb, opts)
}

// burstOf is a bucket's size: as set, or one second's worth, at least 1.
func burstOf(rate float64, burst int) int {
	if burst > 0 {
		return burst
	}
	return max(1, int(math.Ceil(rate)))
}

// quota returns the quota tracker the configuration asks for, or nil.
func (l LimitsConfig) quota(usage quota.Usage, log *slog.Logger) *quota.Tracker {
	limits := quota.Limits{Memories: l.QuotaMemories, Chars: l.QuotaChars}
	if !limits.On() {
		return nil
	}
	return quota.New(quota.Options{Usage: usage, Limits: limits, Refresh: l.QuotaRefresh, Logger: log})
}

// jwtVerifier returns the token verifier the configuration asks for, or
// nil when tokens are off.
func (o OIDCConfig) jwtVerifier(log *slog.Logger) (*identity.JWTVerifier, error) {
	if !o.On() {
		return nil, nil
	}
	claims := identity.ClaimMapping{Tenant: o.TenantClaim, Kind: o.KindClaim, FixedKind: o.Kind, ID: o.IDClaim, Roles: o.RolesClaim}
	if o.Kind != "" {
		claims.Kind = "" // a fixed kind wins over the claim
	}
	return identity.NewJWTVerifier(identity.JWTConfig{
		Issuer: o.Issuer, JWKSURL: o.JWKSURL, Audience: o.Audience, Claims: claims,
		Algorithms: o.Algorithms, Skew: o.Skew, Refresh: o.JWKSRefresh, Logger: log,
	})
}

// closeTokens stops the token verifier's key cache, if there is one.
func (a *App) closeTokens(ctx context.Context) {
	if a.Tokens != nil {
		if err := a.Tokens.Close(ctx); err != nil {
			a.log.WarnContext(ctx, "jwks cache did not stop", "err", err)
		}
	}
}

// stringList is a comma-separated list.
type stringList []string

func (l *stringList) String() string { return strings.Join(*l, ",") }
func (l *stringList) Set(s string) error {
	*l = nil
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			*l = append(*l, f)
		}
	}
	return nil
}

// kindRates is "agent=200:400,user=5": a rate per second and an optional
// burst per principal kind.
type kindRates map[string]ratelimit.Rate

func (k *kindRates) String() string {
	var parts []string
	for kind, r := range *k {
		parts = append(parts, kind+"="+strconv.FormatFloat(r.PerSecond, 'g', -1, 64)+":"+strconv.Itoa(r.Burst))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

func (k *kindRates) Set(s string) error {
	out := kindRates{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		kind, spec, ok := strings.Cut(part, "=")
		kind = strings.TrimSpace(kind)
		if !ok || !identity.KnownKind(kind) {
			return fmt.Errorf("%q is not kind=rate[:burst] with kind agent, user, admin or analyst", part)
		}
		rate, burst, hasBurst := strings.Cut(spec, ":")
		r, err := strconv.ParseFloat(strings.TrimSpace(rate), 64)
		if err != nil || r < 0 || math.IsInf(r, 0) || math.IsNaN(r) {
			return fmt.Errorf("%q: the rate must be a number of requests per second, 0 or more", part)
		}
		b := 0
		if hasBurst {
			if b, err = strconv.Atoi(strings.TrimSpace(burst)); err != nil || b < 0 {
				return fmt.Errorf("%q: the burst must be a whole number, 0 or more", part)
			}
		}
		out[kind] = ratelimit.Rate{PerSecond: r, Burst: b}
	}
	*k = out
	return nil
}
