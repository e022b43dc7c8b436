package docker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/httpprobe"
)

// How readiness is polled: the check every pollEvery, the container's
// state every stateEvery (a crash loop fails Up at once instead of at the
// deadline).
const (
	pollEvery  = 100 * time.Millisecond
	stateEvery = 500 * time.Millisecond
	checkBound = 2 * time.Second
	logTail    = 20
)

// readyCheck reports why a component is not ready yet, or nil.
type readyCheck func(ctx context.Context) error

// waitReady polls check until it passes, the container exits (exited
// delivers its exit code) or restarts, or ctx ends (it carries Up's one
// deadline). Errors wrap ErrNotReady and name the component, the reason
// and the tail of its log.
func waitReady(ctx context.Context, cli *client.Client, id, component string, check readyCheck, exited <-chan int64) error {
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	exitErr := func(code int64) error {
		return fmt.Errorf("%w: %s exited with code %d%s", ErrNotReady, component, code, tail(ctx, cli, id))
	}
	lastState := time.Time{}
	var last error
	for {
		select {
		case code := <-exited:
			return exitErr(code)
		default:
		}
		cctx, cancel := context.WithTimeout(ctx, checkBound)
		last = check(cctx)
		cancel()
		if last == nil {
			return nil
		}
		if time.Since(lastState) >= stateEvery {
			lastState = time.Now()
			if why := crashed(ctx, cli, id); why != "" {
				// Prefer the exit watcher's code: it is the code of this
				// start even if the container was restarted meanwhile.
				if code, ok := exitCodeWithin(exited, time.Second); ok {
					return exitErr(code)
				}
				return fmt.Errorf("%w: %s %s%s", ErrNotReady, component, why, tail(ctx, cli, id))
			}
		}
		select {
		case code := <-exited:
			return exitErr(code)
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return fmt.Errorf("%w: %s was not ready in time (last check: %v)%s", ErrNotReady, component, last, tail(context.WithoutCancel(ctx), cli, id))
			}
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// exitCodeWithin waits up to d for the exit watcher's code.
func exitCodeWithin(exited <-chan int64, d time.Duration) (int64, bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case code := <-exited:
		return code, true
	case <-t.C:
		return 0, false
	}
}

// watchExit delivers the container's next exit code. Call it before
// starting the container; it stops watching when ctx ends.
func watchExit(ctx context.Context, cli *client.Client, id string) <-chan int64 {
	out := make(chan int64, 1)
	w := cli.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	go func() {
		select {
		case r := <-w.Result:
			out <- r.StatusCode
		case <-w.Error:
			// ctx ended, or the daemon could not wait: the state polling
			// of waitReady still notices a crash.
		}
	}()
	return out
}

// crashed says why a container is not running ("exited with code 3",
// "is restarting after exit code 3"), or "" while it runs and never
// restarted.
func crashed(ctx context.Context, cli *client.Client, id string) string {
	res, err := cli.ContainerInspect(ctx, id, client.ContainerInspectOptions{})
	if err != nil || res.Container.State == nil {
		return ""
	}
	st := res.Container.State
	switch {
	case st.OOMKilled:
		return "was killed for lack of memory (raise its resources.memory)"
	case st.Restarting || res.Container.RestartCount > 0:
		if st.ExitCode != 0 {
			return fmt.Sprintf("keeps restarting (last exit code %d)", st.ExitCode)
		}
		return "keeps restarting"
	case st.Status == container.StateExited || st.Status == container.StateDead:
		if st.Error != "" {
			return fmt.Sprintf("exited with code %d: %s", st.ExitCode, st.Error)
		}
		return fmt.Sprintf("exited with code %d", st.ExitCode)
	}
	return ""
}

// tail returns the last lines of a container's log as a message suffix.
func tail(ctx context.Context, cli *client.Client, id string) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	rc, err := cli.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true,
		Tail: fmt.Sprint(logTail)})
	if err != nil {
		return ""
	}
	defer rc.Close()
	var b bytes.Buffer
	if _, err := stdcopy.StdCopy(&b, &b, io.LimitReader(rc, 64<<10)); err != nil && b.Len() == 0 {
		return ""
	}
	text := strings.TrimSpace(b.String())
	if text == "" {
		return " (its log is empty)"
	}
	return "; last lines of its log:\n" + indent(text)
}

func indent(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = "    " + l
	}
	return strings.Join(lines, "\n")
}

// redisReady is ready when Redis answers PING with the password; the
// blackboard client also loads its scripts, which a loading Redis refuses.
func redisReady(url, instance string) readyCheck {
	return func(ctx context.Context) error {
		bb, err := blackboard.Dial(ctx, url, blackboard.Options{Instance: instance, OpTimeout: checkBound})
		if err != nil {
			return err
		}
		return bb.Close()
	}
}

// httpReady is ready when GET /readyz answers 200.
func httpReady(addr string) readyCheck {
	return func(ctx context.Context) error { return httpprobe.Get(ctx, addr, "/readyz", 0) }
}
