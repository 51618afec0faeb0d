package memory

import (
	"errors"
	"fmt"
	"strings"
)

// Domain errors. Handlers map them to HTTP statuses in one place.
var (
	// ErrNotFound means the memory does not exist or the caller may not see it;
	// the two are deliberately indistinguishable.
	ErrNotFound = errors.New("not found")
	// ErrForbidden means the caller may not take this action.
	ErrForbidden = errors.New("forbidden")
	// ErrConflict means a precondition such as If-Match did not hold.
	ErrConflict = errors.New("conflict")
	// ErrUnavailable means a backing store cannot be reached.
	ErrUnavailable = errors.New("store unavailable")
	// ErrUnauthenticated means no valid API key was given.
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrNotConfigured means the deployment was built without a part this
	// request needs; it is the same answer whatever the part.
	ErrNotConfigured = errors.New("not configured")
	// ErrSessionFull means a session reached its cap of turns or bytes;
	// close it (which keeps what it held) and open a new one.
	ErrSessionFull = errors.New("session full")
	// ErrSessionClosing means the session is being turned into memories
	// and takes no more turns.
	ErrSessionClosing = errors.New("session closing")
	// ErrSessionTaken means the session id belongs to another user or
	// principal, open or closed: a session's turns become memories about
	// its user written as its opener, so only the opener and that user add
	// to them, and no other user's memories join them under its id.
	ErrSessionTaken = errors.New("session belongs to another user or principal")
	// ErrIdempotencyKeyReused means a write's idempotency key came before
	// with another request (another body, kind of job or sender): replaying
	// the first answer would silently drop this one.
	ErrIdempotencyKeyReused = errors.New("idempotency key reused for a different request")
)

// InvalidError is bad input from a client; Field names what was wrong.
type InvalidError struct {
	Field, Reason string
}

func (e *InvalidError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return e.Field + ": " + e.Reason
}

// ForbiddenFieldError refuses a write whose Field names a principal other
// than the caller: another tenant than its key's, another author than
// itself. It is ErrForbidden, with a message that says which field.
type ForbiddenFieldError struct{ InvalidError }

func (e *ForbiddenFieldError) Unwrap() error { return ErrForbidden }

// ForbiddenAuthor refuses a write whose agent_id names another author.
func ForbiddenAuthor() error {
	return &ForbiddenFieldError{InvalidError{"agent_id", "names another author than the caller: an agent writes as itself, a user as user:<their id>; leave agent_id out"}}
}

// Invalid returns an *InvalidError.
func Invalid(field, reason string) error { return &InvalidError{Field: field, Reason: reason} }

// GuardError is a write refused because its content holds values the guard
// policy rejects. It names the kinds found, never the values.
type GuardError struct {
	// Field is the rejected field, e.g. "content" or "memories[2].content".
	Field string
	Kinds []string
}

func (e *GuardError) Error() string {
	return fmt.Sprintf("%s holds %s, which this tenant's guard policy does not let be remembered", e.Field, strings.Join(e.Kinds, ", "))
}

// prefixField names the batch item an error is about.
func prefixField(err error, i, n int) error {
	var inv *InvalidError
	if n > 1 && errors.As(err, &inv) {
		return Invalid(fmt.Sprintf("memories[%d].%s", i, inv.Field), inv.Reason)
	}
	return err
}
