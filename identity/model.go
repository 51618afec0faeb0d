package identity

import (
	"context"
	"time"

	"mneme/memory"
)

// Tenant is one customer of the deployment; every node carries its name.
type Tenant struct {
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// Principal is a registered agent, user, analyst or admin of a tenant.
type Principal struct {
	Kind  string   `json:"kind"`
	ID    string   `json:"id"`
	Team  string   `json:"team,omitempty"`  // agents only
	Roles []string `json:"roles,omitempty"` // analysts (and admins) only
	// Name is what people call a user ("Ethan Zhou"); recall takes it, or
	// a word of it, in a question as naming the user. Users only.
	Name      string    `json:"name,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// NewPrincipal is what an admin sends to register a principal.
type NewPrincipal struct {
	Kind  string   `json:"kind"`
	ID    string   `json:"id"`
	Team  string   `json:"team,omitempty"`
	Roles []string `json:"roles,omitempty"`
	Name  string   `json:"name,omitempty"`
}

// PrincipalChange is what an admin sends to change a principal: each field
// present replaces the stored one, and "" or [] clears it. A principal's
// kind and id never change.
type PrincipalChange struct {
	Name  *string   `json:"name,omitempty"`
	Team  *string   `json:"team,omitempty"`
	Roles *[]string `json:"roles,omitempty"`
}

// Key statuses, as listings show them.
const (
	StatusActive   = "active"
	StatusRotating = "rotating" // rotated; works until GraceUntil
	StatusRotated  = "rotated"  // rotated and past its grace period
	StatusExpired  = "expired"
	StatusRevoked  = "revoked"
)

// Key is an API key's metadata. The secret is never stored: Hash is its
// keyed hash, and Prefix the part listings show.
type Key struct {
	ID        string `json:"id"`
	Prefix    string `json:"prefix"`
	OwnerKind string `json:"owner_kind"`
	OwnerID   string `json:"owner_id"`
	// Status is computed when the key is read (StatusAt).
	Status     string     `json:"status"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	// GraceUntil is when a rotated key stops working; RotatedTo names the
	// key that replaced it.
	GraceUntil *time.Time `json:"grace_until,omitempty"`
	RotatedTo  string     `json:"rotated_to,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
	Hash       string     `json:"-"`
}

// Owner names the key's principal as "kind:id".
func (k Key) Owner() string { return k.OwnerKind + ":" + k.OwnerID }

// StatusAt says what the key is at now. Expiry and the end of a rotation's
// grace are times, not events, so they are checked here on every request
// rather than by anything that must run at that moment.
func (k Key) StatusAt(now time.Time) string {
	switch {
	case k.RevokedAt != nil:
		return StatusRevoked
	case k.ExpiresAt != nil && !now.Before(*k.ExpiresAt):
		return StatusExpired
	case k.GraceUntil != nil && !now.Before(*k.GraceUntil):
		return StatusRotated
	case k.GraceUntil != nil:
		return StatusRotating
	default:
		return StatusActive
	}
}

// worksAt reports whether the key authenticates at now.
func (k Key) worksAt(now time.Time) bool {
	s := k.StatusAt(now)
	return s == StatusActive || s == StatusRotating
}

// IssuedKey is a key as it is created: the only time its secret is shown.
type IssuedKey struct {
	Key    Key    `json:"key"`
	Secret string `json:"secret"`
}

// NewKey is what an admin sends to create a key for a principal.
type NewKey struct {
	OwnerKind string     `json:"owner_kind"`
	OwnerID   string     `json:"owner_id"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// KeyChange sets or clears a key's expiry.
type KeyChange struct {
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
	NoExpiry  bool       `json:"no_expiry,omitempty"`
}

// Rotation asks for a key's successor; the old key keeps working for
// GraceSeconds (nil: DefaultGrace; 0: stops at once).
type Rotation struct {
	GraceSeconds *int64 `json:"grace_seconds,omitempty"`
}

// Credential is what a key hash resolves to: the key and the principal it
// stands for.
type Credential struct {
	Key       Key
	Principal memory.Principal
}

// Store keeps tenants, principals and keys. keystore.Store implements it;
// every method is scoped to one tenant.
type Store interface {
	// CreateTenant stores the tenant, its first admin and that admin's key
	// in one step, or returns ErrTenantExists.
	CreateTenant(ctx context.Context, t Tenant, admin Principal, k Key) error
	// CreatePrincipal stores p, or returns ErrPrincipalExists.
	CreatePrincipal(ctx context.Context, tenant string, p Principal) error
	// EnsurePrincipal stores p or updates the one of its kind and id.
	EnsurePrincipal(ctx context.Context, tenant string, p Principal) error
	Principals(ctx context.Context, tenant string) ([]Principal, error)
	// Principal returns one principal or memory.ErrNotFound.
	Principal(ctx context.Context, tenant, kind, id string) (Principal, error)
	// ChangePrincipal applies c to a principal (a user's name to the user's
	// node too, an agent's team to the agent's node) and returns it as it
	// now is, or memory.ErrNotFound.
	ChangePrincipal(ctx context.Context, tenant, kind, id string, c PrincipalChange) (Principal, error)
	// DeletePrincipal removes a principal with its keys and says how many
	// keys went; memory.ErrNotFound when there is no such principal.
	DeletePrincipal(ctx context.Context, tenant, kind, id string) (int64, error)
	// CreateKey stores k for its owner, or returns ErrNoOwner.
	CreateKey(ctx context.Context, tenant string, k Key) error
	// PutKey stores k under its hash, replacing a key with the same hash;
	// for the seed.
	PutKey(ctx context.Context, tenant string, k Key) error
	// KeyByHash returns the key stored under hash with its principal, or
	// memory.ErrNotFound.
	KeyByHash(ctx context.Context, tenant, hash string) (Credential, error)
	Keys(ctx context.Context, tenant string) ([]Key, error)
	// Key returns one key or memory.ErrNotFound.
	Key(ctx context.Context, tenant, id string) (Key, error)
	// SetKeyExpiry sets (nil: clears) a key's expiry.
	SetKeyExpiry(ctx context.Context, tenant, id string, at *time.Time) (Key, error)
	// RevokeKey marks a key revoked at at; revoking twice keeps the first time.
	RevokeKey(ctx context.Context, tenant, id string, at time.Time) (Key, error)
	// RotateKey stores next and ends the key id's life at graceUntil, in
	// one step.
	RotateKey(ctx context.Context, tenant, id string, graceUntil time.Time, next Key) error
	// TouchKeys records that the keys were used at at.
	TouchKeys(ctx context.Context, tenant string, ids []string, at time.Time) error
	// DeleteUser removes a user's registration and keys, and says how many
	// keys went.
	DeleteUser(ctx context.Context, tenant, userID string) (int64, error)
}

// Epochs counts changes to each tenant's keys where every replica sees
// them. A cached key older than its tenant's epoch is looked up again.
type Epochs interface {
	Epoch(ctx context.Context, tenant string) (int64, error)
	Bump(ctx context.Context, tenant string) error
}

// Authorizer decides whether a principal may manage its tenant.
type Authorizer interface {
	Decide(ctx context.Context, p memory.Principal, action string, r memory.Resource, now time.Time) (memory.Decision, error)
}
