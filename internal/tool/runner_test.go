//go:build linux

package tool

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestFailureKindValid(t *testing.T) {
	want := []FailureKind{"start_failed", "exit_nonzero", "signaled", "timeout", "stdout_too_large", "canceled"}
	if got := AllFailureKinds(); !slices.Equal(got, want) {
		t.Fatalf("AllFailureKinds() = %v, want %v", got, want)
	}
	for _, k := range want {
		if !k.Valid() {
			t.Errorf("FailureKind(%q).Valid() = false", k)
		}
	}
	for _, k := range []FailureKind{"", "Timeout", "oom"} {
		if k.Valid() {
			t.Errorf("FailureKind(%q).Valid() = true", k)
		}
	}
}

func TestRunSuccess(t *testing.T) {
	out := []byte(`{"artefact_type":"Plan","artefact_payload":"do it","summary":"plan"}`)
	s := fixtureSpec(t, "echo-stdin")
	s.Stdin = out
	r := runBounded(t, t.Context(), s)

	if r.Failure != "" || r.Detail != "" || r.ExitCode != 0 {
		t.Fatalf("Run() failure = %q (%s), exit code %d; want success", r.Failure, r.Detail, r.ExitCode)
	}
	if !bytes.Equal(r.Stdout, out) || !bytes.Equal(r.StdoutTail, out) || r.StdoutBytes != int64(len(out)) {
		t.Errorf("stdout = %q, tail %q, %d bytes; want %q", r.Stdout, r.StdoutTail, r.StdoutBytes, out)
	}
	if r.StderrBytes != 0 || r.StderrTail != nil {
		t.Errorf("stderr = %q (%d bytes), want none", r.StderrTail, r.StderrBytes)
	}
	if r.Duration <= 0 {
		t.Errorf("Duration = %v, want > 0", r.Duration)
	}
	if _, err := ParseOutput(r.Stdout, ClaimTypeExclusive, 1024); err != nil {
		t.Errorf("ParseOutput(stdout) error = %v", err)
	}
}

func TestRunStdinNotRead(t *testing.T) {
	// Far more than a pipe buffer, to a tool that never reads it.
	s := fixtureSpec(t, "exit", "0", "not reading")
	s.Stdin = bytes.Repeat([]byte("x"), 1<<20)
	r := runBounded(t, t.Context(), s)
	if r.Failure != "" {
		t.Fatalf("Run() failure = %q (%s), want success", r.Failure, r.Detail)
	}
}

func TestRunExitNonzero(t *testing.T) {
	tests := []struct {
		name       string
		command    []string // nil: the fixture with args
		args       []string
		wantCode   int
		wantStderr string
	}{
		{name: "fixture", args: []string{"exit", "3", "boom: config missing"}, wantCode: 3, wantStderr: "boom: config missing\n"},
		{name: "shell script", command: []string{"sh", "-c", "echo partial; echo oops >&2; exit 7"}, wantCode: 7, wantStderr: "oops\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := fixtureSpec(t, tt.args...)
			if tt.command != nil {
				s.Command = tt.command
			}
			r := runBounded(t, t.Context(), s)
			if r.Failure != FailureExitNonzero || r.ExitCode != tt.wantCode {
				t.Fatalf("Run() failure = %q, exit code %d; want %q, %d", r.Failure, r.ExitCode, FailureExitNonzero, tt.wantCode)
			}
			if want := "exit status " + itoa(tt.wantCode); r.Detail != want {
				t.Errorf("Detail = %q, want %q", r.Detail, want)
			}
			if string(r.StderrTail) != tt.wantStderr || string(r.Stderr) != tt.wantStderr {
				t.Errorf("stderr = %q, tail %q; want %q", r.Stderr, r.StderrTail, tt.wantStderr)
			}
		})
	}
}

