package web

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"time"
)

// Cookie names. The session cookie holds the API key sealed (AES-GCM) under
// a key only the servers know, with its expiry and CSRF token, so that any
// replica can read it and a revoked API key ends the session at once: every
// request authenticates the key again.
const (
	sessionCookie = "mneme_panel"
	preCookie     = "mneme_panel_signin"
)

// session is what the sealed cookie carries.
type session struct {
	Key     string    `json:"k"`
	CSRF    string    `json:"c"`
	Expires time.Time `json:"e"`
}

// sealer seals and opens session cookies.
type sealer struct{ aead cipher.AEAD }

func newSealer(secret []byte) (sealer, error) {
	if len(secret) < 16 {
		return sealer{}, errors.New("web: Secret must be at least 16 bytes")
	}
	// A key of the panel's own, so that the secret is never used twice.
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte("mneme panel session v1"))
	block, err := aes.NewCipher(mac.Sum(nil))
	if err != nil {
		return sealer{}, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return sealer{}, err
	}
	return sealer{aead}, nil
}

func (s sealer) seal(v session) (string, error) {
	plain, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(s.aead.Seal(nonce, nonce, plain, []byte(sessionCookie))), nil
}

var errNoSession = errors.New("no session")

func (s sealer) open(v string, now time.Time) (session, error) {
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(raw) < s.aead.NonceSize() {
		return session{}, errNoSession
	}
	n := s.aead.NonceSize()
	plain, err := s.aead.Open(nil, raw[:n], raw[n:], []byte(sessionCookie))
	if err != nil {
		return session{}, errNoSession
	}
	var out session
	if err := json.Unmarshal(plain, &out); err != nil || !now.Before(out.Expires) || out.CSRF == "" {
		return session{}, errNoSession
	}
	return out, nil
}

// token returns a fresh random token for CSRF protection.
func token() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// sameToken compares tokens in constant time.
func sameToken(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// cookie builds one of the panel's cookies: HttpOnly, SameSite=Strict,
// scoped to /panel, Secure behind TLS.
func cookie(r *http.Request, name, value string, maxAge time.Duration) *http.Cookie {
	c := &http.Cookie{
		Name: name, Value: value, Path: "/panel", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https",
	}
	if maxAge > 0 {
		c.MaxAge = int(maxAge / time.Second)
	} else {
		c.MaxAge = -1
	}
	return c
}
