package keystore

import (
	"context"
	"errors"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"mneme/graph/neo"
	"mneme/identity"
	"mneme/memory"
	"mneme/userids"
)

var _ identity.Store = (*Store)(nil)

// Store keeps tenants, principals and API keys in Neo4j. It is safe for
// concurrent use.
type Store struct {
	tx *neo.Runner
}

// New returns a Store that runs its queries through tx, usually the
// graph store's (graph.Store.Runner).
func New(tx *neo.Runner) *Store {
	return &Store{tx: tx}
}

func (s *Store) read(ctx context.Context, work func(tx neo4j.ManagedTransaction) error) error {
	return s.tx.Read(ctx, work)
}

func (s *Store) write(ctx context.Context, work func(tx neo4j.ManagedTransaction) error) error {
	return s.tx.Write(ctx, work)
}

// Short local names for package neo's readers.
var (
	count    = neo.Count
	exec     = neo.Exec
	str      = neo.Str
	strs     = neo.Strs
	timeOf   = neo.TimeOf
	integer  = neo.Integer
	strOrNil = neo.StrOrNil
)

// listOrNil stores an empty list as null: both mean "none" to readers.
func listOrNil(xs []string) any {
	if len(xs) == 0 {
		return nil
	}
	return xs
}

// UserName returns the name the user is known by (usernames.Source), ""
// when the user has none or does not exist. Principal creation keeps it on
// the user's node, which memories link to and an erase deletes.
func (s *Store) UserName(ctx context.Context, tenant, id string) (string, error) {
	var name string
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		name, _, err = neo.ReadOne(ctx, tx, cypherUserName, map[string]any{"tenant": tenant, "id": id}, neo.Column("name", str))
		return err
	})
	return name, err
}

// UserNames returns up to limit of the tenant's users that have a name, id
// to name (usernames.Source).
func (s *Store) UserNames(ctx context.Context, tenant string, limit int) (map[string]string, error) {
	var rows [][2]string
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		rows, err = neo.ReadAll(ctx, tx, cypherUserNames, map[string]any{"tenant": tenant, "limit": limit}, func(r *neo4j.Record) ([2]string, error) {
			id, _ := r.Get("id")
			name, _ := r.Get("name")
			return [2]string{str(id), str(name)}, nil
		})
		return err
	})
	users := make(map[string]string, len(rows))
	for _, r := range rows {
		users[r[0]] = r[1]
	}
	return users, err
}

// CreateTenant stores a tenant, its first admin and the admin's key in one
// transaction; a tenant that exists, or has principals, is
// identity.ErrTenantExists.
func (s *Store) CreateTenant(ctx context.Context, t identity.Tenant, admin identity.Principal, k identity.Key) error {
	if t.Name == "" {
		return memory.Invalid("tenant", "is required")
	}
	err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		n, err := count(ctx, tx, cypherTenantInUse, map[string]any{"tenant": t.Name})
		if err != nil {
			return err
		}
		if n > 0 {
			return identity.ErrTenantExists
		}
		if err := exec(ctx, tx, cypherCreateTenant, map[string]any{"tenant": t.Name, "created_at": t.CreatedAt.UTC()}); err != nil {
			return err
		}
		if err := exec(ctx, tx, cypherCreatePrincipal, principalParams(t.Name, admin)); err != nil {
			return err
		}
		return exec(ctx, tx, cypherPutKey, keyParams(t.Name, k))
	})
	if errors.Is(err, memory.ErrConflict) {
		return identity.ErrTenantExists
	}
	return err
}

func principalParams(tenant string, p identity.Principal) map[string]any {
	return map[string]any{
		"tenant": tenant, "kind": p.Kind, "id": p.ID, "id_fold": userids.Fold(p.ID), "team": strOrNil(p.Team), "roles": listOrNil(p.Roles), "name": strOrNil(p.Name),
		"created_at": p.CreatedAt.UTC(),
	}
}

// CreatePrincipal registers p, or returns identity.ErrPrincipalExists.
func (s *Store) CreatePrincipal(ctx context.Context, tenant string, p identity.Principal) error {
	err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, cypherCreatePrincipal, principalParams(tenant, p))
	})
	if errors.Is(err, memory.ErrConflict) {
		return identity.ErrPrincipalExists
	}
	return err
}

// EnsurePrincipal registers p, or updates the team and roles of the
// principal of its kind and id.
func (s *Store) EnsurePrincipal(ctx context.Context, tenant string, p identity.Principal) error {
	return s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, cypherEnsurePrincipal, principalParams(tenant, p))
	})
}

// Principals returns the tenant's principals by kind and id.
func (s *Store) Principals(ctx context.Context, tenant string) ([]identity.Principal, error) {
	var out []identity.Principal
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		out, err = neo.ReadAll(ctx, tx, cypherListPrincipals, map[string]any{"tenant": tenant}, neo.Column("principal", decodePrincipal))
		return err
	})
	return out, err
}

