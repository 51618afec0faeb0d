package memory

import "context"

// Outcomes of writing one memory beside those of Write (OutcomeCreated, …).
const (
	// OutcomeDuplicate: its idempotency key was stored already; nothing new
	// was written and the stored memory stands in for it.
	OutcomeDuplicate = "duplicate"
	// OutcomeStale: its slot's head is newer (a later valid_from), so the
	// older event did not overwrite it; the head stands in for it.
	OutcomeStale = "stale"
)

// Written is what became of one memory of a write.
type Written struct {
	// Memory is the memory as stored: the new one, or the stored one that
	// made writing it unnecessary.
	Memory  Memory `json:"memory"`
	Outcome string `json:"outcome"`
}

// EventStore commits writes that were accepted earlier and are applied
// later, from the queue. graph.Store implements it.
type EventStore interface {
	// WriteEvents is CreateMemories with an outcome per memory, and one rule
	// more: an active memory with a Key whose slot's active head has a later
	// ValidFrom is not written (OutcomeStale). An event older than the stored
	// version of its slot never overwrites it.
	WriteEvents(ctx context.Context, ms []Memory) ([]Written, error)
}
