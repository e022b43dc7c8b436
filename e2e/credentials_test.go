package e2e

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/pkg/blackboard"
)

// A tool sees the contract's variables and its configured environment, and
// no Redis credentials — although its container's cub has them — and
// cannot see into the workspace's .sett (instance records, the saved
// password).
func TestToolSeesNoRedisCredentials(t *testing.T) {
	t.Parallel()
	h := setup(t)
	s := newStack(t, h, `version: "1.0"
orchestrator:
  bid_timeout: 3s
agents:
  envdump:
    image: sett-cub:local
    consumes: ["GoalDefined"]
    environment:
      GREETING: hello
    command:
      - sh
      - -c
      - |
        cat >/dev/null
        out=$( { env; echo '--- .sett:'; ls -AR /workspace/.sett 2>&1; echo '--- cub environ:'; tr '\0' '\n' </proc/1/environ 2>&1; } | base64 -w0)
        printf '{"artefact_type":"EnvDump","artefact_payload":"%s","summary":"the tool environment"}\n' "$out"
`)
	rec := s.mustUp()
	password := passwordOf(t, rec.RedisURL)

	// The credentials are in the container (the cub needs them) ...
	env := strings.Join(s.container("envdump").Container.Config.Env, "\n")
	if !strings.Contains(env, "SETT_REDIS_URL=") || !strings.Contains(env, password) {
		t.Fatalf("the cub's container lacks the Redis URL with the password: the test would prove nothing")
	}

	wf := s.postGoal("Show me your environment")
	if w := s.waitWorkflow(wf, 2*time.Minute); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s: %s (%s)", wf, w.Status, w.Outcome)
	}
	dumps := byType(s.artefacts(wf))["EnvDump"]
	if len(dumps) != 1 {
		t.Fatalf("%d EnvDump artefacts, want 1", len(dumps))
	}
	raw, err := base64.StdEncoding.DecodeString(dumps[0].Payload)
	if err != nil {
		t.Fatalf("payload %q: %v", dumps[0].Payload, err)
	}
	toolEnv, rest, _ := strings.Cut(string(raw), "--- .sett:")
	settDir, cubEnv, _ := strings.Cut(rest, "--- cub environ:")
	// The cub (pid 1) makes itself non-dumpable, so its /proc files are
	// root-owned and the tool, running as the same user, cannot read the
	// credentials from the cub's environment either.
	if strings.Contains(cubEnv, password) || strings.Contains(cubEnv, "SETT_REDIS_URL") {
		t.Errorf("the tool read the cub's environment from /proc/1/environ: %q", cubEnv)
	}
	t.Logf("the tool's attempt to read /proc/1/environ: %q", strings.TrimSpace(cubEnv))
	t.Logf("tool environment:\n%s", toolEnv)
	for _, want := range []string{"SETT_AGENT=envdump", "SETT_INSTANCE=" + s.name, "SETT_WORKSPACE=/workspace", "GREETING=hello"} {
		if !strings.Contains(toolEnv, want) {
			t.Errorf("the tool's environment lacks %s", want)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(toolEnv), "\n") {
		name, value, _ := strings.Cut(line, "=")
		if strings.Contains(strings.ToUpper(name), "REDIS") || strings.Contains(value, password) || strings.Contains(value, "redis://") {
			t.Errorf("the tool sees Redis credentials: %s", line)
		}
	}
	// On the host, .sett holds the saved password; the tool sees none of it.
	if _, err := os.Stat(filepath.Join(s.dir, ".sett", "docker", s.name, "redis.password")); err != nil {
		t.Fatalf("no saved password on the host: the check below would prove nothing (%v)", err)
	}
	t.Logf("the tool's view of /workspace/.sett: %q", settDir)
	if strings.Contains(settDir, "redis.password") || strings.Contains(settDir, "docker") {
		t.Errorf("the tool sees into the workspace's .sett: %q", settDir)
	}
}
