package workingmemory

import (
	"fmt"
	"time"

	"mneme/memory"
)

// TurnSkew is how much earlier than the session's last turn a turn's at
// may be: clocks of the agents and apps that speak in one session differ
// a little, and a turn that comes later than another by less than this
// still reads as said after it.
const TurnSkew = memory.ObservedSkew

// CodeTurnOutOfOrder is the stable code of a TurnOrderError.
const CodeTurnOutOfOrder = "turn_out_of_order"

// TurnOrderError refuses turns added to a session out of the order they
// were said: the turn at Index (of the request) is dated At, earlier than
// Last, the latest turn before it (in the session or the request), by more
// than TurnSkew. A session's record dates the conversation by its turns,
// and its extraction takes a later turn's word over an earlier one's.
type TurnOrderError struct {
	Index    int
	At, Last time.Time
}

func (e *TurnOrderError) Error() string {
	return fmt.Sprintf("turns[%d].at: %s is earlier than the session's latest turn, at %s, by more than %s: add a session's turns in the order they were said (history from elsewhere goes to POST /v1/ingest)",
		e.Index, e.At.UTC().Format(time.RFC3339), e.Last.UTC().Format(time.RFC3339), TurnSkew)
}

// RefusalCode is the stable code clients see (CodeTurnOutOfOrder).
func (e *TurnOrderError) RefusalCode() string { return CodeTurnOutOfOrder }

// CheckTurnOrder refuses turns that are out of order (TurnOrderError):
// each turn's At must not be earlier than the latest before it by more
// than TurnSkew; last is the session's latest turn (zero: none).
func CheckTurnOrder(turns []memory.Turn, last time.Time) error {
	for i, t := range turns {
		if !last.IsZero() && t.At.Before(last.Add(-TurnSkew)) {
			return &TurnOrderError{Index: i, At: t.At, Last: last}
		}
		if t.At.After(last) {
			last = t.At
		}
	}
	return nil
}

// turnSpan is the time of the earliest and of the latest of turns, or
// zero times when there are none.
func turnSpan(turns []memory.Turn) (first, last time.Time) {
	for i, t := range turns {
		if i == 0 || t.At.Before(first) {
			first = t.At
		}
		if i == 0 || t.At.After(last) {
			last = t.At
		}
	}
	return first, last
}
