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
	// ErrUnknownRole: a principal was given a role its kind does not hold
	// (KindRoles), such as an analyst a role the policy gives nothing to
	// read, or an agent the admin role.
	ErrUnknownRole = errors.New("unknown role")
	// ErrKeySecret: the server secret keys are hashed with is missing or short.
	ErrKeySecret = fmt.Errorf("MNEME_KEY_SECRET must be set to at least %d bytes (e.g. `openssl rand -hex 32`)", MinSecretLen)
)

// auditReason is the code of a failed act in the audit trail: the one the
// API answers it with, where memory.AuditReason would say only "conflict".
func auditReason(err error) string {
	switch {
	case errors.Is(err, ErrTenantExists):
		return "tenant_exists"
	case errors.Is(err, ErrPrincipalExists):
		return "principal_exists"
	case errors.Is(err, ErrKeyInactive):
		return "key_inactive"
	case errors.Is(err, ErrNoOwner):
		return "unknown_principal"
	case errors.Is(err, ErrUnknownRole):
		return "unknown_role"
	}
	return memory.AuditReason(err)
}
