package e2e

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/jsonstream"
	"github.com/moby/moby/client"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/runtime/docker"
)

// controllerYAML runs every agent that does work as a controller. Each
// worker records its run in /workspace/runs (one file per container,
// named by its hostname, which is its container id) before it execs the
// real tool; the auditor also counts how many auditor workers are active
// at once in /workspace/active and sleeps so that grants can overlap.
// The bystander is an ordinary agent (on the same image) that must not get
// the socket.
const controllerYAML = `version: "1.0"
orchestrator:
  bid_timeout: 3s
  lease_ttl: 6s
agents:
  planner:
    image: %[1]s
    bidding_strategy: exclusive
    consumes: ["GoalDefined"]
    workspace: {mode: rw}
    mode: controller
    worker:
      image: sett-example-writer:local
      command: ["sh", "-c", "%[2]s exec sett-writer --type Plan"]
  reviewer:
    image: %[1]s
    bidding_strategy: review
    consumes: ["Plan"]
    workspace: {mode: rw}
    mode: controller
    worker:
      image: sett-example-reviewer:local
      command: ["sh", "-c", "%[2]s exec sett-reviewer --require tests"]
  auditor:
    image: %[1]s
    bidding_strategy: claim
    consumes: ["GoalDefined"]
    workspace: {mode: rw}
    mode: controller
    worker:
      image: sett-example-writer:local
      max_concurrent: 2
      command: ["sh", "-c", "%[2]s %[3]s exec sett-writer --type AuditNote"]
  bystander:
    image: %[1]s
    command: ["sh", "-c", "cat >/dev/null"]
    bidding_strategy: ignore
`

// recordRun appends "agent uid" to runs/HOSTNAME: a container that ran
// twice would leave two lines in one file.
const recordRun = `h=$(cat /etc/hostname); echo \"$SETT_AGENT $(id -u)\" >> /workspace/runs/$h;`

// countActive marks this worker active, records how many are, holds the
// grant for 3s so that grants can overlap, and unmarks it.
const countActive = `touch /workspace/active/$h; ls /workspace/active | wc -l > /workspace/overlap/$h; sleep 3; rm /workspace/active/$h;`

