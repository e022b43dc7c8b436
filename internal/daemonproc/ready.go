package daemonproc

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/settdev/sett/internal/httpprobe"
)

// readyPoll is how often WaitReady asks /readyz.
const readyPoll = 10 * time.Millisecond

// logTailBytes is how much of the log a readiness error carries.
const logTailBytes = 2000

// Ready reports whether the daemon on addr answers GET /readyz with 200
// within half a second.
func Ready(ctx context.Context, addr string) bool {
	return httpprobe.Get(ctx, addr, "/readyz", 500*time.Millisecond) == nil
}

// WaitReady polls the process's /readyz until it answers 200, against one
// deadline timeout away. It fails early when the process exits (or was
// never started), and its errors carry the end of the log; it returns
// ctx's error when ctx ends first.
func (p *Process) WaitReady(ctx context.Context, timeout time.Duration) error {
	exited := p.Exited()
	if exited == nil {
		return fmt.Errorf("daemonproc: %s was never started", p.Name)
	}
	err := waitReady(ctx, p.HTTPAddr, timeout, exited)
	switch {
	case errors.Is(err, errExited):
		return fmt.Errorf("daemonproc: %s exited before it was ready (%s); log %s:\n%s", p.Name, p.exitState(), p.LogPath, p.LogTail(logTailBytes))
	case errors.Is(err, errTimeout):
		return fmt.Errorf("daemonproc: %s not ready after %s; log %s:\n%s", p.Name, timeout, p.LogPath, p.LogTail(logTailBytes))
	}
	return err
}

// WaitAddrReady polls /readyz on addr until it answers 200, against one
// deadline timeout away: for a daemon the harness runs in its own process
// rather than as a Process. It returns ctx's error when ctx ends first.
func WaitAddrReady(ctx context.Context, addr string, timeout time.Duration) error {
	err := waitReady(ctx, addr, timeout, nil)
	if errors.Is(err, errTimeout) {
		return fmt.Errorf("daemonproc: %s not ready after %s", addr, timeout)
	}
	return err
}

// waitReady's own outcomes, turned into errors naming the daemon by its
// callers.
var (
	errExited  = errors.New("exited")
	errTimeout = errors.New("timeout")
)

// waitReady polls addr until it is ready, exited closes (nil: never),
// the deadline passes or ctx ends.
func waitReady(ctx context.Context, addr string, timeout time.Duration, exited <-chan struct{}) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(readyPoll)
	defer tick.Stop()
	for !Ready(ctx, addr) {
		select {
		case <-exited:
			return errExited
		case <-deadline.C:
			return errTimeout
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
	return nil
}
