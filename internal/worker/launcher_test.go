package worker

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/settdev/sett/internal/eventually"
)

// testImage has a busybox shell; `make images` builds it.
const testImage = "sett-cub:local"

// dockerClient returns a client of the local daemon, failing (never
// skipping) when there is none; with -short it skips, as these tests run
// containers.
func dockerClient(t *testing.T) *client.Client {
	t.Helper()
	if testing.Short() {
		t.Skip("worker: runs containers; skipped with -short")
	}
	cli, err := client.New(client.FromEnv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := cli.ImageInspect(ctx, testImage); err != nil {
		t.Fatalf("%s: %v (run `make images`)", testImage, err)
	}
	return cli
}

// testSpec is a hardened worker running script under sh, with a label
// unique to the test so that its containers can be counted.
func testSpec(t *testing.T, script string) Spec {
	var b [4]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	s := Spec{
		Image: testImage, Command: []string{"sh", "-c", script},
		User: "65532:65532", ReadOnlyRoot: true, PidsLimit: 64,
		Labels:      map[string]string{"dev.sett.test": t.Name() + "-" + id},
		NamePrefix:  "sett-worker-test-" + id,
		StopTimeout: time.Second,
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cli, err := client.New(client.FromEnv)
		if err != nil {
			return
		}
		defer cli.Close()
		for _, id := range containersOf(t, cli, s) {
			_, _ = cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true})
		}
	})
	return s
}

// containersOf lists the containers (running or not) with s's labels.
func containersOf(t *testing.T, cli *client.Client, s Spec) []string {
	t.Helper()
	f := make(client.Filters)
	for k, v := range s.Labels {
		f = f.Add("label", k+"="+v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range list.Items {
		ids = append(ids, c.ID)
	}
	return ids
}

func runningContainerOf(t *testing.T, cli *client.Client, s Spec) string {
	t.Helper()
	var id string
	eventually.True(t, 60*time.Second, "the worker container runs", func() bool {
		for _, cid := range containersOf(t, cli, s) {
			ins, err := cli.ContainerInspect(context.Background(), cid, client.ContainerInspectOptions{})
			if err == nil && ins.Container.State != nil && ins.Container.State.Status == container.StateRunning {
				id = cid
				return true
			}
		}
		return false
	})
	return id
}

func TestRunRelaysTheToolContractAndRemovesTheWorker(t *testing.T) {
	cli := dockerClient(t)
	s := testSpec(t, `read -r line; echo "out:$line:$SETT_CLAIM_ID:$(id -u):${PATH:+path}"; echo "to stderr" >&2; touch /probe 2>/dev/null && echo writable-root; exit 3`)
	var stdout, stderr bytes.Buffer
	l := &Launcher{Spec: s, Client: cli, Env: WorkerEnv([]string{"SETT_CLAIM_ID=c42", "DOCKER_HOST=unix:///leak"}),
		Stdin: strings.NewReader("hello\n"), Stdout: &stdout, Stderr: &stderr}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	code, err := l.Run(ctx)
	if err != nil {
		t.Fatalf("Run: %v (stderr %q)", err, stderr.String())
	}
	if code != 3 {
		t.Errorf("exit code %d, want the worker's 3", code)
	}
	// The image's PATH applies (the launcher's is not passed), the user is
	// the non-root one asked for, the root filesystem is read-only.
	if got := stdout.String(); got != "out:hello:c42:65532:path\n" {
		t.Errorf("stdout %q, want %q", got, "out:hello:c42:65532:path\n")
	}
	if got := stderr.String(); got != "to stderr\n" {
		t.Errorf("stderr %q, want %q", got, "to stderr\n")
	}
	if ids := containersOf(t, cli, s); len(ids) != 0 {
		t.Errorf("worker containers left after the run: %v", ids)
	}
}

func TestRunReportsAMissingImage(t *testing.T) {
	cli := dockerClient(t)
	s := testSpec(t, "true")
	s.Image = "sett-no-such-image:never"
	code, err := (&Launcher{Spec: s, Client: cli}).Run(context.Background())
	if code != ExitLauncherFailed || !errors.Is(err, ErrImageMissing) || !strings.Contains(err.Error(), "sett-no-such-image:never") {
		t.Errorf("Run = %d, %v; want %d and ErrImageMissing naming the image", code, err, ExitLauncherFailed)
	}
}

// buildLauncher builds cmd/sett-worker, so that the signal tests run the
// process the cub runs.
func buildLauncher(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "sett-worker")
	cmd := exec.Command("go", "build", "-o", bin, "../../cmd/sett-worker")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build sett-worker: %v\n%s", err, out)
	}
	return bin
}

