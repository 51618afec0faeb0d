package identity

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"mneme/memory"
)

// APIKeyPrefix starts every API key. Keys look like mn_<tenant>_<secret>:
// the tenant travels in the key so that even the lookup is tenant-scoped.
const APIKeyPrefix = "mn_"

// MinSecretLen is the shortest server secret Hasher accepts: as long as
// the HMAC's output, so the secret is not the weak part.
const MinSecretLen = 32

// shownSecret is how many characters of the secret a key's listed prefix
// keeps: enough for a person to tell keys apart, too few to matter.
const shownSecret = 6

// ParseAPIKey returns the tenant a key belongs to, or
// memory.ErrUnauthenticated for anything that is not a well-formed key.
func ParseAPIKey(key string) (tenant string, err error) {
	rest, ok := strings.CutPrefix(key, APIKeyPrefix)
	if !ok {
		return "", memory.ErrUnauthenticated
	}
	tenant, secret, ok := strings.Cut(rest, "_")
	if !ok || !memory.ValidTenant(tenant) || len(secret) < 8 || len(key) > 256 {
		return "", memory.ErrUnauthenticated
	}
	return tenant, nil
}

// NewAPIKey returns a fresh key for tenant with 192 random bits.
func NewAPIKey(tenant string) string {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		// crypto/rand does not fail on supported platforms; a key from
		// anything weaker would be worse than stopping.
		panic("identity: crypto/rand failed: " + err.Error())
	}
	return APIKeyPrefix + tenant + "_" + hex.EncodeToString(b[:])
}

// KeyPrefix is the part of a key that listings show: the tenant and the
// first characters of the secret.
func KeyPrefix(key string) string {
	rest, _ := strings.CutPrefix(key, APIKeyPrefix)
	tenant, secret, _ := strings.Cut(rest, "_")
	return APIKeyPrefix + tenant + "_" + secret[:min(shownSecret, len(secret))]
}

// Hasher turns keys into the form they are stored and looked up under: an
// HMAC-SHA256 with a server secret. Keys are long random secrets, so a
// slow hash would buy nothing; the secret means a copy of the database
// alone cannot be used to test guessed keys.
type Hasher struct {
	secret []byte
}

// NewHasher returns a Hasher, or ErrKeySecret when secret is shorter than
// MinSecretLen bytes.
func NewHasher(secret string) (Hasher, error) {
	if len(secret) < MinSecretLen {
		return Hasher{}, ErrKeySecret
	}
	return Hasher{secret: []byte(secret)}, nil
}

// Hash returns the stored form of key, in lower-case hex.
func (h Hasher) Hash(key string) string {
	m := hmac.New(sha256.New, h.secret)
	m.Write([]byte(key))
	return hex.EncodeToString(m.Sum(nil))
}
