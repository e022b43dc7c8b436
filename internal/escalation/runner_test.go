package escalation

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/syncbuf"
	"github.com/settdev/sett/internal/tool"
)

// logBuffer is a goroutine-safe log sink.
type logBuffer struct{ syncbuf.Buffer }

// lines returns the logged JSON lines as maps.
func (l *logBuffer) lines(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		out = append(out, m)
	}
	return out
}

// event is what the orchestrator would pass.
type event struct {
	Type       string `json:"type"`
	WorkflowID string `json:"workflow_id"`
	Reason     string `json:"reason"`
}

var escalated = event{Type: "workflow_escalated", WorkflowID: "wf-1", Reason: "attempt 5 of 5 failed (timeout)"}

// newRunner returns a Runner for h logging into a buffer, and a channel
// that receives every Result. Close is registered as cleanup.
func newRunner(t *testing.T, h Hook) (*Runner, *logBuffer, <-chan Result) {
	t.Helper()
	logs := &logBuffer{}
	results := make(chan Result, 16)
	h.ResultFunc = func(r Result) { results <- r }
	r := New(h, zerolog.New(logs))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = r.Close(ctx)
	})
	return r, logs, results
}

// waitResult waits for one Result, failing after a generous deadline.
func waitResult(t *testing.T, results <-chan Result) Result {
	t.Helper()
	select {
	case res := <-results:
		return res
	case <-time.After(30 * time.Second):
		t.Fatal("no hook result within 30s")
		return Result{}
	}
}

func TestHookResults(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name        string
		command     []string
		timeout     time.Duration
		wantFailure tool.FailureKind
		wantExit    int
		wantLevel   string
		wantMsg     string
		wantStderr  string
	}{
		{name: "success", command: []string{"sh", "-c", "cat >/dev/null; echo sent"}, wantExit: 0, wantLevel: "info", wantMsg: "escalation hook ran"},
		{name: "failing hook is reported", command: []string{"sh", "-c", "echo 'smtp refused' >&2; exit 3"}, wantFailure: tool.FailureExitNonzero, wantExit: 3,
			wantLevel: "error", wantMsg: "escalation hook failed", wantStderr: "smtp refused\n"},
		{name: "missing command is reported", command: []string{filepath.Join(dir, "no-such-hook")}, wantFailure: tool.FailureStartFailed, wantExit: -1,
			wantLevel: "error", wantMsg: "escalation hook failed"},
		{name: "hanging hook is killed at the timeout", command: []string{"sh", "-c", "sleep 300"}, timeout: 200 * time.Millisecond,
			wantFailure: tool.FailureTimeout, wantExit: -1, wantLevel: "error", wantMsg: "escalation hook failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, logs, results := newRunner(t, Hook{Command: tt.command, Timeout: tt.timeout})
			if !r.Notify(context.Background(), escalated) {
				t.Fatal("Notify did not start the hook")
			}
			res := waitResult(t, results)
			if res.Failure != tt.wantFailure || res.ExitCode != tt.wantExit || res.Event != "workflow_escalated" || res.Stderr != tt.wantStderr {
				t.Fatalf("Result = %+v; want failure %q exit %d stderr %q", res, tt.wantFailure, tt.wantExit, tt.wantStderr)
			}
			if err := r.Close(context.Background()); err != nil {
				t.Fatalf("Close: %v", err)
			}
			lines := logs.lines(t)
			if len(lines) != 1 {
				t.Fatalf("logged %d lines, want 1: %v", len(lines), lines)
			}
			l := lines[0]
			if l["level"] != tt.wantLevel || l["message"] != tt.wantMsg || l["component"] != "escalation" ||
				l["event"] != "workflow_escalated" || l["exit_code"] != float64(tt.wantExit) || l["command"] != tt.command[0] {
				t.Fatalf("log line = %v", l)
			}
			if tt.wantFailure != "" && (l["failure"] != string(tt.wantFailure) || l["detail"] == "") {
				t.Fatalf("log line lacks the failure: %v", l)
			}
		})
	}
}

