package memory

import (
	"crypto/rand"
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

// ValidName and ValidTenant are the id rules of the domain, for the
// services beside memory too: policyadmin names agents in grants, identity
// reads tenants from API keys.

// ValidTenant reports whether s is a usable tenant name: a valid name
// without '_', which separates the tenant from the secret in API keys.
func ValidTenant(s string) bool { return ValidName(s) && !strings.Contains(s, "_") }

// validAuthor reports whether s can be a memory's author: an agent id, or
// "user:" and a user id for what users write about themselves.
func validAuthor(s string) bool { return ValidName(strings.TrimPrefix(s, "user:")) }

// ValidName reports whether s is a usable user, agent or session id: 1–64
// characters of letters, digits, '-', '_', '.', ':' or '@', not dots alone
// ("." and ".." in a path are not names).
func ValidName(s string) bool {
	if len(s) > 64 || strings.Trim(s, ".") == "" {
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