func TestControllerAgentsRunEachGrantInAFreshWorker(t *testing.T) {
	t.Parallel()
	h, image := controllerHarness(t, setup(t))
	s := newStack(t, h, fmt.Sprintf(controllerYAML, image, recordRun, countActive))
	for _, d := range []string{"runs", "active", "overlap"} {
		if err := os.Mkdir(filepath.Join(s.dir, d), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(s.dir, d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	s.mustUp()

	// Three goals at once: three parallel auditor grants against
	// worker.max_concurrent 2, and per goal a Plan that the reviewer
	// rejects, a feedback claim the planner reworks, and an approval.
	start := time.Now()
	var wfs []string
	for i := range 3 {
		wfs = append(wfs, s.postGoal(fmt.Sprintf("Add endpoint %d", i)))
	}
	for _, wf := range wfs {
		w := s.waitWorkflow(wf, 4*time.Minute)
		if w.Status != blackboard.WorkflowCompleted {
			t.Fatalf("workflow %s: status %s (%s), want completed", wf, w.Status, w.Outcome)
		}
		m := byType(s.artefacts(wf))
		plans := m["Plan"]
		if len(plans) != 2 || plans[1].Version != 2 || !strings.Contains(plans[1].Payload, "must mention tests") {
			t.Errorf("workflow %s: plans %v, want v1 and a v2 answering the review", wf, types(plans))
		}
		var summaries []string
		for _, r := range m["Review"] {
			summaries = append(summaries, r.Summary)
		}
		for _, want := range []string{"rejected Plan v1", "approved Plan v2"} {
			if !containsPrefix(summaries, want) {
				t.Errorf("workflow %s: no review %q among %q", wf, want, summaries)
			}
		}
		if len(m["AuditNote"]) != 1 {
			t.Errorf("workflow %s: %d AuditNotes, want 1", wf, len(m["AuditNote"]))
		}
	}
	t.Logf("3 workflows with feedback loops through worker containers in %s", time.Since(start).Round(time.Millisecond))

	// Every grant ran in its own container: one file per hostname, one
	// line per file, as many as grants.
	runs := map[string]int{}
	var hostnames []string
	entries, err := os.ReadDir(filepath.Join(s.dir, "runs"))
	if err != nil {
		t.Fatal(err)
	}
	hexID := regexp.MustCompile(`^[0-9a-f]{12}$`)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(s.dir, "runs", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != 1 {
			t.Errorf("container %s ran %d grants, want 1: %q", e.Name(), len(lines), lines)
		}
		agent, uid, _ := strings.Cut(lines[0], " ")
		if n, err := strconv.Atoi(uid); err != nil || n == 0 {
			t.Errorf("worker %s of %s ran as uid %q, want a non-root uid", e.Name(), agent, uid)
		}
		if !hexID.MatchString(e.Name()) {
			t.Errorf("worker hostname %q is not a container id", e.Name())
		}
		runs[agent]++
		hostnames = append(hostnames, e.Name())
	}
	// planner: v1 and the feedback claim's v2, per goal; reviewer: both
	// versions; auditor: one parallel grant per goal.
	for agent, want := range map[string]int{"planner": 6, "reviewer": 6, "auditor": 3} {
		if runs[agent] != want {
			t.Errorf("%s ran %d worker containers, want %d (one per grant; all: %v)", agent, runs[agent], want, runs)
		}
	}

	// No worker is left: none carries the instance's label, and none of
	// the containers that ran exists any more.
	ctx := context.Background()
	workers, err := h.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).
		Add("label", docker.LabelInstance+"="+s.name).Add("label", docker.LabelComponent+"="+docker.ComponentWorker)})
	if err != nil {
		t.Fatal(err)
	}
	if len(workers.Items) != 0 {
		t.Errorf("%d worker containers left after the workflows", len(workers.Items))
	}
	for _, hn := range hostnames {
		if _, err := h.cli.ContainerInspect(ctx, hn, client.ContainerInspectOptions{}); !cerrdefs.IsNotFound(err) {
			t.Errorf("worker container %s still exists (inspect: %v)", hn, err)
		}
	}

	// worker.max_concurrent 2: never three auditors at once, and two did
	// overlap (so the limit, not chance, kept it at two).
	most := 0
	overlaps, err := os.ReadDir(filepath.Join(s.dir, "overlap"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range overlaps {
		b, err := os.ReadFile(filepath.Join(s.dir, "overlap", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil {
			t.Fatalf("overlap record %s: %q", e.Name(), b)
		}
		most = max(most, n)
	}
	t.Logf("auditor workers active at once: at most %d (limit 2)", most)
	if len(overlaps) != 3 || most != 2 {
		t.Errorf("auditor: %d records, at most %d active at once; want 3 records and exactly 2 (worker.max_concurrent)", len(overlaps), most)
	}

	// Only the controllers' containers have the Docker socket.
	all, err := h.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).Add("label", docker.LabelInstance+"="+s.name)})
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, c := range all.Items {
		ins, err := h.cli.ContainerInspect(ctx, c.ID, client.ContainerInspectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		name := c.Labels[docker.LabelComponent]
		if name == docker.ComponentAgent {
			name = c.Labels[docker.LabelAgent]
		}
		socket := false
		for _, m := range ins.Container.Mounts {
			socket = socket || m.Destination == "/var/run/docker.sock" || strings.HasSuffix(m.Source, ".sock")
		}
		controller := name == "planner" || name == "reviewer" || name == "auditor"
		if socket != controller {
			t.Errorf("%s: Docker socket mounted = %v, want %v (only controller agents get it)", name, socket, controller)
		}
		seen++
	}
	if seen != 6 {
		t.Errorf("inspected %d containers, want 6 (redis, orchestrator, 3 controllers, bystander)", seen)
	}
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}

// controllerHarness returns a harness whose runtime runs this tree's
// orchestrator, and the image for controller agents: this tree's cub and
// worker launcher on sett-cub:local. The shared sett-*:local tags are
// rebuilt by whoever works on this machine, from whatever tree they have;
// a daemon without the mode and worker keys refuses the configuration, so
// the test brings the binaries it checks (make images puts the same files
// at the same paths).
func controllerHarness(t *testing.T, h *harness) (*harness, string) {
	t.Helper()
	dir := t.TempDir()
	for name, pkg := range map[string]string{"sett-cub": "../cmd/cub", "sett-worker": "../cmd/sett-worker", "sett-orchestrator": "../cmd/orchestrator"} {
		cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(dir, name), pkg)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	id := instanceName(t)[len("e2e-"):]
	ctl := "sett-e2e-ctl-" + id + ":local"
	buildWith(t, h, ctl, "FROM sett-cub:local\nCOPY sett-cub sett-worker /usr/local/bin/\n", dir, "sett-cub", "sett-worker")
	orch := "sett-e2e-orch-" + id + ":local"
	buildWith(t, h, orch, "FROM sett-orchestrator:local\nCOPY sett-orchestrator /usr/local/bin/\n", dir, "sett-orchestrator")
	rt, err := docker.New(docker.Options{ReadyTimeout: 90 * time.Second, OrchestratorImage: orch})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt.Close() })
	return &harness{cli: h.cli, rt: rt}, ctl
}

