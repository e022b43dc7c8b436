package worker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// cleanupTimeout bounds stopping and removing a worker once the run is
// over or cancelled (it runs on a context of its own, since the run's may
// be done).
const cleanupTimeout = 30 * time.Second

// ExitSignalled is the launcher's exit code when it was stopped (SIGTERM)
// and removed its worker: 128+15, what a shell reports for a process
// ended by SIGTERM.
const ExitSignalled = 143

// ExitLauncherFailed is the exit code when the launcher could not run the
// worker at all (as `docker run` reports its own failures).
const ExitLauncherFailed = 125

// Launcher runs one worker container per Run. Its fields are set before
// the first Run; a Launcher is not safe for concurrent use (run one per
// grant, as the cub does by starting one sett-worker process per grant).
type Launcher struct {
	// Spec describes the worker container.
	Spec Spec
	// Client talks to the Docker daemon.
	Client *client.Client
	// Env is the worker's environment (os.Environ form); see WorkerEnv.
	Env []string
	// Stdin is streamed to the worker and closed; Stdout and Stderr
	// receive the worker's. Nil Stdin sends nothing; nil Stdout or Stderr
	// discard.
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Identity is this launcher's LabelLauncher value; empty: Self().
	Identity string
	// Lease, when set, carries the claim's lease deadlines (the cub's
	// EnvLeaseFD): each worker then gets a reaper (ReapCommand) that
	// removes it when the lease lapses, even if this launcher is gone.
	Lease *os.File
	// ReaperPath is the sett-worker binary the reaper runs; empty: this
	// executable.
	ReaperPath string
}

// Run creates, starts and waits for one worker container and returns its
// exit code. The container is removed before Run returns, whatever
// happened: exit, error or ctx cancelled (then the worker is stopped with
// Spec.StopTimeout first, and Run returns ExitSignalled and ctx.Err()).
//
// Errors wrap ErrImageMissing or ErrDocker; the code is then
// ExitLauncherFailed.
func (l *Launcher) Run(ctx context.Context) (int, error) {
	identity := l.Identity
	if identity == "" {
		identity = Self()
	}
	name := ""
	if l.Spec.NamePrefix != "" {
		var b [4]byte
		_, _ = rand.Read(b[:])
		name = l.Spec.NamePrefix + "-" + hex.EncodeToString(b[:])
	}
	created, err := l.Client.ContainerCreate(ctx, l.Spec.createOptions(name, l.Env, identity))
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return ExitLauncherFailed, fmt.Errorf("%w: %s (build or load it on the Docker host; nothing is pulled): %v", ErrImageMissing, l.Spec.Image, err)
		}
		if ctx.Err() != nil {
			return ExitSignalled, ctx.Err()
		}
		return ExitLauncherFailed, fmt.Errorf("%w: create the worker container from %s: %v", ErrDocker, l.Spec.Image, err)
	}
	id := created.ID
	// From here on the container exists: every path removes it.
	defer l.remove(ctx, id)
	// The reaper watches the lease before the worker starts: a worker
	// never runs without something that removes it when the lease lapses.
	if l.Lease != nil {
		self := l.ReaperPath
		if self == "" {
			if self, err = os.Executable(); err != nil {
				return l.failed(ctx, id, fmt.Errorf("%w: find sett-worker for the lease reaper: %v", ErrDocker, err))
			}
		}
		if _, err := startReaper(self, l.Lease, id, l.Spec.DockerHost); err != nil {
			return l.failed(ctx, id, fmt.Errorf("%w: start the lease reaper of worker %s: %v", ErrDocker, short(id), err))
		}
	}

	att, err := l.Client.ContainerAttach(ctx, id, client.ContainerAttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return l.failed(ctx, id, fmt.Errorf("%w: attach to worker %s: %v", ErrDocker, short(id), err))
	}
	defer att.Close()
	// Wait before start, so that an exit right after start is not missed.
	wait := l.Client.ContainerWait(ctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	if _, err := l.Client.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
		return l.failed(ctx, id, fmt.Errorf("%w: start worker %s: %v", ErrDocker, short(id), err))
	}

	go func() {
		if l.Stdin != nil {
			_, _ = io.Copy(att.Conn, l.Stdin)
		}
		// EOF on the worker's stdin: the tool has its whole input.
		_ = att.CloseWrite()
	}()
	relayed := make(chan error, 1)
	go func() {
		out := orDiscard(l.Stdout)
		if l.Spec.MaxOutput > 0 {
			out = &cappedWriter{w: out, limit: l.Spec.MaxOutput, over: func() { l.removeDraining(ctx, id, att.Reader) }}
		}
		_, err := stdcopy.StdCopy(out, orDiscard(l.Stderr), att.Reader)
		relayed <- err
	}()

	var code int
	select {
	case <-ctx.Done():
		l.stop(ctx, id)
		return ExitSignalled, ctx.Err()
	case err := <-wait.Error:
		if ctx.Err() != nil {
			l.stop(ctx, id)
			return ExitSignalled, ctx.Err()
		}
		return l.failed(ctx, id, fmt.Errorf("%w: wait for worker %s: %v", ErrDocker, short(id), err))
	case res := <-wait.Result:
		if res.Error != nil && res.Error.Message != "" {
			return l.failed(ctx, id, fmt.Errorf("%w: worker %s: %s", ErrDocker, short(id), res.Error.Message))
		}
		code = int(res.StatusCode)
	}
	// The worker has exited; its output stream ends once Docker has sent
	// everything, so wait for the relay before returning the code.
	select {
	case <-relayed:
	case <-ctx.Done():
		return ExitSignalled, ctx.Err()
	}
	return code, nil
}