// Principal returns one principal, or memory.ErrNotFound.
func (s *Store) Principal(ctx context.Context, tenant, kind, id string) (identity.Principal, error) {
	return one(ctx, s.read, cypherGetPrincipal, map[string]any{"tenant": tenant, "kind": kind, "id": id}, neo.Column("principal", decodePrincipal))
}

// AgentExists reports whether the tenant has the agent principal id
// (policyadmin.Directory: a grant's grantee must be one).
func (s *Store) AgentExists(ctx context.Context, tenant, id string) (bool, error) {
	_, err := s.Principal(ctx, tenant, memory.KindAgent, id)
	if errors.Is(err, memory.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// TeamHasAgent reports whether an agent of the tenant is in team
// (documents.Teams: knowledge for a team no agent is in reaches no one).
func (s *Store) TeamHasAgent(ctx context.Context, tenant, team string) (bool, error) {
	_, err := one(ctx, s.read, cypherTeamAgent, map[string]any{"tenant": tenant, "team": team}, neo.Column("id", func(any) bool { return true }))
	if errors.Is(err, memory.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Admins returns up to limit admin principals of the tenant, by id
// (policyadmin.Directory: a policy must let one of them manage the tenant).
func (s *Store) Admins(ctx context.Context, tenant string, limit int) ([]memory.Principal, error) {
	var out []memory.Principal
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		ps, err := neo.ReadAll(ctx, tx, cypherListAdmins, map[string]any{"tenant": tenant, "limit": limit}, neo.Column("principal", decodePrincipal))
		for _, p := range ps {
			out = append(out, memory.Principal{Tenant: tenant, Kind: p.Kind, ID: p.ID, Roles: p.Roles})
		}
		return err
	})
	return out, err
}

// ChangePrincipal sets the fields c names on a principal ("" and [] clear
// them) and returns it as it now is, or memory.ErrNotFound.
func (s *Store) ChangePrincipal(ctx context.Context, tenant, kind, id string, c identity.PrincipalChange) (identity.Principal, error) {
	params := map[string]any{
		"tenant": tenant, "kind": kind, "id": id,
		"set_name": c.Name != nil, "name": nil, "set_team": c.Team != nil, "team": nil, "set_roles": c.Roles != nil, "roles": nil,
	}
	if c.Name != nil {
		params["name"] = strOrNil(*c.Name)
	}
	if c.Team != nil {
		params["team"] = strOrNil(*c.Team)
	}
	if c.Roles != nil {
		params["roles"] = listOrNil(*c.Roles)
	}
	return one(ctx, s.write, cypherChangePrincipal, params, neo.Column("principal", decodePrincipal))
}

// DeletePrincipal removes a principal with its keys, or returns
// memory.ErrNotFound.
func (s *Store) DeletePrincipal(ctx context.Context, tenant, kind, id string) (int64, error) {
	return one(ctx, s.write, cypherDeletePrincipal, map[string]any{"tenant": tenant, "kind": kind, "id": id}, neo.Column("keys", integer))
}

// DeleteUser removes a user's registration and keys.
func (s *Store) DeleteUser(ctx context.Context, tenant, userID string) (int64, error) {
	var n int64
	err := s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		n, _, err = neo.ReadOne(ctx, tx, cypherDeleteUser, map[string]any{"tenant": tenant, "id": userID}, neo.Column("keys", integer))
		return err
	})
	return n, err
}

func decodePrincipal(v any) identity.Principal {
	m, _ := v.(map[string]any)
	return identity.Principal{
		Kind: str(m["kind"]), ID: str(m["id"]), Team: str(m["team"]), Roles: strs(m["roles"]), Name: str(m["name"]),
		CreatedAt: timeOf(m["created_at"]),
	}
}

// keyParams are a key's parameters: its id and tenant, and the rest as props.
func keyParams(tenant string, k identity.Key) map[string]any {
	return map[string]any{
		"tenant": tenant, "id": k.ID, "kind": k.OwnerKind, "principal_id": k.OwnerID, "hash": k.Hash,
		"props": map[string]any{
			"hash": k.Hash, "prefix": k.Prefix, "kind": k.OwnerKind, "principal_id": k.OwnerID,
			"created_at": k.CreatedAt.UTC(), "expires_at": timePtrOrNil(k.ExpiresAt),
		},
	}
}

func timePtrOrNil(t *time.Time) any {
	if t == nil {
		return nil
	}
	return t.UTC()
}

func timePtr(v any) *time.Time {
	t := timeOf(v)
	if t.IsZero() {
		return nil
	}
	return &t
}

func decodeKey(v any) identity.Key {
	m, _ := v.(map[string]any)
	return identity.Key{
		ID: str(m["id"]), Prefix: str(m["prefix"]), OwnerKind: str(m["kind"]), OwnerID: str(m["principal_id"]),
		CreatedAt: timeOf(m["created_at"]), LastUsedAt: timePtr(m["last_used_at"]), ExpiresAt: timePtr(m["expires_at"]),
		GraceUntil: timePtr(m["grace_until"]), RotatedTo: str(m["rotated_to"]), RevokedAt: timePtr(m["revoked_at"]),
	}
}

