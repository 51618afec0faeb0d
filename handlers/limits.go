package handlers

import (
	"context"

	"github.com/gin-gonic/gin"

	"mneme/identity"
	"mneme/memory"
)

// TokenVerifier turns a JWT bearer token into the principal it stands for;
// identity.JWTVerifier implements it.
type TokenVerifier interface {
	Verify(ctx context.Context, token string) (memory.Principal, error)
}

// RateLimiter takes one request from a caller's allowance: nil to go on, an
// error with RetryAfterSeconds to refuse (ratelimit.LimitedError);
// ratelimit.Limiter implements it.
type RateLimiter interface {
	Allow(ctx context.Context, tenant, kind, caller string) error
}

// principalFor resolves a bearer credential by its shape: a JWT goes to the
// token verifier when one is configured, anything else is an API key.
func (a *api) principalFor(ctx context.Context, credential string) (memory.Principal, error) {
	if a.tokens != nil && identity.LooksLikeJWT(credential) {
		return a.tokens.Verify(ctx, credential)
	}
	return a.ident.Authenticate(ctx, credential)
}

// rateLimit refuses a caller past its rate before any handler runs, so a
// refused request does nothing. It runs after authenticate: the bucket is
// the caller's within its tenant.
func (a *api) rateLimit(c *gin.Context) {
	if a.limiter == nil {
		c.Next()
		return
	}
	p := principalOf(c)
	if err := a.limiter.Allow(c.Request.Context(), p.Tenant, p.Kind, callerOf(c, p)); err != nil {
		a.fail(c, err)
		return
	}
	c.Next()
}

// callerOf names a request's bucket (identity.Bucket).
func callerOf(c *gin.Context, p memory.Principal) string {
	return identity.Bucket(credentialOf(c), p)
}
