package memory

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"mneme/guard"
)

// Forgetter removes memories and users from the system of record for good.
// graph.Store implements it.
type Forgetter interface {
	// EraseMemories deletes the memories ids of tenant with their edges, leaves
	// a content-free tombstone for each, and removes the entities and
	// sessions no remaining memory links to. Missing ids are skipped. A newer
	// version of one of them that is neither among ids nor kept (written
	// since the caller read the chain) is ErrConflict.
	EraseMemories(ctx context.Context, tenant string, ids, kept []string, t Tombstone) (GraphErased, error)
	// EraseUser deletes every memory about userID (every version and status),
	// the entities and sessions that only they linked to, and the User node,
	// and leaves content-free tombstones. It may take several transactions:
	// from the first on, the user's memories are unreadable and writes
	// about the user fail with ErrUnavailable until the erase is over; an
	// erase cut short stays so, and a second call finishes it, counting
	// what was left. After a finished erase a second call finds nothing.
	// A write about the user that began (its ctx says when:
	// writefence.BeginWrite) before the erase began fails with
	// writefence.ErrUserErased, a conflict (ErrConflict), during the
	// erase or after it: what it holds was sent or read before the user
	// asked to be forgotten. The erase's start is kept in the user's
	// tombstone (t.UserRef, which must be UserTombstoneID's), where the
	// write's transaction reads it.
	EraseUser(ctx context.Context, tenant, userID string, t Tombstone) (GraphErased, error)
}

// Tombstone is what stays of an erased memory or user: who erased it, when
// and why, never what it said.
type Tombstone struct {
	At         time.Time
	By, Reason string
	// UserRef names an erased user in its tombstone, and the user an erased
	// memory was about in the memory's; see UserTombstoneID.
	UserRef string
	// Fence, on a user's erase, is the mark Fencer.FenceUser returned: the
	// store keeps the highest in the user's tombstone and, from then on,
	// refuses a memory whose QueueSeq is at or below it.
	Fence int64
}

// Fencer orders a user's erase against the user's queued writes.
// queue.Queue implements it.
//
// An erase removes the jobs still queued, but a worker may already hold one
// and commit it after the graph was cleaned. The fence closes that gap
// across replicas without waiting for workers: the queue stamps every job
// with a number from a sequence of its own (Job.Seq); FenceUser takes the
// next number and remembers it for the user, so workers drop the jobs at or
// below it; and the graph keeps it in the user's tombstone, where the write
// transaction of a queued memory checks it under the user's lock. A job
// accepted after the erase has a higher number: writing to an erased user
// again is a new start.
type Fencer interface {
	FenceUser(ctx context.Context, tenant, userID string) (int64, error)
}

// OutcomeErased: the memory comes from a job accepted before its user was
// erased, so it was not written.
const OutcomeErased = "erased"

// GraphErased counts what an erase removed from the graph.
type GraphErased struct {
	Memories, Entities, Sessions int64
	// Users counts the User node and the Agent node the user wrote their
	// own memories as, if any.
	Users int64
}

// MemoryEraser is an Eraser that can also forget single memories (a cache of
// memory contents, say). Places that only hold data per user need not
// implement it; Options.MemoryErasers lists those that do.
type MemoryEraser interface {
	Eraser
	// EraseMemories removes what the place holds about the memories ids of
	// one user and returns how many items it removed.
	EraseMemories(ctx context.Context, tenant, userID string, ids []string) (int64, error)
}

// Places of the graph in a receipt. Erasers add their own Place().
const (
	PlaceGraphMemories = "graph.memories"
	PlaceGraphEntities = "graph.entities"
	PlaceGraphSessions = "graph.sessions"
	PlaceGraphUsers    = "graph.users"
)

// Receipt says what an erase removed, place by place. A repeated erase
// returns the same places with zero counts, but for a decision log, which
// holds the repeated erase's own decision about the user.
type Receipt struct {
	Tenant   string           `json:"tenant"`
	UserID   string           `json:"user_id"`
	MemoryID string           `json:"memory_id,omitempty"`
	ErasedAt time.Time        `json:"erased_at"`
	Counts   map[string]int64 `json:"counts"`
}

// MaxDeleteReason bounds the reason given for a delete, in characters.
const MaxDeleteReason = 200

// UserTombstoneID is the id of the tombstone an erased user leaves. It is a
// hash, so that the tombstone proves the erase without keeping the user's id
// (which may be an e-mail address) in the graph.
func UserTombstoneID(tenant, userID string) string {
	sum := sha256.Sum256([]byte(tenant + "\x00" + userID))
	return "user:" + hex.EncodeToString(sum[:16])
}

