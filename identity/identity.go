// Package identity says who a caller is: it turns an API key into the
// principal it stands for, and owns the key format (NewAPIKey, HashAPIKey,
// ParseAPIKey). Tenants, principals and their keys are managed here.
package identity

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

	"mneme/memory"
)

// KeyStore resolves stored API keys. graph.Store implements it.
type KeyStore interface {
	// LookupAPIKey returns the principal of the key stored under hash in
	// tenant, or memory.ErrNotFound.
	LookupAPIKey(ctx context.Context, tenant, hash string) (memory.Principal, error)
}

// Options configures a Service. Every part is required.
type Options struct {
	Keys KeyStore
}

// Service authenticates callers.
type Service struct {
	keys KeyStore
}

// New returns a Service, or an error naming the part opts lacks.
func New(opts Options) (*Service, error) {
	if opts.Keys == nil {
		return nil, errors.New("identity: Keys is required")
	}
	return &Service{keys: opts.Keys}, nil
}

// Authenticate resolves an API key to its principal. A malformed or unknown
// key is memory.ErrUnauthenticated; a store that cannot answer is its own
// error, so that an outage never reads as a bad key.
func (s *Service) Authenticate(ctx context.Context, key string) (memory.Principal, error) {
	tenant, hash, err := ParseAPIKey(key)
	if err != nil {
		return memory.Principal{}, err
	}
	p, err := s.keys.LookupAPIKey(ctx, tenant, hash)
	if errors.Is(err, memory.ErrNotFound) {
		return memory.Principal{}, memory.ErrUnauthenticated
	}
	if err != nil {
		return memory.Principal{}, err
	}
	return p, nil
}

// APIKeyPrefix starts every API key. Keys look like mn_<tenant>_<secret>.
const APIKeyPrefix = "mn_"

// ParseAPIKey splits a key into its tenant and the hash under which it is
// stored. Keys are long random secrets, so a plain SHA-256 suffices: there is
// nothing to brute-force that a slow hash would protect.
func ParseAPIKey(key string) (tenant, hash string, err error) {
	rest, ok := strings.CutPrefix(key, APIKeyPrefix)
	if !ok {
		return "", "", memory.ErrUnauthenticated
	}
	tenant, secret, ok := strings.Cut(rest, "_")
	if !ok || !memory.ValidTenant(tenant) || len(secret) < 8 {
		return "", "", memory.ErrUnauthenticated
	}
	return tenant, HashAPIKey(key), nil
}

// HashAPIKey returns the stored form of an API key.
func HashAPIKey(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

// NewAPIKey returns a fresh key for tenant.
func NewAPIKey(tenant string) string {
	return APIKeyPrefix + tenant + "_" + strings.TrimPrefix(memory.NewID("k"), "k_")
}