// buildWith builds tag from dockerfile with the named files of dir as its
// context (none: the Dockerfile alone), and removes it at cleanup.
func buildWith(t testing.TB, h *harness, tag, dockerfile, dir string, files ...string) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, mode int64, data []byte) {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: mode, Size: int64(len(data))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	add("Dockerfile", 0o644, []byte(dockerfile))
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		add(f, 0o755, data)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := h.cli.ImageBuild(ctx, &buf, client.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true})
	if err != nil {
		t.Fatalf("build %s: %v", tag, err)
	}
	defer res.Body.Close()
	dec := json.NewDecoder(res.Body)
	for {
		var m jsonstream.Message
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("build %s: %v", tag, err)
		}
		if m.Error != nil {
			t.Fatalf("build %s: %s", tag, m.Error.Message)
		}
	}
	t.Cleanup(func() {
		_, _ = h.cli.ImageRemove(context.Background(), tag, client.ImageRemoveOptions{Force: true})
	})
}

// stopYAML: a controller whose worker runs until it is stopped, recording
// its claim when it starts and the SIGTERM it gets. The trap comes first:
// the test cancels as soon as the run is recorded.
const stopYAML = `version: "1.0"
orchestrator:
  bid_timeout: 2s
agents:
  sleeper:
    image: %[1]s
    bidding_strategy: exclusive
    consumes: ["GoalDefined"]
    workspace: {mode: rw}
    timeout: 15s
    stop_grace: 6s
    retry: {max_attempts: 1}
    mode: controller
    worker:
      image: sett-example-writer:local
      max_concurrent: 2
      command: ["sh", "-c", "h=$(cat /etc/hostname); trap 'echo term > /workspace/stopped/$h; exit 143' TERM; echo $SETT_CLAIM_ID > /workspace/runs/$h; sleep 300 & wait"]
`

// TestControllerWorkerRemovedOnCancelAndTimeout: a worker still running
// when its workflow is cancelled, or when its tool times out, is stopped
// (it sees SIGTERM) and removed.
func TestControllerWorkerRemovedOnCancelAndTimeout(t *testing.T) {
	t.Parallel()
	h, image := controllerHarness(t, setup(t))
	s := newStack(t, h, fmt.Sprintf(stopYAML, image))
	for _, d := range []string{"runs", "stopped"} {
		if err := os.Mkdir(filepath.Join(s.dir, d), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(s.dir, d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	s.mustUp()
	ctx := context.Background()
	workerOf := func(n int) string {
		t.Helper()
		var name string
		eventually.True(t, 2*time.Minute, fmt.Sprintf("worker %d runs", n), func() bool {
			entries, _ := os.ReadDir(filepath.Join(s.dir, "runs"))
			if len(entries) < n {
				return false
			}
			sort.Slice(entries, func(i, j int) bool { return modTime(entries[i]).Before(modTime(entries[j])) })
			name = entries[n-1].Name()
			return true
		})
		return name
	}
	gone := func(what, host string) {
		t.Helper()
		eventually.True(t, time.Minute, what+": worker "+host+" stopped and removed", func() bool {
			_, err := h.cli.ContainerInspect(ctx, host, client.ContainerInspectOptions{})
			return cerrdefs.IsNotFound(err)
		})
		if _, err := os.Stat(filepath.Join(s.dir, "stopped", host)); err != nil {
			t.Errorf("%s: worker %s was removed without a SIGTERM first: %v", what, host, err)
		}
	}

	cancelled := s.postGoal("cancel me")
	first := workerOf(1)
	ended, err := s.bb.EndWorkflow(ctx, cancelled, blackboard.WorkflowCancelled, "cancelled by the e2e test", blackboard.OperatorEpoch)
	if err != nil || !ended {
		t.Fatalf("cancel: %v, %v", ended, err)
	}
	start := time.Now()
	gone("cancel", first)
	t.Logf("cancelled worker removed %s after the cancel", time.Since(start).Round(time.Millisecond))

	timedOut := s.postGoal("time out")
	second := workerOf(2)
	w := s.waitWorkflow(timedOut, 2*time.Minute)
	if w.Status != blackboard.WorkflowFailed {
		t.Errorf("workflow %s: %s (%s), want failed after the timeout", timedOut, w.Status, w.Outcome)
	}
	gone("timeout", second)

	workers, err := h.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).
		Add("label", docker.LabelInstance+"="+s.name).Add("label", docker.LabelComponent+"="+docker.ComponentWorker)})
	if err != nil {
		t.Fatal(err)
	}
	if len(workers.Items) != 0 || first == second {
		t.Errorf("%d worker containers left; workers %s and %s (want two distinct, none left)", len(workers.Items), first, second)
	}
}