// Delete erases a memory: the version asked for and every other version of
// its chain the principal may delete, in the graph and in every place that
// can forget single memories. The principal needs delete permission on the
// memory asked for. An admin's delete, done or not, is in the audit trail,
// and so is a user's (as "user:self", like an erase, so that the trail
// never names them): the deletions admins answer for. Agents deleting their
// own memories is everyday work.
//
// reason is why, in the caller's words, kept on every tombstone and in the
// audit entry, masked as the guard masks and on one line; empty says only
// that it went through the API.
func (s *Service) Delete(ctx context.Context, p Principal, id, reason string) (r Receipt, err error) {
	if utf8.RuneCountInString(reason) > MaxDeleteReason || !utf8.ValidString(reason) {
		return Receipt{}, Invalid("reason", fmt.Sprintf("must be UTF-8 text of at most %d characters", MaxDeleteReason))
	}
	reason = cmp.Or(strings.TrimSpace(guard.QuoteLine(guard.Masked(reason))), "deleted through the API")
	found := false // a user's guess at a memory out of sight is the decision log's
	if by := p; p.Kind == KindAdmin || p.Kind == KindUser {
		if p.Kind == KindUser {
			by.ID = "self"
		}
		defer func() {
			if found || p.Kind == KindAdmin {
				s.audit(ctx, by, AuditMemoryDelete, "memory:"+id, err, countDetails(r.Counts, reason))
			}
		}()
	}
	m, err := s.Get(ctx, p, id)
	if err != nil {
		return Receipt{}, err
	}
	found, now := true, s.now().UTC()
	if err := s.require(ctx, p, ActionDelete, ResourceOf(m), now); err != nil {
		return Receipt{}, err
	}
	chain, err := s.store.History(ctx, p.Tenant, id)
	if err != nil {
		return Receipt{}, err
	}
	// Only the versions p may see: one out of its sight stays, and the
	// receipt does not count it. Nor does a later version by another author
	// go with an older one (the user forgetting what they said keeps the
	// agent's current fact that took its key), unless an admin deletes.
	ids, kept := []string{m.ID}, []string{}
	for _, v := range chain {
		switch {
		case v.ID == m.ID:
		case p.Kind != KindAdmin && v.AgentID != m.AgentID && v.Version > m.Version:
			kept = append(kept, v.ID)
		case s.require(ctx, p, ActionDelete, ResourceOf(v), now) == nil && s.require(ctx, p, ActionRead, ResourceOf(v), now) == nil:
			ids = append(ids, v.ID)
		default:
			kept = append(kept, v.ID)
		}
	}
	r = Receipt{Tenant: p.Tenant, UserID: m.UserID, MemoryID: m.ID, ErasedAt: now, Counts: map[string]int64{}}
	// The places outside the graph go first: a cache refilled from the graph
	// between the two steps would otherwise keep what was just erased.
	for _, e := range s.memoryErasers {
		n, err := e.EraseMemories(ctx, p.Tenant, m.UserID, ids)
		if err != nil {
			return Receipt{}, fmt.Errorf("erase memory from %s: %w", e.Place(), err)
		}
		r.Counts[e.Place()] += n
	}
	g, err := s.forget.EraseMemories(ctx, p.Tenant, ids, kept, Tombstone{
		At: now, By: p.Kind + ":" + p.ID, Reason: reason, UserRef: UserTombstoneID(p.Tenant, m.UserID),
	})
	if err == nil && g.Memories == 0 {
		err = ErrNotFound // a concurrent delete erased it first
	}
	if err != nil {
		return Receipt{}, err
	}
	r.Counts[PlaceGraphMemories], r.Counts[PlaceGraphEntities], r.Counts[PlaceGraphSessions] = g.Memories, g.Entities, g.Sessions
	s.log.InfoContext(ctx, "memory erased", "tenant", p.Tenant, "memory", m.ID, "versions", g.Memories, "by", p.Kind+":"+p.ID)
	return r, nil
}

// EraseUser forgets one user of the principal's tenant everywhere: every
// Eraser place, then the graph. Policy decides it as the deletion of the
// user's most sensitive memory: admins and the user themself may, agents
// may not. Erasing a user nobody knows returns zero counts.
//
// Neither the tombstone nor the audit trail names whom the erase forgot:
// a user who erased themself is "user:self", and the trail's target is
// the tombstone's UserTombstoneID.
func (s *Service) EraseUser(ctx context.Context, p Principal, userID string) (r Receipt, err error) {
	// The erase runs to its end whatever the caller does: one cut short by a
	// client that hangs up would leave the user half-erased and fenced.
	by, ref, ctx := p, UserTombstoneID(p.Tenant, userID), context.WithoutCancel(ctx)
	if p.Kind == KindUser && p.ID == userID {
		by.ID = "self"
	}
	defer func() { s.audit(ctx, by, AuditUserErase, ref, err, countDetails(r.Counts, "user erased")) }()
	now, whole := s.now().UTC(), Resource{Tenant: p.Tenant, UserID: userID, Sensitivity: SensitivityRestricted}
	if err := s.require(ctx, p, ActionDelete, whole, now); err != nil {
		return Receipt{}, err // first: a refused caller's typos stay out of the audit trail
	}
	if !ValidName(userID) {
		return Receipt{}, Invalid("user_id", "must be 1–64 letters, digits or -_.:@")
	}
	r = Receipt{Tenant: p.Tenant, UserID: userID, ErasedAt: now, Counts: map[string]int64{}}
	if s.names != nil {
		defer s.names.Forget(p.Tenant, userID)
	}
	fence, err := s.fence.FenceUser(ctx, p.Tenant, userID)
	if err != nil {
		return Receipt{}, fmt.Errorf("erase user: fence queued writes: %w", err)
	}
	// Queued writes and open sessions are erased before the graph, so that
	// none of them lands in the graph after it was cleaned; a queued write
	// already being applied is refused by the graph (see Fencer).
	for _, e := range s.erasers {
		n, err := e.EraseUser(ctx, p.Tenant, userID)
		if err != nil {
			return Receipt{}, fmt.Errorf("erase user from %s: %w", e.Place(), err)
		}
		r.Counts[e.Place()] += n
	}
	g, err := s.forget.EraseUser(ctx, p.Tenant, userID, Tombstone{
		At: now, By: Actor(by), Reason: "user erased", UserRef: ref, Fence: fence,
	})
	if err != nil {
		return Receipt{}, err
	}
	r.Counts[PlaceGraphMemories], r.Counts[PlaceGraphEntities], r.Counts[PlaceGraphSessions] = g.Memories, g.Entities, g.Sessions
	r.Counts[PlaceGraphUsers] = g.Users
	s.log.InfoContext(ctx, "user erased", "tenant", p.Tenant, "by", Actor(by), "counts", r.Counts)
	return r, nil
}
