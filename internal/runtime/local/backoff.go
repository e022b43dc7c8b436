package local

import "time"

// Backoff is the supervisor's restart policy for a component that exits
// unexpectedly: the first restart waits Initial, each further one in a row
// twice as long, never more than Max; a component that ran for at least
// ResetAfter before it exited starts a new streak.
//
// Backoff is a pure value (no clock): the supervisor measures uptime and
// asks Streak and Delay. The zero value is not useful; use DefaultBackoff.
// Safe for concurrent use.
type Backoff struct {
	// Initial is the wait before the first restart of a streak.
	Initial time.Duration
	// Max caps the wait.
	Max time.Duration
	// ResetAfter is the uptime after which an exit counts as the first of a
	// new streak.
	ResetAfter time.Duration
}

// DefaultBackoff is 100ms, 200ms, 400ms … up to 10s, reset after 30s up.
var DefaultBackoff = Backoff{Initial: 100 * time.Millisecond, Max: 10 * time.Second, ResetAfter: 30 * time.Second}

// Streak returns the number of consecutive quick exits after a component
// that had prev of them before its last start exited after running for
// uptime: prev+1, or 1 when uptime reached ResetAfter.
func (b Backoff) Streak(prev int, uptime time.Duration) int {
	if uptime >= b.ResetAfter || prev < 0 {
		return 1
	}
	return prev + 1
}

// Delay returns the wait before restarting a component whose streak of
// quick exits is n (n <= 1 is the first exit): Initial·2^(n-1), at most
// Max.
func (b Backoff) Delay(n int) time.Duration {
	d := b.Initial
	for i := 1; i < n; i++ {
		if d >= b.Max/2 {
			return b.Max
		}
		d *= 2
	}
	if d > b.Max {
		return b.Max
	}
	return d
}
