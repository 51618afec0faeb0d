package app

import (
	"net/http"
	"time"

	"mneme/writefence"
)

// beginWrites marks every request's context with when the request arrived
// (writefence.BeginWrite): whatever it writes began then, before it read
// anything it stores. A user's erase that begins while the request runs (a
// slow embedder, a long extraction) refuses its writes about the user for
// good (writefence.ErrUserErased), rather than let them store, after the
// erase, what was sent before it.
func beginWrites(next http.Handler, now func() time.Time) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(writefence.BeginWrite(r.Context(), now())))
	})
}
