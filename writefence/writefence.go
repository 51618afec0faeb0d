// Package writefence is what a user's erase fences off: the writes about
// the user that began before the erase did. A write marks its context with
// when it began (BeginWrite), before it reads anything it will store; the
// graph store compares that start, under the user's lock, with when the
// user's erase began, and refuses the write with ErrUserErased when the
// erase began after it, during the erase or after it. The graph's write
// path reads the mark (Began); the services stamp each memory with when
// they were called (memory.Memory.Began), and the earlier of the two
// counts.
package writefence

import (
	"context"
	"time"
)

// ErrUserErased refuses a write about a user whose erase began after the
// write did: the write was under way when the user asked to be forgotten,
// and nothing of it is stored, during the erase or after it. It never heals
// by retrying, so the graph store returns it as a conflict with what is
// stored (memory.ErrConflict) with a code of its own (CodeUserErased), not
// as unavailable: a client that retries 503s would otherwise write again,
// after the erase, what was sent before it. A write that began after the
// erase began is refused as unavailable while the erase runs, and is a new
// start once it is over.
var ErrUserErased error = userErasedError{}

// CodeUserErased is the stable code of ErrUserErased.
const CodeUserErased = "user_erased"

type userErasedError struct{}

func (userErasedError) Error() string {
	return "the user was erased after this write began: nothing of it was stored, since it holds what was sent before the erase; write it again only if it is to be remembered about the user from now on"
}

// RefusalCode is the stable code clients see (CodeUserErased).
func (userErasedError) RefusalCode() string { return CodeUserErased }

// beganKey marks a context with when the write it carries began.
type beganKey struct{}

// BeginWrite returns ctx marked as carrying a write that began at t, unless
// it carries one that began earlier. A caller that reads what it will write
// before it calls the services (a session's close reads its turns, an
// ingestion runs its extractor over the request's) marks ctx first, before
// that read.
//
// A user's erase refuses the writes about the user that began before it
// (ErrUserErased): one slowed between its start and its transaction (a
// slow embedder) must not store, after the erase, words that reached Mneme
// before it.
func BeginWrite(ctx context.Context, t time.Time) context.Context {
	if b, ok := Began(ctx); ok && !b.After(t) {
		return ctx
	}
	return context.WithValue(ctx, beganKey{}, t.UTC())
}

// Began is when the write ctx carries began (BeginWrite); false when ctx
// carries no mark.
func Began(ctx context.Context) (time.Time, bool) {
	b, ok := ctx.Value(beganKey{}).(time.Time)
	return b, ok
}