func TestHookReceivesTheEventOnStdin(t *testing.T) {
	out := filepath.Join(t.TempDir(), "event.json")
	r, _, results := newRunner(t, Hook{Command: []string{"sh", "-c", `cat > "$0"`, out}})
	if !r.Notify(context.Background(), escalated) {
		t.Fatal("Notify did not start the hook")
	}
	if res := waitResult(t, results); res.Failure != "" {
		t.Fatalf("hook failed: %+v", res)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(escalated)
	if !bytes.Equal(got, want) {
		t.Fatalf("stdin = %s, want %s", got, want)
	}
}

func TestHookIsKilledWithItsProcessGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	// The hook starts a grandchild and waits for it; both must die at the
	// timeout.
	r, _, results := newRunner(t, Hook{Command: []string{"sh", "-c", `sleep 300 & echo $! > "$0"; wait`, pidFile}, Timeout: 300 * time.Millisecond})
	r.Notify(context.Background(), escalated)
	if res := waitResult(t, results); res.Failure != tool.FailureTimeout {
		t.Fatalf("Result = %+v, want a timeout", res)
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	// The grandchild was sent SIGKILL; until its new parent reaps it, it
	// may linger as a zombie, which counts as gone.
	if !eventually.Within(10*time.Second, func() bool { return gone(pid) }) {
		t.Fatalf("grandchild %d still running after the hook's timeout", pid)
	}
}

// gone reports whether pid no longer runs (absent, or a zombie).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return os.IsNotExist(err)
	}
	// The state follows the command name in parentheses.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

func TestNotifyNeverBlocksAndDropsBeyondTheBound(t *testing.T) {
	release := filepath.Join(t.TempDir(), "release")
	// The hook waits for the release file, so it is still running when
	// the next Notify comes.
	r, logs, results := newRunner(t, Hook{Command: []string{"sh", "-c", `while [ ! -e "$0" ]; do sleep 0.01; done`, release}, MaxConcurrent: 1})

	if !r.Notify(context.Background(), escalated) {
		t.Fatal("first Notify did not start the hook")
	}
	if r.Notify(context.Background(), escalated) {
		t.Fatal("second Notify started a hook beyond MaxConcurrent 1")
	}
	if got := r.Dropped(); got != 1 {
		t.Fatalf("Dropped = %d, want 1", got)
	}
	lines := logs.lines(t)
	if len(lines) != 1 || lines[0]["level"] != "warn" || !strings.Contains(lines[0]["message"].(string), "dropped") || lines[0]["max_concurrent"] != float64(1) {
		t.Fatalf("log = %v, want one warning about the dropped run", lines)
	}

	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if res := waitResult(t, results); res.Failure != "" {
		t.Fatalf("first hook failed: %+v", res)
	}
	// Its slot is free again.
	if !r.Notify(context.Background(), escalated) {
		t.Fatal("Notify after the first run ended did not start the hook")
	}
	waitResult(t, results)
	if err := r.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if r.Notify(context.Background(), escalated) {
		t.Fatal("Notify after Close started a hook")
	}
}

func TestCloseKillsHooksWhenItsContextEnds(t *testing.T) {
	r, _, results := newRunner(t, Hook{Command: []string{"sh", "-c", "sleep 300"}, Timeout: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	r.Notify(ctx, escalated)
	cancel() // the caller's context ending does not stop the hook ...
	closeCtx, stop := context.WithCancel(context.Background())
	stop() // ... but Close's does
	if err := r.Close(closeCtx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Close = %v, want context.Canceled", err)
	}
	if res := waitResult(t, results); res.Failure != tool.FailureCanceled {
		t.Fatalf("Result = %+v, want canceled", res)
	}
}

func TestNotifyRefusals(t *testing.T) {
	tests := []struct {
		name     string
		hook     Hook
		event    any
		wantLogs int
	}{
		{name: "disabled without a command", hook: Hook{}, event: escalated, wantLogs: 0},
		{name: "an event that is not JSON", hook: Hook{Command: []string{"true"}}, event: make(chan int), wantLogs: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, logs, _ := newRunner(t, tt.hook)
			if r.Notify(context.Background(), tt.event) {
				t.Fatal("Notify started a hook")
			}
			if got := len(logs.lines(t)); got != tt.wantLogs {
				t.Fatalf("logged %d lines, want %d", got, tt.wantLogs)
			}
		})
	}
}

func TestOutputIsTruncatedForTheLog(t *testing.T) {
	r, _, results := newRunner(t, Hook{Command: []string{"sh", "-c", "cat >/dev/null; head -c 10000 /dev/zero | tr '\\0' x"}, MaxLogOutput: 100})
	r.Notify(context.Background(), escalated)
	res := waitResult(t, results)
	if want := strings.Repeat("x", 100) + "… (10000 bytes in all)"; res.Stdout != want {
		t.Fatalf("Stdout = %q, want %q", res.Stdout, want)
	}
}

func TestEnvironmentWithoutRedis(t *testing.T) {
	got := withoutRedis([]string{"PATH=/bin", "SETT_REDIS_PASSWORD=x", "REDIS_URL=y", "my_redis=z", "SLACK_WEBHOOK_URL=w"})
	if want := []string{"PATH=/bin", "SLACK_WEBHOOK_URL=w"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("withoutRedis = %q, want %q", got, want)
	}
}