// CreateKey stores k for its registered owner, or returns identity.ErrNoOwner.
func (s *Store) CreateKey(ctx context.Context, tenant string, k identity.Key) error {
	return s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		n, err := count(ctx, tx, cypherCreateKey, keyParams(tenant, k))
		if err == nil && n == 0 {
			err = identity.ErrNoOwner
		}
		return err
	})
}

// PutKey stores a seeded key under its hash, replacing the key with the same
// hash.
func (s *Store) PutKey(ctx context.Context, tenant string, k identity.Key) error {
	params := keyParams(tenant, k)
	return s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		if err := exec(ctx, tx, cypherDropReplacedKeys, params); err != nil {
			return err
		}
		return exec(ctx, tx, cypherPutKey, params)
	})
}

// KeyByHash returns the key stored under hash with the principal it stands
// for, or memory.ErrNotFound.
func (s *Store) KeyByHash(ctx context.Context, tenant, hash string) (identity.Credential, error) {
	return one(ctx, s.read, cypherKeyByHash, map[string]any{"tenant": tenant, "hash": hash}, func(r *neo4j.Record) (identity.Credential, error) {
		k, _ := r.Get("key")
		roles, _ := r.Get("roles")
		team, _ := r.Get("team")
		key := decodeKey(k)
		return identity.Credential{Key: key, Principal: memory.Principal{
			Tenant: tenant, Kind: key.OwnerKind, ID: key.OwnerID, Roles: strs(roles), Team: str(team),
		}}, nil
	})
}

// Keys returns the tenant's keys, oldest first, without their hashes.
func (s *Store) Keys(ctx context.Context, tenant string) ([]identity.Key, error) {
	var out []identity.Key
	err := s.read(ctx, func(tx neo4j.ManagedTransaction) error {
		var err error
		out, err = neo.ReadAll(ctx, tx, cypherListKeys, map[string]any{"tenant": tenant}, neo.Column("key", decodeKey))
		return err
	})
	return out, err
}

// Key returns one key, or memory.ErrNotFound.
func (s *Store) Key(ctx context.Context, tenant, id string) (identity.Key, error) {
	return one(ctx, s.read, cypherGetKey, map[string]any{"tenant": tenant, "id": id}, neo.Column("key", decodeKey))
}

// SetKeyExpiry sets a key's expiry; nil clears it.
func (s *Store) SetKeyExpiry(ctx context.Context, tenant, id string, at *time.Time) (identity.Key, error) {
	return one(ctx, s.write, cypherSetKeyExpiry, map[string]any{"tenant": tenant, "id": id, "at": timePtrOrNil(at)}, neo.Column("key", decodeKey))
}

// RevokeKey marks a key revoked; a second revoke keeps the first time.
func (s *Store) RevokeKey(ctx context.Context, tenant, id string, at time.Time) (identity.Key, error) {
	return one(ctx, s.write, cypherRevokeKey, map[string]any{"tenant": tenant, "id": id, "at": at.UTC()}, neo.Column("key", decodeKey))
}

// one runs cypher in a transaction of run (s.read or s.write) and decodes
// its one row, or returns memory.ErrNotFound when there is none.
func one[T any](ctx context.Context, run func(context.Context, func(neo4j.ManagedTransaction) error) error, cypher string, params map[string]any, decode func(*neo4j.Record) (T, error)) (T, error) {
	var v T
	err := run(ctx, func(tx neo4j.ManagedTransaction) error {
		var found bool
		var err error
		v, found, err = neo.ReadOne(ctx, tx, cypher, params, decode)
		if err == nil && !found {
			err = memory.ErrNotFound
		}
		return err
	})
	return v, err
}

// RotateKey stores next and ends key id's life at graceUntil, in one
// statement; a key that is missing, revoked or rotated already is
// memory.ErrNotFound or identity.ErrKeyInactive.
func (s *Store) RotateKey(ctx context.Context, tenant, id string, graceUntil time.Time, next identity.Key) error {
	params := keyParams(tenant, next)
	params["old"], params["grace_until"] = id, graceUntil.UTC()
	return s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		n, err := count(ctx, tx, cypherRotateKey, params)
		if err == nil && n == 0 {
			err = identity.ErrKeyInactive
		}
		return err
	})
}

// TouchKeys sets the keys' last use.
func (s *Store) TouchKeys(ctx context.Context, tenant string, ids []string, at time.Time) error {
	return s.write(ctx, func(tx neo4j.ManagedTransaction) error {
		return exec(ctx, tx, cypherTouchKeys, map[string]any{"tenant": tenant, "ids": ids, "at": at.UTC()})
	})
}
