package escalation

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/tool"
)

// Defaults of a Hook.
const (
	DefaultTimeout       = 10 * time.Second
	DefaultMaxConcurrent = 4
	// DefaultMaxLogOutput is how much of each of stdout and stderr is
	// logged, in bytes.
	DefaultMaxLogOutput = 2048
	// maxStdout caps what is read of a hook's stdout; a hook that prints
	// more is killed (it is a notifier, not a producer).
	maxStdout = 1 << 20
	maxStderr = 64 << 10
)

// Hook describes the escalation command (escalation in sett.yml).
type Hook struct {
	// Command is the argv of the hook. Empty: escalation is disabled.
	Command []string
	// Timeout bounds one run; then the hook's process group is killed.
	// 0: DefaultTimeout.
	Timeout time.Duration
	// MaxConcurrent bounds the runs at one time; a run beyond it is
	// dropped. 0: DefaultMaxConcurrent.
	MaxConcurrent int
	// Env is the hook's complete environment. nil: this process's
	// environment without any variable whose name contains REDIS, so
	// Redis credentials never reach the hook while its own settings (a
	// webhook URL, a mail relay) do.
	Env []string
	// Dir is the hook's working directory; "" is this process's.
	Dir string
	// MaxLogOutput is how many bytes of stdout and of stderr are logged.
	// 0: DefaultMaxLogOutput.
	MaxLogOutput int
	// ResultFunc, when set, is called after every run from the run's own
	// goroutine (for metrics and tests). It must not block for long.
	ResultFunc func(Result)
}

// Result is what one run of the hook did.
type Result struct {
	// Event is the "type" field of the event, when it has one.
	Event string
	// Failure is "" on success, else the runner's failure kind
	// (start_failed, exit_nonzero, signaled, timeout, stdout_too_large,
	// canceled).
	Failure tool.FailureKind
	// Detail says what went wrong, "" on success.
	Detail string
	// ExitCode is the exit status, -1 when the hook did not exit on its
	// own.
	ExitCode int
	Duration time.Duration
	// Stdout and Stderr are the start of each stream, truncated to
	// MaxLogOutput bytes (with a note of the full size when cut).
	Stdout, Stderr string
}

// Runner runs a Hook. It is safe for concurrent use. The zero Runner is
// not usable; use New.
type Runner struct {
	hook  Hook
	log   zerolog.Logger
	slots chan struct{}

	mu      sync.Mutex
	closed  bool
	running sync.WaitGroup
	cancels map[int]context.CancelFunc
	next    int

	dropped atomic.Int64
}

// New returns a Runner for h that logs through log (a child logger with
// component=escalation is derived from it). It reads the process
// environment once when h.Env is nil.
func New(h Hook, log zerolog.Logger) *Runner {
	if h.Timeout <= 0 {
		h.Timeout = DefaultTimeout
	}
	if h.MaxConcurrent <= 0 {
		h.MaxConcurrent = DefaultMaxConcurrent
	}
	if h.MaxLogOutput <= 0 {
		h.MaxLogOutput = DefaultMaxLogOutput
	}
	if h.Env == nil {
		h.Env = withoutRedis(os.Environ())
	}
	return &Runner{
		hook:    h,
		log:     log.With().Str("component", "escalation").Logger(),
		slots:   make(chan struct{}, h.MaxConcurrent),
		cancels: make(map[int]context.CancelFunc),
	}
}

// Enabled reports whether a command is configured.
func (r *Runner) Enabled() bool { return len(r.hook.Command) > 0 }

// Dropped returns how many runs were dropped because MaxConcurrent runs
// were already going.
func (r *Runner) Dropped() int64 { return r.dropped.Load() }