func TestRunSignaled(t *testing.T) {
	r := runBounded(t, t.Context(), fixtureSpec(t, "kill-self"))
	if r.Failure != FailureSignaled || r.ExitCode != -1 {
		t.Fatalf("Run() failure = %q (%s), exit code %d; want %q, -1", r.Failure, r.Detail, r.ExitCode, FailureSignaled)
	}
	if want := "terminated by signal 15 (terminated)"; r.Detail != want {
		t.Errorf("Detail = %q, want %q", r.Detail, want)
	}
}

func TestRunTimeoutKillsProcessGroup(t *testing.T) {
	// The tool ignores SIGTERM and leaves a grandchild that ignores SIGTERM
	// too and holds stdout open; only SIGKILL to the group ends both.
	s := fixtureSpec(t, "spawn-and-hang")
	s.Timeout = 2 * time.Second
	r := runBounded(t, t.Context(), s)

	if r.Failure != FailureTimeout || r.ExitCode != -1 {
		t.Fatalf("Run() failure = %q (%s), exit code %d; want %q, -1", r.Failure, r.Detail, r.ExitCode, FailureTimeout)
	}
	if want := "killed after timeout of 2s"; r.Detail != want {
		t.Errorf("Detail = %q, want %q", r.Detail, want)
	}
	waitDead(t, grandchildPID(t, r.Stdout))
}

func TestRunGrandchildOutlivingTheTool(t *testing.T) {
	// The tool exits at once and successfully, but leaves a grandchild
	// holding stdout and stderr open; Run must not wait for it.
	r := runBounded(t, t.Context(), fixtureSpec(t, "spawn-and-exit"))

	if r.Failure != "" || r.ExitCode != 0 {
		t.Fatalf("Run() failure = %q (%s), exit code %d; want success", r.Failure, r.Detail, r.ExitCode)
	}
	if _, err := ParseOutput(r.Stdout, ClaimTypeClaim, 0); err != nil {
		t.Errorf("ParseOutput(stdout) error = %v", err)
	}
	waitDead(t, grandchildPID(t, r.Stderr))
}

func TestRunStdoutTooLarge(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		maxStdout int
		wantCap   int
		wantFail  bool
	}{
		// The tool hangs after writing, so only the kill lets Run return.
		{name: "20 MB against the default cap", args: []string{"flood-stdout", "20000000", "hang"}, wantCap: DefaultMaxStdout, wantFail: true},
		// Most of this is still in the pipe when the tool exits by itself.
		{name: "small cap crossed before a clean exit", args: []string{"flood-stdout", "5000"}, maxStdout: 1000, wantCap: 1000, wantFail: true},
		{name: "exactly the cap", args: []string{"flood-stdout", "1000"}, maxStdout: 1000, wantCap: 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := fixtureSpec(t, tt.args...)
			s.MaxStdout = tt.maxStdout
			r := runBounded(t, t.Context(), s)

			if !tt.wantFail {
				if r.Failure != "" || len(r.Stdout) != tt.wantCap {
					t.Fatalf("Run() failure = %q (%s), %d bytes kept; want success with %d", r.Failure, r.Detail, len(r.Stdout), tt.wantCap)
				}
				return
			}
			if r.Failure != FailureStdoutTooLarge {
				t.Fatalf("Run() failure = %q (%s), want %q", r.Failure, r.Detail, FailureStdoutTooLarge)
			}
			if want := "stdout exceeded " + itoa(tt.wantCap) + " bytes"; r.Detail != want {
				t.Errorf("Detail = %q, want %q", r.Detail, want)
			}
			if len(r.Stdout) != tt.wantCap {
				t.Errorf("kept %d bytes of stdout, want exactly the cap %d", len(r.Stdout), tt.wantCap)
			}
			if r.StdoutBytes <= int64(tt.wantCap) {
				t.Errorf("StdoutBytes = %d, want more than the cap %d", r.StdoutBytes, tt.wantCap)
			}
			if len(r.StdoutTail) != min(tailSize, int(r.StdoutBytes)) {
				t.Errorf("StdoutTail has %d bytes, want %d", len(r.StdoutTail), min(tailSize, int(r.StdoutBytes)))
			}
		})
	}
}

