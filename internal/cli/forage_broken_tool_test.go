package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/stacktest"
)

// TestForageWaitBrokenToolFailsFast runs the real orchestrator and cub
// with a tool that cannot work: each workflow fails on the tool's first
// run, with the default retry policy (5 attempts, the first retry a
// minute later), and `forage --wait` names the cause.
func TestForageWaitBrokenToolFailsFast(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		command string
		script  string // written to agents/hello/hello.sh, mode 0644
		want    []string
	}{
		{
			name:    "tool not executable",
			command: `["agents/hello/hello.sh"]`,
			script:  "#!/bin/sh\necho '{\"artefact_type\": \"Plan\", \"artefact_payload\": \"x\"}'\n",
			want:    []string{"failed: agent coder failed (1 attempt(s))", "permission denied: agents/hello/hello.sh is not executable"},
		},
		{
			name:    "tool prints prose",
			command: `["/bin/sh", "-c", "echo Here is my plan: first we add the endpoint."]`,
			want:    []string{"failed: agent coder failed (1 attempt(s))", "unreadable_output", "stdout is not JSON"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			config := `version: "1.0"
orchestrator:
  bid_timeout: 2s
agents:
  coder:
    command: ` + tc.command + `
    bidding_strategy: exclusive
    consumes: ["GoalDefined"]
`
			s := stacktest.New(t, config)
			if tc.script != "" {
				dir := filepath.Join(s.Dir, "agents", "hello")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "hello.sh"), []byte(tc.script), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s.Up("coder")
			e := newTestEnv(t)
			e.env["SETT_REDIS_URL"] = s.Redis.URL()
			e.env["SETT_INSTANCE"] = s.Instance
			// 30 s bounds a loaded machine; a retry would come only after
			// a minute, so a pass means the first run was final.
			start := time.Now()
			out, _, err := e.run(t, "forage", "--goal", "Add a /health endpoint", "--wait", "--timeout", "30s")
			t.Logf("forage --wait took %s:\n%s", time.Since(start).Round(time.Millisecond), out)
			if code := ExitCode(err); code != ExitFailure {
				t.Fatalf("exit %d (%v), want %d (failed at once)\n%s", code, err, ExitFailure, out)
			}
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// TestForageWaitShowsAPendingRetry: a tool that fails in a way a retry may
// fix is retried, and while the retry waits for its backoff, `forage
// --wait`, `status` and `queue` say so, with the cause.
func TestForageWaitShowsAPendingRetry(t *testing.T) {
	t.Parallel()
	config := `version: "1.0"
orchestrator:
  bid_timeout: 2s
agents:
  coder:
    command: ["/bin/sh", "-c", "echo 'upstream said: connection refused' >&2; exit 1"]
    bidding_strategy: exclusive
    consumes: ["GoalDefined"]
    retry: {max_attempts: 3, backoff: [10m]}
`
	s := stacktest.New(t, config)
	s.Up("coder")
	e := newTestEnv(t)
	e.env["SETT_REDIS_URL"] = s.Redis.URL()
	e.env["SETT_INSTANCE"] = s.Instance
	e.app.Dir = s.Dir // status and queue read its sett.yml for the attempts
	start := time.Now()
	out, _, err := e.run(t, "forage", "--goal", "Add a /health endpoint", "--wait", "--timeout", "8s")
	t.Logf("forage --wait:\n%s", out)
	if code := ExitCode(err); code != ExitPending {
		t.Fatalf("exit %d (%v), want %d (still waiting for the retry)\n%s", code, err, ExitPending, out)
	}
	want := "coder: retry 2/3 in "
	cause := "exit_nonzero: exit status 1: upstream said: connection refused"
	if !strings.Contains(out, want) || !strings.Contains(out, cause) {
		t.Fatalf("forage --wait output lacks %q and %q after %s:\n%s", want, cause, time.Since(start).Round(time.Second), out)
	}
	for _, cmd := range [][]string{{"status"}, {"queue"}} {
		got, _, err := e.run(t, cmd...)
		if err != nil {
			t.Fatalf("sett %s: %v\n%s", cmd[0], err, got)
		}
		if !strings.Contains(got, want) || !strings.Contains(got, cause) {
			t.Errorf("sett %s lacks %q and %q:\n%s", cmd[0], want, cause, got)
		}
	}
}