// Notify starts the hook with event, encoded as JSON, on its stdin, and
// returns at once: true when a run started; false when escalation is
// disabled, the Runner is closed, the event cannot be encoded, or
// MaxConcurrent runs are going (the last three are logged). The run
// outlives ctx's cancellation (ctx only carries values): it is bounded by
// the hook's timeout and by Close.
func (r *Runner) Notify(ctx context.Context, event any) bool {
	if !r.Enabled() {
		return false
	}
	data, err := json.Marshal(event)
	if err != nil {
		r.log.Error().Err(err).Msg("escalation event cannot be encoded as JSON; hook not run")
		return false
	}
	eventType := typeOf(data)

	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		r.log.Warn().Str("event", eventType).Msg("escalation hook not run: the runner is closed")
		return false
	}
	select {
	case r.slots <- struct{}{}:
	default:
		n := r.dropped.Add(1)
		r.log.Warn().Str("event", eventType).Int("max_concurrent", r.hook.MaxConcurrent).Int64("dropped_total", n).
			Msg("escalation hook dropped: too many runs are still going")
		return false
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	id := r.next
	r.next++
	r.cancels[id] = cancel
	r.running.Add(1)
	go r.run(runCtx, id, eventType, data)
	return true
}

// Close stops new runs and waits for the running ones. When ctx ends
// first, it kills the running hooks, waits for them to be gone, and
// returns ctx's error. Close is safe to call more than once.
func (r *Runner) Close(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()

	done := make(chan struct{})
	go func() {
		r.running.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
	}
	r.mu.Lock()
	for _, cancel := range r.cancels {
		cancel()
	}
	r.mu.Unlock()
	<-done
	return ctx.Err()
}

func (r *Runner) run(ctx context.Context, id int, eventType string, data []byte) {
	defer r.running.Done()
	res := tool.Run(ctx, tool.Spec{
		Command:   r.hook.Command,
		Dir:       r.hook.Dir,
		Env:       r.hook.Env,
		Stdin:     data,
		Timeout:   r.hook.Timeout,
		MaxStdout: maxStdout,
		MaxStderr: maxStderr,
	})
	r.mu.Lock()
	r.cancels[id]()
	delete(r.cancels, id)
	r.mu.Unlock()
	<-r.slots

	out := Result{
		Event:    eventType,
		Failure:  res.Failure,
		Detail:   res.Detail,
		ExitCode: res.ExitCode,
		Duration: res.Duration,
		Stdout:   truncate(res.Stdout, res.StdoutBytes, r.hook.MaxLogOutput),
		Stderr:   truncate(res.Stderr, res.StderrBytes, r.hook.MaxLogOutput),
	}
	ev := r.log.Info()
	msg := "escalation hook ran"
	if out.Failure != "" {
		ev, msg = r.log.Error(), "escalation hook failed"
		ev = ev.Str("failure", string(out.Failure)).Str("detail", out.Detail)
	}
	ev.Str("event", eventType).Str("command", r.hook.Command[0]).Int("exit_code", out.ExitCode).
		Dur("duration", out.Duration).Str("stdout", out.Stdout).Str("stderr", out.Stderr).Msg(msg)
	if r.hook.ResultFunc != nil {
		r.hook.ResultFunc(out)
	}
}

// typeOf returns the "type" field of a JSON object, or "".
func typeOf(data []byte) string {
	var v struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(data, &v) // events without a type are fine
	return v.Type
}

// truncate returns at most n bytes of b as valid UTF-8, noting the full
// size total when it cuts.
func truncate(b []byte, total int64, n int) string {
	if int64(len(b)) <= int64(n) && int64(len(b)) == total {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	cut := min(n, len(b))
	for cut > 0 && cut < len(b) && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return strings.ToValidUTF8(string(b[:cut]), "\uFFFD") + fmt.Sprintf("… (%d bytes in all)", total)
}

// withoutRedis drops the variables whose name mentions REDIS.
func withoutRedis(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.Contains(strings.ToUpper(name), "REDIS") {
			out = append(out, kv)
		}
	}
	return out
}