func modTime(e os.DirEntry) time.Time {
	info, err := e.Info()
	if err != nil {
		return time.Time{}
	}
	return info.ModTime()
}

// killYAML: a controller whose worker runs until it is stopped.
const killYAML = `version: "1.0"
orchestrator:
  bid_timeout: 2s
  lease_ttl: 5s
agents:
  sleeper:
    image: %[1]s
    bidding_strategy: exclusive
    consumes: ["GoalDefined"]
    workspace: {mode: rw}
    mode: controller
    worker:
      image: sett-example-writer:local
      command: ["sh", "-c", "trap 'exit 143' TERM; echo $SETT_CLAIM_ID > /workspace/runs/$(cat /etc/hostname); sleep 300 & wait"]
`

// TestKilledControllerNeverRunsAClaimInTwoWorkers: the worker of a
// controller whose cub is killed outlives it (it is a container of its
// own); the restarted controller removes it before its cub takes the
// re-grant, so the claim runs again in a fresh worker, never in two at
// once.
func TestKilledControllerNeverRunsAClaimInTwoWorkers(t *testing.T) {
	t.Parallel()
	h, image := controllerHarness(t, setup(t))
	s := newStack(t, h, fmt.Sprintf(killYAML, image))
	if err := os.Mkdir(filepath.Join(s.dir, "runs"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(s.dir, "runs"), 0o777); err != nil {
		t.Fatal(err)
	}
	s.mustUp()
	ctx := context.Background()
	running := func() []string {
		list, err := h.cli.ContainerList(ctx, client.ContainerListOptions{Filters: make(client.Filters).
			Add("label", docker.LabelInstance+"="+s.name).Add("label", docker.LabelComponent+"="+docker.ComponentWorker)})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range list.Items {
			ids = append(ids, c.ID[:12])
		}
		if len(ids) > 1 {
			t.Fatalf("%d workers of one claim run at once: %v", len(ids), ids)
		}
		return ids
	}
	wf := s.postGoal("sleep")
	var first string
	eventually.True(t, 2*time.Minute, "the first worker runs", func() bool {
		ids := running()
		if len(ids) == 1 {
			first = ids[0]
		}
		return first != ""
	})

	pid1 := s.container("sleeper").Container.State.Pid
	if err := syscall.Kill(pid1, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the controller's cub (host pid %d): %v", pid1, err)
	}
	killed := time.Now()
	var second string
	eventually.True(t, 2*time.Minute, "the old worker is removed and the claim runs in a new one", func() bool {
		ids := running()
		if len(ids) == 1 && ids[0] != first {
			second = ids[0]
		}
		return second != ""
	})
	t.Logf("re-run in worker %s %s after the kill (first worker %s)", second, time.Since(killed).Round(time.Millisecond), first)
	if _, err := h.cli.ContainerInspect(ctx, first, client.ContainerInspectOptions{}); !cerrdefs.IsNotFound(err) {
		t.Errorf("the killed controller's worker %s still exists (inspect: %v)", first, err)
	}
	// The new worker's container runs before its tool has recorded the
	// run: wait for the record, then check there is no third.
	eventually.True(t, 2*time.Minute, "the re-grant's run recorded", func() bool {
		runs, err := os.ReadDir(filepath.Join(s.dir, "runs"))
		return err == nil && len(runs) >= 2
	})
	if runs, err := os.ReadDir(filepath.Join(s.dir, "runs")); err != nil || len(runs) != 2 {
		t.Errorf("runs recorded: %d (%v), want 2: the first worker and the re-grant's", len(runs), err)
	}

	// Killed again, and the workflow cancelled at once: no grant comes
	// back to run a launcher, so the sweep the controller container starts
	// with is what removes the worker.
	pid1 = s.container("sleeper").Container.State.Pid
	if err := syscall.Kill(pid1, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the controller's cub again (host pid %d): %v", pid1, err)
	}
	if ended, err := s.bb.EndWorkflow(ctx, wf, blackboard.WorkflowCancelled, "cancelled by the e2e test", blackboard.OperatorEpoch); err != nil || !ended {
		t.Fatalf("cancel: %v, %v", ended, err)
	}
	eventually.True(t, 2*time.Minute, "the restarted controller removes its predecessor's worker "+second, func() bool {
		_, err := h.cli.ContainerInspect(ctx, second, client.ContainerInspectOptions{})
		return cerrdefs.IsNotFound(err)
	})
	if runs, _ := os.ReadDir(filepath.Join(s.dir, "runs")); len(runs) != 2 {
		t.Errorf("%d runs after the cancel, want still 2", len(runs))
	}
}
