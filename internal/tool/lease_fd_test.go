//go:build linux

package tool

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// An unsandboxed tool run with a Fence gets the lease deadlines itself on
// fd 3 (SETT_LEASE_FD=3): the first at start, a new one at each Extend.
// The controller's launcher hands them to its worker's reaper.
func TestUnsandboxedToolReadsItsLeaseDeadlines(t *testing.T) {
	f := NewFence(time.Now().Add(time.Minute))
	done := make(chan Result, 1)
	go func() {
		done <- Run(context.Background(), Spec{
			Command: []string{"/bin/sh", "-c", `echo "fd=$SETT_LEASE_FD"; head -n 2 <&3`},
			Dir:     t.TempDir(), Env: []string{"PATH=/usr/bin:/bin"}, Fence: f, Timeout: time.Minute,
		})
	}()
	// The second line comes from Extend, once the run attached the pipe
	// (attach sends the first); extend until the tool has both.
	var res Result
	for {
		f.Extend(time.Now().Add(2 * time.Minute))
		select {
		case res = <-done:
		case <-time.After(50 * time.Millisecond): // the cadence of a renewing cub
			continue
		}
		break
	}
	if res.Failure != "" {
		t.Fatalf("tool failed: %s %s", res.Failure, res.Detail)
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	if len(lines) != 3 || lines[0] != "fd=3" {
		t.Fatalf("tool output %q, want fd=3 and two deadlines", res.Stdout)
	}
	now := monotonicNow()
	for _, l := range lines[1:] {
		at, err := strconv.ParseInt(l, 10, 64)
		if err != nil || time.Duration(at) < now {
			t.Errorf("deadline %q (%v): want a CLOCK_MONOTONIC time ahead of now %d", l, err, now)
		}
	}
}
