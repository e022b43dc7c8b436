package e2e

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/instance"
)

// zombieChildren counts the zombie children of host pid parent.
func zombieChildren(parent int) int {
	n := 0
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		b, err := os.ReadFile("/proc/" + p.Name() + "/stat")
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) > 2 && f[0] == "Z" && f[1] == strconv.Itoa(parent) {
			n++
		}
	}
	return n
}

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
        (sh -c 'exit 0' &) ; (sh -c 'exit 0' &) ; (sh -c 'exit 0' &)
        out=$( { env; echo '--- .sett:'; ls -AR /workspace/.sett 2>&1; echo '--- cub environ:'; tr '\0' '\n' </proc/1/environ 2>&1;
          echo '--- every process:'; for p in /proc/[0-9]*; do tr '\0' ' ' <$p/environ 2>/dev/null; tr '\0' ' ' <$p/cmdline 2>/dev/null; echo; done;
          echo '--- root fs:'; (touch /probe 2>&1 && echo "root is writable") ; (touch /tmp/probe && echo "tmp is writable"); } | base64 -w0)
        printf '{"artefact_type":"EnvDump","artefact_payload":"%s","summary":"the tool environment"}\n' "$out"
`)
	rec := s.mustUp()
	adminPassword := passwordOf(t, rec.RedisURL)

	// The credentials are in the container (the cub needs them): the
	// cub's own ACL user, never the instance's default password ...
	env := strings.Join(s.container("envdump").Container.Config.Env, "\n")
	var cubURL string
	for _, kv := range s.container("envdump").Container.Config.Env {
		if v, ok := strings.CutPrefix(kv, "SETT_REDIS_URL="); ok {
			cubURL = v
		}
	}
	if cubURL == "" {
		t.Fatalf("the cub's container lacks the Redis URL: the test would prove nothing")
	}
	password := passwordOf(t, cubURL)
	if strings.Contains(env, adminPassword) || !strings.Contains(cubURL, "sett-"+rec.Name+"-cub-envdump:") {
		t.Fatalf("the cub's container should reach Redis as its own ACL user, not with the instance password: %s", env)
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
	settDir, rest, _ := strings.Cut(rest, "--- cub environ:")
	cubEnv, rest, _ := strings.Cut(rest, "--- every process:")
	// The script's text (in the process dump) names the last header too:
	// the real section is the last one.
	i := strings.LastIndex(rest, "--- root fs:\n")
	if i < 0 {
		t.Fatalf("no root fs section in %q", rest)
	}
	procs, rootFS := rest[:i], rest[i:]
	if strings.Contains(procs, password) || strings.Contains(procs, "SETT_REDIS_URL=") {
		t.Errorf("the tool read the Redis URL from a process's environ or cmdline: %q", procs)
	}
	// Read-only root with a writable /tmp.
	if strings.Contains(rootFS, "root is writable") || !strings.Contains(rootFS, "tmp is writable") {
		t.Errorf("root filesystem probe: %q, want / read-only and /tmp writable", rootFS)
	}
	hc := s.container("envdump").Container.HostConfig
	if hc.PidsLimit == nil || *hc.PidsLimit != 1024 || !hc.ReadonlyRootfs {
		t.Errorf("agent container: pids limit %v, read-only root %v; want 1024 and true", hc.PidsLimit, hc.ReadonlyRootfs)
	}
	// The cub, PID 1 of its container, reaps the orphans the tool left.
	pid1 := s.container("envdump").Container.State.Pid
	if !eventually.Within(30*time.Second, func() bool { return zombieChildren(pid1) == 0 }) {
		t.Fatalf("%d zombie children of the cub (host pid %d) are never reaped", zombieChildren(pid1), pid1)
	}
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
	// On the host the saved password lives in the state home, outside the
	// workspace; the tool sees none of it.
	if _, err := os.Stat(filepath.Join(instance.StatePath("docker", s.dir, s.name), "redis.password")); err != nil {
		t.Fatalf("no saved password in the state home: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.dir, ".sett", "docker")); err == nil {
		t.Errorf("the workspace holds .sett/docker: the password must live outside it")
	}
	t.Logf("the tool's view of /workspace/.sett: %q", settDir)
	if strings.Contains(settDir, "redis.password") || strings.Contains(settDir, "docker") {
		t.Errorf("the tool sees into the workspace's .sett: %q", settDir)
	}
}
