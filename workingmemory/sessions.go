package workingmemory

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"mneme/guard"
	"mneme/memory"
	"mneme/writefence"
)

// AppendTurns adds turns to the open session id, opening it if needed.
func (s *Service) AppendTurns(ctx context.Context, p memory.Principal, id string, r memory.AppendRequest) (memory.Session, error) {
	switch {
	// Who may not write learns it whatever the request holds.
	case p.Kind != memory.KindAgent && p.Kind != memory.KindUser:
		return memory.Session{}, memory.ErrForbidden
	case writesAsItself(p, r.AgentID) != nil:
		return memory.Session{}, writesAsItself(p, r.AgentID)
	case !memory.ValidName(id):
		return memory.Session{}, memory.Invalid("session_id", "must be 1–64 letters, digits or -_.:@")
	case !memory.ValidName(r.UserID):
		return memory.Session{}, memory.Invalid("user_id", "is required: 1–64 letters, digits or -_.:@")
	case len(r.Turns) == 0:
		return memory.Session{}, memory.Invalid("turns", "at least one turn is required")
	case len(r.Turns) > MaxIngestTurns:
		return memory.Session{}, memory.Invalid("turns", fmt.Sprintf("at most %d turns per request", MaxIngestTurns))
	case r.TTLSeconds < 0 || time.Duration(r.TTLSeconds)*time.Second > memory.MaxSessionTTL:
		return memory.Session{}, memory.Invalid("ttl_seconds", fmt.Sprintf("must be between 0 and %d", int(memory.MaxSessionTTL/time.Second)))
	}
	now := s.now().UTC()
	if err := ValidateTurns(r.Turns, now); err != nil {
		return memory.Session{}, err
	}
	// A user may speak in an agent's session about them, but only as the
	// user: an assistant's or system's turn from a user's key would put
	// words in the agent's mouth.
	for i, t := range r.Turns {
		if p.Kind == memory.KindUser && t.Role != memory.RoleUser {
			return memory.Session{}, prefixTurn(memory.Invalid("role", "an end user's turns are the user's: role must be user"), i)
		}
	}
	if err := s.require(ctx, p, memory.ActionWrite, memory.SessionResource(p.Tenant, r.UserID, AuthorOf(p)), now); err != nil {
		return memory.Session{}, err
	}
	turns := make([]memory.Turn, len(r.Turns))
	for i, t := range r.Turns {
		if t.At.IsZero() {
			t.At = now
		}
		t.At, t.Content = t.At.UTC(), maskSecrets(t.Content)
		turns[i] = t
	}
	// The store checks the first of them against the session's latest
	// turn, as it appends them.
	if err := CheckTurnOrder(turns, time.Time{}); err != nil {
		return memory.Session{}, err
	}
	if err := s.checkUserID(ctx, p.Tenant, r.UserID); err != nil {
		return memory.Session{}, err
	}
	// A closed session's id stays its user's and agent's; an open one's
	// the store guards as it appends.
	if err := s.checkOwner(ctx, p.Tenant, id, r.UserID, AuthorOf(p)); err != nil {
		return memory.Session{}, err
	}
	open := memory.Session{ID: id, Tenant: p.Tenant, UserID: r.UserID, AgentID: AuthorOf(p), Owner: p}
	sess, err := s.sessions.Append(ctx, open, turns, time.Duration(r.TTLSeconds)*time.Second, now)
	if err != nil {
		return memory.Session{}, err
	}
	// A user who speaks in an agent's session reads back what GetSession
	// shows them, not the agent's system and tool turns.
	return readableBy(sess, p), nil
}

// GetSession returns an open session the principal may read.
func (s *Service) GetSession(ctx context.Context, p memory.Principal, id string) (memory.Session, error) {
	if !memory.ValidName(id) {
		return memory.Session{}, memory.ErrNotFound
	}
	sess, err := s.sessions.Get(ctx, p.Tenant, id)
	if err != nil {
		return memory.Session{}, err
	}
	if s.require(ctx, p, memory.ActionRead, memory.SessionResource(sess.Tenant, sess.UserID, sess.AgentID), s.now().UTC()) != nil {
		return memory.Session{}, memory.ErrNotFound
	}
	return readableBy(sess, p), nil
}

