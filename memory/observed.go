package memory

import (
	"fmt"
	"time"
)

// ObservedSkew is how far observed_at may lie from the server's clock
// either way without privilege: clocks of clients differ a little.
const ObservedSkew = 5 * time.Minute

// ErrBackdate refuses an observed_at further back than ObservedSkew from a
// principal other than an admin; imports (Import, the seed loader) set the
// time directly.
var ErrBackdate = fmt.Errorf("%w: only admins and imports may backdate observed_at", ErrForbidden)

// observed dates m from when its fact was observed, so that decay,
// timelines and as_of read the fact's time, not the write's: valid from,
// created and updated then. Never in the future; further back than the
// skew only for admins.
func observed(p Principal, at *time.Time, now time.Time, m Memory) (Memory, error) {
	if at == nil {
		return m, nil
	}
	t := at.UTC()
	switch {
	case t.Year() < 1970: // the zero time, or a slip of the keyboard
		return Memory{}, Invalid("observed_at", "must be a time after 1970")
	case t.After(now.Add(ObservedSkew)):
		return Memory{}, Invalid("observed_at", "must not be in the future")
	case t.Before(now.Add(-ObservedSkew)) && p.Kind != KindAdmin:
		return Memory{}, ErrBackdate
	case t.After(now):
		t = now
	}
	m.ValidFrom, m.CreatedAt, m.UpdatedAt = t, t, t
	return m, nil
}
