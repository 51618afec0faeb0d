package memory

// Outcomes of writing one memory beside those of Write (OutcomeCreated, …).
const (
	// OutcomeDuplicate: its idempotency key was stored already; nothing new
	// was written and the stored memory stands in for it.
	OutcomeDuplicate = "duplicate"
	// OutcomeStale: its slot's head is newer (a later valid_from), so the
	// older event did not overwrite it; the head stands in for it.
	OutcomeStale = "stale"
	// OutcomeDeleted: the memory its idempotency key wrote was deleted
	// since, so a retry of the write does not bring it back; nothing was
	// written and nothing stands in for it.
	OutcomeDeleted = "deleted"
)

// Written is what became of one memory of a write.
type Written struct {
	// Memory is the memory as stored: the new one, or the stored one that
	// made writing it unnecessary.
	Memory  Memory `json:"memory"`
	Outcome string `json:"outcome"`
}