func TestRunHugeStderr(t *testing.T) {
	const n = 10_000_000
	s := fixtureSpec(t, "flood-stderr", itoa(n))
	s.MaxStderr = 1 << 20
	r := runBounded(t, t.Context(), s)

	if r.Failure != "" {
		t.Fatalf("Run() failure = %q (%s), want success: stderr beyond its cap is not a failure", r.Failure, r.Detail)
	}
	if want := int64(n + len("\nEND-OF-STDERR\n")); r.StderrBytes != want {
		t.Errorf("StderrBytes = %d, want %d", r.StderrBytes, want)
	}
	if len(r.Stderr) != 1<<20 {
		t.Errorf("kept %d bytes of stderr, want the cap %d", len(r.Stderr), 1<<20)
	}
	if len(r.StderrTail) != tailSize || !bytes.HasSuffix(r.StderrTail, []byte("eee\nEND-OF-STDERR\n")) {
		t.Errorf("StderrTail has %d bytes ending in %q; want %d ending in END-OF-STDERR",
			len(r.StderrTail), r.StderrTail[max(0, len(r.StderrTail)-20):], tailSize)
	}
	if _, err := ParseOutput(r.Stdout, ClaimTypeClaim, 0); err != nil {
		t.Errorf("ParseOutput(stdout) error = %v", err)
	}
}

func TestRunCanceled(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "ready")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancelCause(t.Context())
	defer cancel(nil)

	done := make(chan Result, 1)
	go func() { done <- Run(ctx, fixtureSpec(t, "hang-fifo", fifo)) }()

	// Opening the FIFO blocks until the tool opens it for writing, so the
	// tool is certainly running when the context is canceled.
	ready := make(chan error, 1)
	go func() {
		b, err := os.ReadFile(fifo)
		if err == nil && string(b) != "ready\n" {
			err = errors.New("unexpected " + string(b))
		}
		ready <- err
	}()
	select {
	case err := <-ready:
		if err != nil {
			t.Fatal(err)
		}
	case r := <-done:
		t.Fatalf("Run() returned before the tool was ready: %q (%s)", r.Failure, r.Detail)
	}
	cancel(errors.New("cub shutting down"))

	select {
	case r := <-done:
		if r.Failure != FailureCanceled || r.ExitCode != -1 {
			t.Fatalf("Run() failure = %q (%s), exit code %d; want %q, -1", r.Failure, r.Detail, r.ExitCode, FailureCanceled)
		}
		if !strings.Contains(r.Detail, "cub shutting down") {
			t.Errorf("Detail = %q, want the cancellation cause", r.Detail)
		}
	case <-time.After(2 * time.Minute):
		t.Fatal("Run() did not return after cancellation")
	}
}

func TestRunCanceledBeforeStart(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	r := runBounded(t, ctx, fixtureSpec(t, "exit", "0", "x"))
	if r.Failure != FailureCanceled || !strings.HasPrefix(r.Detail, "canceled before start") {
		t.Fatalf("Run() failure = %q (%s), want %q before start", r.Failure, r.Detail, FailureCanceled)
	}
}