// startLauncher starts the launcher binary for s in its own process
// group, as the cub starts a tool.
func startLauncher(t *testing.T, bin string, s Spec) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	s.DockerHost = hostOf(t)
	cmd := exec.Command(bin, s.Args()...)
	cmd.Stdin = strings.NewReader("{}")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return cmd, &out
}

func hostOf(t *testing.T) string {
	if h := os.Getenv("DOCKER_HOST"); h != "" {
		return h
	}
	return DefaultDockerHost
}

// TestStoppedLauncherRemovesItsWorker is the cub's cancel and timeout
// path: SIGTERM to the tool's process group while the worker still runs.
func TestStoppedLauncherRemovesItsWorker(t *testing.T) {
	cli := dockerClient(t)
	bin := buildLauncher(t)
	s := testSpec(t, "sleep 300")
	cmd, out := startLauncher(t, bin, s)
	runningContainerOf(t, cli, s)

	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != ExitSignalled {
		t.Errorf("launcher ended with %v, want exit code %d (output %q)", err, ExitSignalled, out.String())
	}
	if ids := containersOf(t, cli, s); len(ids) != 0 {
		t.Errorf("the stopped launcher left its worker: %v", ids)
	}
}

// TestLeftoversOfAKilledLauncherAreRemoved: SIGKILL gives the launcher no
// chance to clean up; the next launcher of the agent does.
func TestLeftoversOfAKilledLauncherAreRemoved(t *testing.T) {
	cli := dockerClient(t)
	bin := buildLauncher(t)
	s := testSpec(t, "sleep 300")
	cmd, _ := startLauncher(t, bin, s)
	id := runningContainerOf(t, cli, s)
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if ids := containersOf(t, cli, s); len(ids) != 1 || ids[0] != id {
		t.Fatalf("after SIGKILL the worker should still be there: %v", ids)
	}

	// A worker of a launcher that still runs (this test process) is kept.
	live := &Launcher{Spec: s, Client: cli}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _, _ = live.Run(ctx) }()
	eventually.True(t, 60*time.Second, "a second worker runs", func() bool { return len(containersOf(t, cli, s)) == 2 })

	n, err := (&Launcher{Spec: s, Client: cli}).RemoveLeftovers(context.Background())
	if err != nil || n != 1 {
		t.Errorf("RemoveLeftovers = %d, %v; want 1 removed", n, err)
	}
	ids := containersOf(t, cli, s)
	if len(ids) != 1 || ids[0] == id {
		t.Errorf("after RemoveLeftovers: %v; want only the live launcher's worker (the killed one's was %s)", ids, id)
	}
	cancel()
	<-done
	if ids := containersOf(t, cli, s); len(ids) != 0 {
		t.Errorf("the cancelled Run left its worker: %v", ids)
	}
}

// overCapCheck records whether the worker was gone when the byte past the
// cap reached the launcher's stdout.
type overCapCheck struct {
	t        *testing.T
	cli      *client.Client
	spec     Spec
	got      int64
	leftover []string
}

func (w *overCapCheck) Write(p []byte) (int, error) {
	if w.got <= w.spec.MaxOutput && w.got+int64(len(p)) > w.spec.MaxOutput {
		w.leftover = containersOf(w.t, w.cli, w.spec)
	}
	w.got += int64(len(p))
	return len(p), nil
}

// TestWorkerOverTheOutputCapIsRemovedFirst: the cub kills a tool whose
// stdout passes max_output_bytes at once (SIGKILL), so the launcher must
// have removed the worker before the first byte past the cap reaches the
// cub.
func TestWorkerOverTheOutputCapIsRemovedFirst(t *testing.T) {
	cli := dockerClient(t)
	s := testSpec(t, "while :; do echo xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx; done")
	s.MaxOutput = 4096
	out := &overCapCheck{t: t, cli: cli, spec: s}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	_, _ = (&Launcher{Spec: s, Client: cli, Stdout: out}).Run(ctx)
	if out.got != s.MaxOutput+1 {
		t.Errorf("relayed %d bytes, want the cap %d plus one", out.got, s.MaxOutput)
	}
	if out.leftover != nil {
		t.Errorf("the byte past the cap was relayed while the worker still existed: %v", out.leftover)
	}
	if ids := containersOf(t, cli, s); len(ids) != 0 {
		t.Errorf("worker containers left: %v", ids)
	}
}