// failed returns ExitLauncherFailed and err, or ExitSignalled and the
// context's error when the failure came from a cancelled run. A cancelled
// run still stops the worker with its grace first: a cancel that lands
// while the start request is in flight leaves a worker Docker started but
// the launcher never heard of, and the removal alone would SIGKILL it.
func (l *Launcher) failed(ctx context.Context, id string, err error) (int, error) {
	if ctx.Err() != nil {
		l.stop(ctx, id)
		return ExitSignalled, ctx.Err()
	}
	return ExitLauncherFailed, err
}

// stopAttempts is how many times stop asks Docker before it gives up.
const stopAttempts = 4

// stop asks the worker to stop: SIGTERM, then SIGKILL after StopTimeout.
// A request Docker did not answer (a dropped connection, a busy daemon) is
// sent again: the removal that follows a failed stop kills the worker
// without its grace, which a tool cleaning up on SIGTERM must not get from
// a blip. A worker already gone needs no stop.
func (l *Launcher) stop(ctx context.Context, id string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	secs := int(l.Spec.StopTimeout / time.Second)
	bo := backoff.WithContext(backoff.WithMaxRetries(backoff.NewExponentialBackOff(), stopAttempts-1), cctx)
	err := backoff.Retry(func() error {
		_, err := l.Client.ContainerStop(cctx, id, client.ContainerStopOptions{Timeout: &secs})
		if err != nil && cerrdefs.IsNotFound(err) {
			return nil
		}
		return err
	}, bo)
	if err != nil {
		fmt.Fprintf(orDiscard(l.Stderr), "sett-worker: could not stop worker %s with SIGTERM (%v); removing it by force\n", short(id), err)
	}
}

// remove removes the worker, killing it if it still runs.
func (l *Launcher) remove(ctx context.Context, id string) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if _, err := l.Client.ContainerRemove(cctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
		// (A conflict: someone, such as sett down, is removing it already.)
		fmt.Fprintf(orDiscard(l.Stderr), "sett-worker: could not remove worker container %s (sett down removes it): %v\n", short(id), err)
	}
}

// removeDraining removes the worker while it keeps reading the worker's
// output stream into nothing. Without the reader, Docker blocks writing
// the dying worker's output to the attach connection, cannot finish the
// worker's exit, and the removal hangs to its timeout with the worker
// still there. The drain ends with the stream (the worker is gone) or
// when Run closes the connection.
func (l *Launcher) removeDraining(ctx context.Context, id string, stream io.Reader) {
	go func() { _, _ = io.Copy(io.Discard, stream) }()
	l.remove(ctx, id)
}

// WorkerEnv is the worker's environment built from the launcher's own,
// which the cub has already scrubbed (no Redis credentials): PATH is left
// to the worker image, and nothing that names the Docker daemon passes.
func WorkerEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		upper := strings.ToUpper(name)
		if name == "PATH" || strings.HasPrefix(upper, "DOCKER_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Self is this process's launcher identity: "host/pid/start", where start
// is the process's start time as the kernel reports it, so that a reused
// pid does not pass for the launcher that is gone.
func Self() string {
	host, _ := os.Hostname()
	pid := os.Getpid()
	return fmt.Sprintf("%s/%d/%s", host, pid, processStart(pid))
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// NewLauncher connects to spec.DockerHost and returns a Launcher for one
// grant, whose worker gets WorkerEnv(environ). Close it when done. Errors
// wrap ErrDocker.
func NewLauncher(spec Spec, environ []string, stdin io.Reader, stdout, stderr io.Writer) (*Launcher, error) {
	host := spec.DockerHost
	if host == "" {
		host = DefaultDockerHost
	}
	// API version negotiation: the launcher may be older or newer than
	// the daemon it is handed.
	cli, err := client.New(client.WithHost(host))
	if err != nil {
		return nil, fmt.Errorf("%w: client for %s: %v", ErrDocker, host, err)
	}
	return &Launcher{Spec: spec, Client: cli, Env: WorkerEnv(environ), Stdin: stdin, Stdout: stdout, Stderr: stderr}, nil
}

// Close closes the Docker client.
func (l *Launcher) Close() error {
	if l.Client == nil {
		return nil
	}
	return l.Client.Close()
}

// errOverCap ends the relay of a worker whose stdout passed the cap.
var errOverCap = errors.New("worker: stdout over the cap")

// cappedWriter passes at most limit bytes to w. The first write beyond
// calls over (which removes the worker) and only then passes one more
// byte, which tells the cub the tool went over its cap: the cub kills the
// launcher at once then, and the worker is already gone.
type cappedWriter struct {
	w       io.Writer
	limit   int64
	written int64
	over    func()
}

func (c *cappedWriter) Write(p []byte) (int, error) {
	if c.written+int64(len(p)) <= c.limit {
		n, err := c.w.Write(p)
		c.written += int64(n)
		return n, err
	}
	room := c.limit - c.written
	if room > 0 {
		n, err := c.w.Write(p[:room])
		c.written += int64(n)
		if err != nil {
			return n, err
		}
	}
	c.over()
	_, _ = c.w.Write(p[room : room+1])
	return int(room) + 1, errOverCap
}
