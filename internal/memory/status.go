package memory

import "slices"

// Status is how an agent's piece of work ended, as its memory states it
// (the memory and review design's completion contract). Values are upper case, as the design
// writes them, and stay readable in redis-cli.
type Status string

// The statuses.
const (
	// StatusDone: the work is complete (for a reviewer: nothing blocks it).
	StatusDone Status = "DONE"
	// StatusNeedsRevision: the work (for a reviewer: the work under review)
	// needs another iteration.
	StatusNeedsRevision Status = "NEEDS_REVISION"
	// StatusError: the agent could not do its work.
	StatusError Status = "ERROR"
)

// AllStatuses lists every status. The slice is new on each call.
func AllStatuses() []Status { return []Status{StatusDone, StatusNeedsRevision, StatusError} }

// Valid reports whether s is one of AllStatuses (exactly, upper case).
func (s Status) Valid() bool { return slices.Contains(AllStatuses(), s) }
