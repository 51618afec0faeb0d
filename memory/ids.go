package memory

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// NewID returns a random identifier with the given prefix, e.g. "mem_3f9a…".
func NewID(prefix string) string {
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand never fails on supported platforms; a zero id would be
		// worse than stopping.
		panic("memory: crypto/rand failed: " + err.Error())
	}
	return prefix + "_" + hex.EncodeToString(b[:])
}

// APIKeyPrefix starts every API key. Keys look like mn_<tenant>_<secret>.
const APIKeyPrefix = "mn_"

// ParseAPIKey splits a key into its tenant and the hash under which it is
// stored. Keys are long random secrets, so a plain SHA-256 suffices: there is
// nothing to brute-force that a slow hash would protect.
func ParseAPIKey(key string) (tenant, hash string, err error) {
	rest, ok := strings.CutPrefix(key, APIKeyPrefix)
	if !ok {
		return "", "", ErrUnauthenticated
	}
	tenant, secret, ok := strings.Cut(rest, "_")
	if !ok || !validTenant(tenant) || len(secret) < 8 {
		return "", "", ErrUnauthenticated
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
	return APIKeyPrefix + tenant + "_" + strings.TrimPrefix(NewID("k"), "k_")
}

// validTenant reports whether s is a usable tenant name: a valid name
// without '_', which separates the tenant from the secret in API keys.
func validTenant(s string) bool {
	return validName(s) && !strings.Contains(s, "_")
}

// validAuthor reports whether s can be a memory's author: an agent id, or
// "user:" and a user id for what users write about themselves.
func validAuthor(s string) bool {
	if id, ok := strings.CutPrefix(s, "user:"); ok {
		return validName(id)
	}
	return validName(s)
}

// validName reports whether s is a usable user, agent or session id: 1–64
// characters of letters, digits, '-', '_', '.', ':' or '@'.
func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case r == '-', r == '_', r == '.', r == ':', r == '@':
		default:
			return false
		}
	}
	return true
}