func TestRunStartFailure(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "tool.sh")
	writeFile(t, notExec, 0o644)
	badInterp := filepath.Join(t.TempDir(), "tool.py")
	if err := os.WriteFile(badInterp, []byte("#!/nonexistent/python3 -u\nprint('{}')\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		mutate     func(*Spec)
		wantDetail string
	}{
		{
			name:       "missing binary",
			mutate:     func(s *Spec) { s.Command = []string{"sett-no-such-tool", "--flag"} },
			wantDetail: `executable "sett-no-such-tool" not found in the child's PATH "/usr/bin:/bin"`,
		},
		{
			name:       "missing binary by path",
			mutate:     func(s *Spec) { s.Command = []string{"/nonexistent/tool"} },
			wantDetail: "no such file or directory: /nonexistent/tool does not exist",
		},
		{
			name:       "not executable",
			mutate:     func(s *Spec) { s.Command = []string{notExec} },
			wantDetail: "permission denied",
		},
		{
			name: "not executable, relative to the workspace",
			mutate: func(s *Spec) {
				s.Dir, s.Command = filepath.Dir(notExec), []string{"./tool.sh"}
			},
			wantDetail: "permission denied: ./tool.sh is not executable (chmod +x ./tool.sh)",
		},
		{
			name:       "missing script in the workspace",
			mutate:     func(s *Spec) { s.Command = []string{"agents/hello/hello.sh"} },
			wantDetail: "no such file or directory: agents/hello/hello.sh does not exist in ",
		},
		{
			name:       "bad interpreter",
			mutate:     func(s *Spec) { s.Command = []string{badInterp} },
			wantDetail: "bad interpreter: " + badInterp + " starts with #!/nonexistent/python3, which does not exist here",
		},
		{
			name:       "a directory",
			mutate:     func(s *Spec) { s.Command = []string{filepath.Dir(notExec)} },
			wantDetail: "is a directory, not a program",
		},
		{
			name:       "working directory missing",
			mutate:     func(s *Spec) { s.Dir = filepath.Join(s.Dir, "gone") },
			wantDetail: "no such file or directory",
		},
		{
			name:       "no command",
			mutate:     func(s *Spec) { s.Command = nil },
			wantDetail: "no command to run",
		},
		{
			name:       "the child's PATH is searched, not ours",
			mutate:     func(s *Spec) { s.Command = []string{"fixture", "exit", "0", "x"} },
			wantDetail: `executable "fixture" not found`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := fixtureSpec(t, "exit", "0", "x")
			tt.mutate(&s)
			r := runBounded(t, t.Context(), s)
			if r.Failure != FailureStartFailed || r.ExitCode != -1 {
				t.Fatalf("Run() failure = %q (%s), exit code %d; want %q, -1", r.Failure, r.Detail, r.ExitCode, FailureStartFailed)
			}
			if !strings.Contains(r.Detail, tt.wantDetail) {
				t.Errorf("Detail = %q, want it to contain %q", r.Detail, tt.wantDetail)
			}
		})
	}
}

func TestRunFindsCommandInChildPath(t *testing.T) {
	s := fixtureSpec(t, "exit", "0", "found")
	s.Command[0] = "fixture"
	s.Env = []string{"PATH=/nonexistent:" + filepath.Dir(fixture(t))}
	r := runBounded(t, t.Context(), s)
	if r.Failure != "" || string(r.Stderr) != "found\n" {
		t.Fatalf("Run() failure = %q (%s), stderr %q; want success", r.Failure, r.Detail, r.Stderr)
	}
}

func TestRunEnvScrubbed(t *testing.T) {
	base := []string{
		"PATH=/usr/bin:/bin",
		"HOME=/home/cub",
		"LANG=C.UTF-8",
		"REDIS_URL=redis://:hunter2@redis:6379/0",
		"SETT_REDIS_PASSWORD=hunter2",
		"DOCKER_HOST=unix:///var/run/docker.sock",
	}
	extra := map[string]string{
		"SETT_INSTANCE": "dev", "SETT_AGENT": "coder", "SETT_CLAIM_ID": "c1", "SETT_WORKSPACE": "/workspace",
	}
	s := fixtureSpec(t, "env")
	s.Env = ScrubbedEnv(base, []string{"REDIS_URL"}, extra)
	r := runBounded(t, t.Context(), s)
	if r.Failure != "" {
		t.Fatalf("Run() failure = %q (%s)", r.Failure, r.Detail)
	}

	got := strings.Split(strings.TrimSpace(string(r.Stdout)), "\n")
	slices.Sort(got)
	want := []string{
		"HOME=/home/cub", "LANG=C.UTF-8", "PATH=/usr/bin:/bin",
		"SETT_AGENT=coder", "SETT_CLAIM_ID=c1", "SETT_INSTANCE=dev", "SETT_WORKSPACE=/workspace",
	}
	if !slices.Equal(got, want) {
		t.Errorf("the tool saw\n%q\nwant\n%q", got, want)
	}
	if bytes.Contains(r.Stdout, []byte("hunter2")) {
		t.Errorf("Redis credentials reached the tool:\n%s", r.Stdout)
	}
}