// readableBy is sess as p may read it: its turns that p may read
// (Session.TurnsFor), and their size. What is hidden from the reader does
// not count in what they see: its size would tell that it exists.
func readableBy(sess memory.Session, p memory.Principal) memory.Session {
	if turns := sess.TurnsFor(p); len(turns) < len(sess.Turns) {
		sess.Turns, sess.Bytes = turns, 0
		for _, t := range turns {
			sess.Bytes += len(t.Content)
		}
	}
	return sess
}

// sessionMasked are the findings of the guard that no memory keeps as said
// by default: masked as a turn is appended, they never sit in Redis for the
// session's life nor come back in recall's session block. Phones and
// e-mails wait for the close, where policy may keep them in a contact
// preference.
var sessionMasked = []string{guard.KindPassword, guard.KindSecret, guard.KindCNID, guard.KindIDNumber, guard.KindBankCard}

func maskSecrets(text string) string {
	return guard.Redact(text, guard.Scan(text), sessionMasked)
}

// CloseSession ends an open session now and turns it into long-term
// memories through the extractor.
func (s *Service) CloseSession(ctx context.Context, p memory.Principal, id string) (memory.CloseResult, error) {
	// The close writes what it reads of the session now: if the session's
	// user is erased before its memories are written, they are refused
	// (writefence.BeginWrite).
	ctx = writefence.BeginWrite(ctx, s.now())
	sess, err := s.GetSession(ctx, p, id)
	if err != nil {
		return memory.CloseResult{}, err
	}
	if err := s.require(ctx, p, memory.ActionWrite, memory.SessionResource(sess.Tenant, sess.UserID, sess.AgentID), s.now().UTC()); err != nil {
		return memory.CloseResult{}, err
	}
	claimedAt := s.now().UTC()
	if sess, err = s.sessions.Claim(ctx, p.Tenant, id, claimedAt); err != nil {
		return memory.CloseResult{}, err
	}
	res, err := s.EndSession(ctx, sess)
	if err != nil {
		s.release(ctx, sess, claimedAt)
		return memory.CloseResult{}, err
	}
	if err := s.sessions.Finish(ctx, sess.Tenant, sess.ID); err != nil {
		return memory.CloseResult{}, err
	}
	return res, nil
}

// sessionReleaser opens a claimed session again; session.Store implements
// it.
type sessionReleaser interface {
	Release(ctx context.Context, tenant, id string, claimedAt time.Time) error
}

// releaseTimeout bounds the release of a failed close's claim, which runs
// even when the close's own request was cancelled.
const releaseTimeout = 5 * time.Second

// release opens again the session whose close failed, so that a retry of
// the close claims it at once. Should that fail too, the claim lapses after
// its lease, and then a retry or the expiry worker takes the session.
func (s *Service) release(ctx context.Context, sess memory.Session, claimedAt time.Time) {
	r, ok := s.sessions.(sessionReleaser)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
	defer cancel()
	if err := r.Release(ctx, sess.Tenant, sess.ID, claimedAt); err != nil {
		s.log.WarnContext(ctx, "a failed close left its session closing until the claim lapses", "tenant", sess.Tenant, "session", sess.ID, "err", err)
	}
}

// EndSession turns a claimed session into long-term memories, written as
// its owner: what the extractor finds in its turns, and one episodic memory
// that records the conversation — when, how long, what it was about —
// without repeating values a later conversation may supersede. A session
// with nothing worth remembering leaves nothing; what policy does not let
// the owner write, and what the tenant's quota has no room for, is left
// out and counted. Retrying is safe: every memory carries an idempotency
// key derived from the session. The caller makes sure this replica decides
// with the tenant's current policy and grants: a request has synced its
// tenant already; the expiry worker, which runs outside a request, syncs it
// first (see app). A caller that read sess marks ctx with writefence.BeginWrite
// before it did.
func (s *Service) EndSession(ctx context.Context, sess memory.Session) (memory.CloseResult, error) {
	found, err := s.extract.Extract(ctx, sess.Turns)
	if err != nil {
		return memory.CloseResult{}, fmt.Errorf("extract: %w", err)
	}
	if len(found) == 0 {
		return memory.CloseResult{SessionID: sess.ID, IngestResult: nothing}, nil
	}
	if len(found) > MaxExtractedPerRun-1 {
		found = found[:MaxExtractedPerRun-1]
	}
	found = append(found, sessionRecord(sess, found))
	// Keyed by the turns too: a close that failed leaves the session open,
	// and one retried after more turns came is not the same request, so
	// that what the failed one wrote is reinforced, not refused as a reuse.
	idem := fmt.Sprintf("session:%s:%d:%d", sess.ID, sess.CreatedAt.UnixMilli(), len(sess.Turns))
	for i := range found {
		found[i].Tenant, found[i].AgentID = "", ""
		found[i].UserID, found[i].SessionID = sess.UserID, sess.ID
		found[i].IdempotencyKey = fmt.Sprintf("%s:%d", idem, i)
	}
	// A session must end, or its turns would outlive it: what the guard
	// refuses is left out and counted (createUnguarded), and so is what the
	// tenant's quota has no room for.
	res, err := s.createWithinQuota(ctx, sess, found)
	return memory.CloseResult{SessionID: sess.ID, IngestResult: res}, err
}

