package worker

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"golang.org/x/sys/unix"
)

// ReapCommand is the first argument of the launcher's reaper mode:
// `sett-worker reap --container ID [--docker-host H]`, with the claim's
// lease deadlines on file descriptor 3. The launcher starts one reaper per
// worker, in a session of its own, so that it outlives the launcher: when
// the last deadline passes without a renewal, the reaper removes the
// worker container (by force), whether the launcher still runs or was
// killed, and whether its cub is running, frozen (SIGSTOP) or dead. It
// exits as soon as the container is gone, whoever removed it.
//
// The deadlines are those of the cub's tool.Fence: the cub hands them to
// an unsandboxed tool on EnvLeaseFD, one per line, as nanoseconds of
// CLOCK_MONOTONIC (the same kernel clock in every container of a host),
// and writes a new one at every renewal of the lease. EOF (the cub closed
// the pipe, or died) keeps the last deadline: nobody is left to move it.
const ReapCommand = "reap"

// EnvLeaseFD names the file descriptor on which the cub hands an
// unsandboxed tool its lease deadlines (see ReapCommand).
const EnvLeaseFD = "SETT_LEASE_FD"

// Reap is the command line of the reaper mode.
type Reap struct {
	// Container is the worker's id.
	Container string
	// DockerHost is the daemon; empty means DefaultDockerHost.
	DockerHost string
}

// Args renders r as a command line, ReapCommand first.
func (r Reap) Args() []string {
	a := []string{ReapCommand, "--container=" + r.Container}
	if r.DockerHost != "" {
		a = append(a, "--docker-host="+r.DockerHost)
	}
	return a
}

// ParseReapArgs reads a Reap from the arguments after ReapCommand. Errors
// wrap ErrUsage.
func ParseReapArgs(args []string, usage io.Writer) (Reap, error) {
	var r Reap
	fs := flag.NewFlagSet("sett-worker reap", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.StringVar(&r.Container, "container", "", "the worker container to remove when the lease lapses")
	fs.StringVar(&r.DockerHost, "docker-host", DefaultDockerHost, "the Docker daemon")
	if err := fs.Parse(args); err != nil {
		return Reap{}, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if r.Container == "" || fs.NArg() > 0 {
		return Reap{}, fmt.Errorf("%w: reap needs --container ID and nothing else (the lease deadlines come on fd 3)", ErrUsage)
	}
	return r, nil
}

// ParseDeadline reads one deadline line: nanoseconds of CLOCK_MONOTONIC.
func ParseDeadline(line string) (time.Duration, bool) {
	n, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return time.Duration(n), true
}

// MonotonicNow reads CLOCK_MONOTONIC, the clock of the deadlines.
func MonotonicNow() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// WatchLease removes container id when the last deadline read from
// deadlines passes, and returns true then; it returns false as soon as the
// container is gone (removed by its launcher, sett down or anyone) or ctx
// ends. Until the first deadline arrives nothing expires.
func WatchLease(ctx context.Context, cli *client.Client, id string, deadlines io.Reader, stderr io.Writer) bool {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	gone := make(chan struct{})
	go func() {
		defer close(gone)
		w := cli.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionRemoved})
		select {
		case <-w.Result:
		case <-w.Error:
		}
	}()
	lines := make(chan time.Duration)
	go func() {
		sc := bufio.NewScanner(deadlines)
		for sc.Scan() {
			if at, ok := ParseDeadline(sc.Text()); ok {
				select {
				case lines <- at:
				case <-ctx.Done():
					return
				}
			}
		}
		close(lines)
	}()
	var timer *time.Timer
	var expired <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return false
		case <-gone:
			return false
		case at, ok := <-lines:
			if !ok {
				lines = nil
				continue
			}
			if timer != nil {
				timer.Stop()
			}
			timer = time.NewTimer(at - MonotonicNow())
			expired = timer.C
		case <-expired:
			fmt.Fprintf(orDiscard(stderr), "sett-worker: the lease of worker %s lapsed without renewal (its cub is gone, stopped or cut off): removing it\n", short(id))
			rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
			_, err := cli.ContainerRemove(rctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
			rcancel()
			if err != nil {
				fmt.Fprintf(orDiscard(stderr), "sett-worker: remove worker %s: %v\n", short(id), err)
			}
			return true
		}
	}
}

// startReaper starts `sett-worker reap` for worker id in a session of its
// own, with lease (the deadline pipe) as its fd 3. Its output goes
// nowhere: it must not hold the cub's pipes open past the launcher (the
// removal itself shows: the launcher, if alive, reports its worker gone).
func startReaper(self string, lease *os.File, id, dockerHost string) (*os.Process, error) {
	cmd := exec.Command(self, Reap{Container: id, DockerHost: dockerHost}.Args()...)
	cmd.ExtraFiles = []*os.File{lease}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := cmd.Process
	// Nobody waits for it but init once the launcher is gone; while the
	// launcher runs, release it so it is not left a zombie of ours.
	go func() { _, _ = p.Wait() }()
	return p, nil
}
