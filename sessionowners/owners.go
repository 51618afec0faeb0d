// Package sessionowners keeps a session id to one user, and the agent that
// opened it, for good: while the session is open (its working memory) and
// after it closed (its Session node in the graph), nobody writes another
// user's or another agent's memories under that id, so that one Session
// node never links two users' memories. The same user and agent keep using
// it; the user may speak in an agent's session about them, as in the open
// session itself.
package sessionowners

import (
	"context"
	"fmt"

	"mneme/memory"
)

// Owner is who a session id belongs to: the user its memories are about and
// the author they are written as (an agent's id, or "user:" and the user's
// id for a user's own session).
type Owner struct {
	UserID, AgentID string
}

// Ledger records owners on the graph's Session nodes; graph/sessions.Store
// implements it.
type Ledger interface {
	// SessionOwner returns the owner of the session id, found false when
	// the graph holds no session of that id.
	SessionOwner(ctx context.Context, tenant, id string) (o Owner, found bool, err error)
	// ClaimSession makes w the owner of the session id unless it has one,
	// and returns the owner it has.
	ClaimSession(ctx context.Context, tenant, id string, w Owner) (Owner, error)
}

// Open reads the owners of open sessions; session.Store implements it.
type Open interface {
	// Owner returns whom the open session id is about and who writes its
	// memories, found false when none of that id is open.
	Owner(ctx context.Context, tenant, id string) (userID, agentID string, found bool, err error)
}

// Guard decides who may use a session id. It is safe for concurrent use.
type Guard struct {
	ledger Ledger
	open   Open
}

// New returns a Guard over the graph's session owners and the open sessions.
func New(ledger Ledger, open Open) *Guard {
	return &Guard{ledger: ledger, open: open}
}

// Allows reports whether a session id owned by o may take memories about
// w.UserID written as w.AgentID: the same user, written by the same author
// or by the user themself.
func Allows(o, w Owner) bool {
	return o.UserID == w.UserID && (o.AgentID == w.AgentID || w.AgentID == "user:"+w.UserID)
}

// CheckSession refuses, with memory.ErrSessionTaken, a session id the
// graph records for another user than userID, or another author than
// agentID (unless it is the user's): a closed session's. The open sessions
// refuse the same as they append. It writes nothing.
func (g *Guard) CheckSession(ctx context.Context, tenant, id, userID, agentID string) error {
	o, found, err := g.ledger.SessionOwner(ctx, tenant, id)
	if err != nil || !found {
		return err
	}
	return refuse(id, o, Owner{UserID: userID, AgentID: agentID})
}

// Claim refuses, with memory.ErrSessionTaken, a write by w that would link
// memories to a session id of another user or author, open (by the open
// session's owner) or closed (by the graph's); otherwise it records w as
// the owner of an id the graph holds no owner for, so that the second of
// two writers about different users is refused.
func (g *Guard) Claim(ctx context.Context, tenant, id string, w Owner) error {
	o, found, err := g.openOwner(ctx, tenant, id)
	if err != nil {
		return err
	}
	if found {
		if err := refuse(id, o, w); err != nil {
			return err
		}
		// A user's write in an agent's session claims the id for the
		// session's owner, whose it stays.
		w = o
	}
	if o, err = g.ledger.ClaimSession(ctx, tenant, id, w); err != nil {
		return err
	}
	return refuse(id, o, w)
}

func (g *Guard) openOwner(ctx context.Context, tenant, id string) (Owner, bool, error) {
	user, agent, found, err := g.open.Owner(ctx, tenant, id)
	return Owner{UserID: user, AgentID: agent}, found, err
}

func refuse(id string, o, w Owner) error {
	if Allows(o, w) {
		return nil
	}
	if o.UserID != w.UserID {
		return fmt.Errorf("session %s is about another user: %w", id, memory.ErrSessionTaken)
	}
	return fmt.Errorf("session %s belongs to another author: %w", id, memory.ErrSessionTaken)
}
