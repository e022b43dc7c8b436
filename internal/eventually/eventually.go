// Package eventually waits in tests for observable state: it checks a
// condition on a ticker until it holds or a deadline passes, so tests wait
// for what they need instead of sleeping for a guessed time.
package eventually

import (
	"testing"
	"time"
)

// Interval is how often the condition is checked.
const Interval = 20 * time.Millisecond

// True returns as soon as cond holds, checking every Interval; after
// timeout it fails the test naming what it waited for.
func True(tb testing.TB, timeout time.Duration, what string, cond func() bool) {
	tb.Helper()
	if !Within(timeout, cond) {
		tb.Fatalf("timed out after %s waiting for %s", timeout, what)
	}
}

// Within reports whether cond held within timeout, checking every
// Interval; for callers that report the failure themselves.
func Within(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(Interval)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			return cond()
		case <-tick.C:
		}
	}
	return true
}