func TestRunNilEnvInheritsNothing(t *testing.T) {
	t.Setenv("SETT_REDIS_PASSWORD", "hunter2")
	s := fixtureSpec(t, "env")
	s.Env = nil
	r := runBounded(t, t.Context(), s)
	if r.Failure != "" {
		t.Fatalf("Run() failure = %q (%s)", r.Failure, r.Detail)
	}
	if r.StdoutBytes != 0 {
		t.Errorf("a nil Env gave the tool the environment\n%s", r.Stdout)
	}
}

func TestRunFailureReport(t *testing.T) {
	r := runBounded(t, t.Context(), fixtureSpec(t, "exit", "4", "fatal: cannot parse plan"))
	report := FailureReport(r, []string{"tool", "--plan", "a b"})
	for _, want := range []string{
		"Tool execution failed: exit status 4\n",
		"command:     tool --plan 'a b'\n",
		"failure:     exit_nonzero\n",
		"exit code:   4\n",
		"--- stderr: all 25 bytes ---\nfatal: cannot parse plan\n--- end of stderr ---\n",
		"--- stdout: empty ---\n",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report\n%s\nlacks %q", report, want)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// TestRunStopGrace cancels tools that handle SIGTERM and that ignore it:
// the first gets the grace period to clean up, the second is killed when
// it runs out.
func TestRunStopGrace(t *testing.T) {
	tests := []struct {
		name        string
		trap        string
		cause       error
		wantCleaned bool
	}{
		{name: "a tool that cleans up on SIGTERM", trap: `trap 'echo cleaned > marker; exit 0' TERM`, wantCleaned: true},
		{name: "a tool that ignores SIGTERM", trap: `trap '' TERM`, wantCleaned: false},
		// A lease that could not be renewed: no SIGTERM, no grace, so the
		// tool never gets to clean up.
		{name: "stopped at once", trap: `trap 'echo cleaned > marker; exit 0' TERM`, cause: ErrStopNow, wantCleaned: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "ready")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			s := Spec{
				Command:   []string{"sh", "-c", tt.trap + `; echo ready > ready; while :; do sleep 0.02; done`},
				Dir:       dir,
				Env:       []string{"PATH=/usr/bin:/bin"},
				StopGrace: 300 * time.Millisecond,
			}
			if tt.cause != nil {
				s.StopGrace = time.Hour // only skipping it lets the test end
			}
			ctx, cancel := context.WithCancelCause(t.Context())
			defer cancel(nil)
			done := make(chan Result, 1)
			go func() { done <- Run(ctx, s) }()
			if b, err := os.ReadFile(fifo); err != nil || string(b) != "ready\n" {
				t.Fatalf("waiting for the tool: %q, %v", b, err)
			}
			cause := tt.cause
			if cause == nil {
				cause = errors.New("workflow cancelled")
			}
			cancel(cause)
			var r Result
			select {
			case r = <-done:
			case <-time.After(2 * time.Minute):
				t.Fatal("Run() did not return after cancellation")
			}
			if r.Failure != FailureCanceled {
				t.Errorf("Run() failure = %q (%s), want %q", r.Failure, r.Detail, FailureCanceled)
			}
			_, err := os.Stat(filepath.Join(dir, "marker"))
			if cleaned := err == nil; cleaned != tt.wantCleaned {
				t.Errorf("cleaned up = %v, want %v", cleaned, tt.wantCleaned)
			}
		})
	}
}
