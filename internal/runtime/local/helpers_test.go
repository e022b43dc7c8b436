package local_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/cli"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/runtime/local"
	"github.com/settdev/sett/internal/stacktest"
)

// twoAgents is a writer that turns a goal into a plan and a reviewer that
// approves it: one goal completes in two hops.
const twoAgents = `version: "1.0"
orchestrator:
  bid_timeout: 2s
agents:
  writer:
    command: ["sett-writer", "--type", "Plan"]
    bidding_strategy: exclusive
    consumes: ["GoalDefined"]
  reviewer:
    command: ["sett-reviewer"]
    bidding_strategy: review
    consumes: ["Plan"]
`

// integration skips in -short mode: these tests run redis-server and the
// real binaries.
func integration(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test: runs redis-server and the Sett binaries (run without -short)")
	}
}

// newRuntime returns a local runtime whose supervisor is the sett binary
// built for the tests (the running program is the test binary).
func newRuntime(t *testing.T) *local.Runtime {
	t.Helper()
	return &local.Runtime{Executable: stacktest.BuildCLI(t).Sett}
}

// newWorkspace writes yaml as sett.yml into a fresh directory and returns
// an UpSpec for it with a fresh instance name.
func newWorkspace(t *testing.T, yaml string) runtime.UpSpec {
	t.Helper()
	ws := t.TempDir()
	cfgPath := filepath.Join(ws, "sett.yml")
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	return runtime.UpSpec{Name: redistest.Instance(t), Workspace: ws, ConfigPath: cfgPath, Config: cfg}
}

// up starts the instance and registers its purge (and, on failure, a dump
// of its logs) for the end of the test.
func up(t *testing.T, rt *local.Runtime, spec runtime.UpSpec) *instance.Record {
	t.Helper()
	rec, err := rt.Up(context.Background(), spec)
	if err != nil {
		t.Fatalf("Up: %v", err)
	}
	cleanupInstance(t, rt, spec)
	return rec
}

// cleanupInstance stops and purges the instance at the end of the test,
// after printing its logs if the test failed.
func cleanupInstance(t *testing.T, rt *local.Runtime, spec runtime.UpSpec) {
	t.Helper()
	stateDir := local.StateDir(spec.Workspace, spec.Name)
	t.Cleanup(func() {
		rec := &instance.Record{Name: spec.Name, Workspace: spec.Workspace, StateDir: stateDir, Runtime: instance.RuntimeLocal}
		if err := rt.Down(context.Background(), rec, true); err != nil {
			t.Errorf("cleanup Down: %v", err)
		}
		_ = instance.Remove(spec.Workspace, spec.Name)
	})
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		logs, _ := filepath.Glob(filepath.Join(stateDir, "logs", "*.log"))
		for _, p := range logs {
			b, _ := os.ReadFile(p)
			if len(b) > 20000 {
				b = b[len(b)-20000:]
			}
			t.Logf("==== %s ====\n%s", filepath.Base(p), b)
		}
	})
}

// ready reports whether addr answers /readyz with 200.
func ready(addr string) bool {
	client := http.Client{Timeout: time.Second}
	resp, err := client.Get("http://" + addr + "/readyz")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// dial connects to the instance's blackboard; closed when the test ends.
func dial(t *testing.T, rec *instance.Record) *blackboard.Client {
	t.Helper()
	bb, err := blackboard.Dial(context.Background(), rec.RedisURL, blackboard.Options{Instance: rec.Name, HashTag: rec.HashTag})
	if err != nil {
		t.Fatalf("dial the instance's Redis: %v", err)
	}
	t.Cleanup(func() { bb.Close() })
	return bb
}

// postGoalAndWait posts a goal and waits until its workflow completes.
func postGoalAndWait(t *testing.T, bb *blackboard.Client, text string) string {
	t.Helper()
	g := blackboard.NewGoal(text, 0, "user", nil)
	if err := bb.CreateArtefact(context.Background(), g, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	w, err := stacktest.WaitWorkflow(context.Background(), bb, g.ID, 60*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s ended %s (%s), want completed", g.ID, w.Status, w.Outcome)
	}
	return g.ID
}

// processesOf returns the live processes that belong to the instance: its
// supervisor (whose command line names its plan file), Redis (which runs
// in the state directory) and its daemons (whose environment names the
// instance).
func processesOf(t *testing.T, stateDir, name string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("no /proc to look for leftover processes: %v", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		dir := filepath.Join("/proc", e.Name())
		if stat, err := os.ReadFile(filepath.Join(dir, "stat")); err != nil || zombie(stat) {
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join(dir, "cmdline"))
		environ, _ := os.ReadFile(filepath.Join(dir, "environ"))
		// Redis rewrites its command line, but runs in its data directory.
		cwd, _ := os.Readlink(filepath.Join(dir, "cwd"))
		if bytes.Contains(cmdline, []byte(stateDir)) || strings.HasPrefix(cwd, stateDir) ||
			bytes.Contains(environ, []byte("\x00SETT_INSTANCE="+name+"\x00")) ||
			bytes.HasPrefix(environ, []byte("SETT_INSTANCE="+name+"\x00")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func zombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// cliRun runs one sett command line against buffers, in dir, with the
// given runtimes and an environment holding only env.
func cliRun(t *testing.T, dir string, runtimes map[string]runtime.Runtime, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	app := &cli.App{
		In: strings.NewReader(""), Out: &out, Err: &errOut, Dir: dir, Runtimes: runtimes, Now: time.Now,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
	}
	root := cli.NewRoot(app)
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}
