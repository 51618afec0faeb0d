package identity

import (
	"errors"
	"fmt"

	"mneme/memory"
)

// Errors of identity administration. handlers maps each once; each also
// wraps the domain error it refines, so callers that only know memory's
// errors still read them right.
var (
	// ErrTenantExists: memctl tenant create named a tenant that exists.
	ErrTenantExists = fmt.Errorf("tenant exists: %w", memory.ErrConflict)
	// ErrPrincipalExists: a principal of that kind and id exists.
	ErrPrincipalExists = fmt.Errorf("principal exists: %w", memory.ErrConflict)
	// ErrKeyInactive: a revoked or expired key cannot be rotated or changed.
	ErrKeyInactive = fmt.Errorf("key is revoked or expired: %w", memory.ErrConflict)
	// ErrNoOwner: a key was asked for a principal that does not exist.
	ErrNoOwner = errors.New("no such principal to own the key")
	// ErrKeySecret: the server secret keys are hashed with is missing or short.
	ErrKeySecret = fmt.Errorf("MNEME_KEY_SECRET must be set to at least %d bytes (e.g. `openssl rand -hex 32`)", MinSecretLen)
)