// ReasonQuota is a close's IngestResult.Reason when the tenant's quota had
// no room for all the conversation held.
const ReasonQuota = "the tenant's quota has no room for all the conversation held: what did not fit was left out and counted in refused"

// createWithinQuota writes found as createUnguarded does. When the tenant's
// quota has no room for all of it, it writes what fits, in the order found,
// in ever smaller parts, and leaves out and counts the rest: refusing the
// close would leave the session claimed, and retrying it at a full quota
// would never end it. Each part is admitted on its own, so a part written
// is never counted again by a later one.
func (s *Service) createWithinQuota(ctx context.Context, sess memory.Session, found []memory.NewMemory) (memory.IngestResult, error) {
	res, err := s.createUnguarded(ctx, sess.Owner, found)
	var over *memory.QuotaError
	if !errors.As(err, &over) {
		return res, err
	}
	res = memory.IngestResult{Memories: []memory.Memory{}}
	rest, size := found, len(found)/2
	for len(rest) > 0 && size > 0 {
		n := min(size, len(rest))
		part, err := s.createUnguarded(ctx, sess.Owner, rest[:n])
		if errors.As(err, &over) {
			size /= 2
			continue
		} else if err != nil {
			return memory.IngestResult{}, err
		}
		res.Memories = append(res.Memories, part.Memories...)
		res.Refused += part.Refused
		rest = rest[n:]
	}
	if len(rest) > 0 {
		res.Refused += len(rest)
		res.Reason = ReasonQuota
		// Nobody may be waiting for the answer: the expiry worker ends
		// sessions too.
		s.log.WarnContext(ctx, "session ended at its tenant's quota; what did not fit was left out",
			"tenant", sess.Tenant, "session", sess.ID, "left_out", len(rest), "err", over)
	} else if len(res.Memories) == 0 && res.Refused > 0 {
		res.Reason = ReasonRefused
	}
	return res, nil
}

// unguarded keeps the memories of found the write guard does not refuse
// (those it masks are kept masked); policy's refusals are left to
// createAllowed.
func (s *Service) unguarded(ctx context.Context, p memory.Principal, found []memory.NewMemory) ([]memory.NewMemory, error) {
	var kept []memory.NewMemory
	var guarded *memory.GuardError
	for _, n := range found {
		switch err := s.memories.AuthorizeWrites(ctx, p, []memory.NewMemory{n}, s.now().UTC()); {
		case errors.As(err, &guarded):
		case err == nil, errors.Is(err, memory.ErrForbidden):
			kept = append(kept, n)
		default:
			return nil, err
		}
	}
	return kept, nil
}

// createUnguarded writes found as createAllowed does, and leaves out and
// counts in Refused what the write guard refuses (a password, an ID
// number), as what policy refuses is: one such turn must not cost the rest
// of a conversation.
func (s *Service) createUnguarded(ctx context.Context, p memory.Principal, found []memory.NewMemory) (memory.IngestResult, error) {
	res, err := s.createAllowed(ctx, p, found)
	var guarded *memory.GuardError
	if !errors.As(err, &guarded) {
		return res, err
	}
	kept, err := s.unguarded(ctx, p, found)
	if err != nil {
		return memory.IngestResult{}, err
	}
	res = memory.IngestResult{Memories: []memory.Memory{}, Reason: ReasonRefused}
	if len(kept) > 0 {
		if res, err = s.createAllowed(ctx, p, kept); err != nil {
			return memory.IngestResult{}, err
		}
	}
	res.Refused += len(found) - len(kept)
	return res, nil
}

// nothing is the result of turns with nothing worth remembering.
var nothing = memory.IngestResult{Memories: []memory.Memory{}, Reason: ReasonNothingWorthRemembering}

// createAllowed writes what the extractor found as p. When policy lets p
// write some of it and not the rest (an end user writes profile and
// episodic memories, not notes), it writes what policy allows rather than
// lose the conversation, and counts what it left out.
func (s *Service) createAllowed(ctx context.Context, p memory.Principal, found []memory.NewMemory) (memory.IngestResult, error) {
	// Usually policy allows it all: one write, decided once.
	results, err := s.memories.Write(ctx, p, found)
	if !errors.Is(err, memory.ErrForbidden) {
		ms, err := stored(results, err)
		return memory.IngestResult{Memories: ms, Reason: deletedSince(results)}, err
	}
	kept, err := s.authorized(ctx, p, found, s.now().UTC())
	if errors.Is(err, memory.ErrForbidden) {
		return memory.IngestResult{Memories: []memory.Memory{}, Reason: ReasonRefused, Refused: len(found)}, nil
	} else if err != nil {
		return memory.IngestResult{}, err
	}
	ms, err := stored(s.memories.Write(ctx, p, kept))
	return memory.IngestResult{Memories: ms, Refused: len(found) - len(kept)}, err
}

// deletedSince is ReasonDeleted when a retry wrote nothing because what
// its key wrote was deleted since.
func deletedSince(results []memory.WriteResult) string {
	for _, r := range results {
		if r.Outcome == memory.OutcomeDeleted {
			return ReasonDeleted
		}
	}
	return ""
}

// stored is what a write stored or reinforced, each memory with the kinds
// the guard masked in it: a memory left out as not worth keeping is not
// part of the result.
func stored(results []memory.WriteResult, err error) ([]memory.Memory, error) {
	if err != nil {
		return nil, err
	}
	ms := make([]memory.Memory, 0, len(results))
	for _, r := range results {
		if r.Memory != nil {
			m := *r.Memory
			m.Redacted = r.Redacted // what the writer must know was masked
			ms = append(ms, m)
		}
	}
	return ms, nil
}

// sessionRecord is the episodic memory of a conversation: its time, its
// size, the topics it touched and the entities it named.
func sessionRecord(sess memory.Session, found []memory.NewMemory) memory.NewMemory {
	var topics []string
	seenTopic := map[string]bool{}
	var ents []memory.Entity
	seenEnt := map[string]bool{}
	for _, m := range found {
		topic := m.Kind
		if m.Key != "" && !strings.Contains(m.Key, ":") {
			topic = m.Key
		}
		topic = strings.ReplaceAll(topic, "_", " ")
		if topic != "" && !seenTopic[topic] {
			seenTopic[topic] = true
			topics = append(topics, topic)
		}
		for _, e := range m.Entities {
			if !seenEnt[e.ID] {
				seenEnt[e.ID] = true
				ents = append(ents, e)
			}
		}
	}
	sort.Strings(topics)
	ents = ents[:min(len(ents), memory.MaxEntities)]
	first, last := sess.CreatedAt, sess.UpdatedAt
	if len(sess.Turns) > 0 {
		first, last = turnSpan(sess.Turns)
	}
	first, last = first.UTC(), last.UTC()
	span := fmt.Sprintf("on %s %s–%s", first.Format(time.DateOnly), first.Format("15:04"), last.Format("15:04"))
	if first.Format(time.DateOnly) != last.Format(time.DateOnly) {
		span = fmt.Sprintf("from %s to %s", first.Format("2006-01-02 15:04"), last.Format("2006-01-02 15:04"))
	}
	// The turns exchanged with the user: the record is about them, and they
	// read it, so it counts no system or tool turn of the agent's.
	exchanged := sess.TurnsFor(memory.Principal{Kind: memory.KindUser, ID: sess.UserID})
	var b strings.Builder
	turns := fmt.Sprintf("%d turns", len(exchanged))
	if len(exchanged) == 1 {
		turns = "1 turn"
	}
	fmt.Fprintf(&b, "Conversation %s UTC (session %s, %s) about %s", span, sess.ID, turns, strings.Join(topics, ", "))
	if len(ents) > 0 {
		names := make([]string, len(ents))
		for i, e := range ents {
			names[i] = e.Name
		}
		fmt.Fprintf(&b, "; mentioned %s", strings.Join(names, ", "))
	}
	content := b.String()
	if utf8.RuneCountInString(content) > memory.MaxContentChars {
		content = string([]rune(content)[:memory.MaxContentChars])
	}
	importance := 0.4
	return memory.NewMemory{
		Type: memory.TypeEpisodic, Kind: memory.KindSession, Content: content, Entities: ents,
		Importance: &importance, Source: "session",
	}
}
