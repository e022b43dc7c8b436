package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/runtime/docker"
	"github.com/settdev/sett/internal/stacktest"
)

// Images the tests run; `make images` builds them.
var requiredImages = []string{
	"sett-orchestrator:local",
	"sett-console:local", // the compose stack's console (compose_test.go)
	"sett-cub:local",
	"sett-example-writer:local",
	"sett-example-reviewer:local",
	config.DefaultRedisImage,
}

// harness is what every test shares: a Docker client for assertions and
// the runtime under test.
type harness struct {
	cli *client.Client
	rt  *docker.Runtime
}

var (
	harnessOnce sync.Once
	shared      *harness
	harnessErr  error
)

// setup returns the shared harness, failing the test (never skipping it)
// when Docker or an image is missing. With -short it skips: unit tests
// need nothing running.
func setup(t testing.TB) *harness {
	t.Helper()
	if testing.Short() {
		t.Skip("e2e: runs containers; skipped with -short")
	}
	harnessOnce.Do(func() { shared, harnessErr = newHarness() })
	if harnessErr != nil {
		t.Fatal(harnessErr)
	}
	return shared
}

func newHarness() (*harness, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return nil, fmt.Errorf("e2e: Docker client: %v", err)
	}
	if _, err := cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true}); err != nil {
		return nil, fmt.Errorf("e2e: the Docker daemon at %s is not reachable (%v): the end-to-end tests need Docker; start it, or run the unit tests with `make test-short`",
			cli.DaemonHost(), err)
	}
	var missing []string
	for _, img := range requiredImages {
		if _, err := cli.ImageInspect(ctx, img); err != nil {
			missing = append(missing, img)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("e2e: images missing: %s: run `make images` (or `make test-e2e`, which builds them)", strings.Join(missing, ", "))
	}
	rt, err := docker.New(docker.Options{ReadyTimeout: 90 * time.Second})
	if err != nil {
		return nil, err
	}
	return &harness{cli: cli, rt: rt}, nil
}

func closeHarness() {
	if shared != nil {
		_ = shared.rt.Close()
		_ = shared.cli.Close()
	}
}

// stack is one instance under test: a workspace with its sett.yml, and
// once up, its record and a blackboard client.
type stack struct {
	t          testing.TB
	h          *harness
	name       string
	dir        string
	configPath string
	cfg        *config.Config
	rec        *instance.Record
	bb         *blackboard.Client
}

// newStack writes yaml as sett.yml into a fresh workspace. Cleanup
// removes whatever the instance has left (printing its logs first when
// the test failed), so no test leaves containers behind.
func newStack(t testing.TB, h *harness, yaml string) *stack {
	t.Helper()
	dir := t.TempDir()
	// Agents run as the workspace owner, or as 65532 when that is root:
	// let either read and write the workspace.
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	s := &stack{t: t, h: h, name: instanceName(t), dir: dir, configPath: filepath.Join(dir, "sett.yml")}
	if err := os.WriteFile(s.configPath, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(s.configPath)
	if err != nil {
		t.Fatal(err)
	}
	s.cfg = cfg
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if t.Failed() {
			s.dumpLogs(ctx)
		}
		if s.bb != nil {
			_ = s.bb.Close()
		}
		if err := h.rt.Down(ctx, &instance.Record{Name: s.name, Workspace: s.dir}, true); err != nil {
			t.Errorf("cleanup: down %s: %v", s.name, err)
		}
	})
	return s
}

// instanceName is a fresh instance name derived from the test name.
func instanceName(t testing.TB) string {
	base := strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(strings.TrimPrefix(t.Name(), "Test"), "-"))
	if len(base) > 40 {
		base = base[:40]
	}
	var b [3]byte
	_, _ = rand.Read(b[:])
	return "e2e-" + strings.Trim(base, "-") + "-" + hex.EncodeToString(b[:])
}

func (s *stack) spec() runtime.UpSpec {
	return runtime.UpSpec{Name: s.name, Workspace: s.dir, ConfigPath: s.configPath, Config: s.cfg,
		ProgressFunc: func(p runtime.Progress) {
			s.t.Logf("up %s: %-12s %-8s %s", s.name, p.Component, p.State, p.Detail)
		}}
}

// up starts the instance through the runtime's Go API.
func (s *stack) up() (*instance.Record, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	return s.h.rt.Up(ctx, s.spec())
}

// mustUp starts the instance and connects a blackboard client to it.
func (s *stack) mustUp() *instance.Record {
	s.t.Helper()
	start := time.Now()
	rec, err := s.up()
	if err != nil {
		s.t.Fatalf("up: %v", err)
	}
	s.t.Logf("up %s: ready in %s with %d agents", s.name, time.Since(start).Round(time.Millisecond), len(s.cfg.Agents))
	s.rec = rec
	s.connect()
	return rec
}

func (s *stack) connect() {
	s.t.Helper()
	if s.bb != nil {
		_ = s.bb.Close()
	}
	bb, err := blackboard.Dial(context.Background(), s.rec.RedisURL, blackboard.Options{Instance: s.name})
	if err != nil {
		s.t.Fatalf("connect to %s: %v", s.rec.RedisURL, err)
	}
	s.bb = bb
}

// postGoal writes a goal and returns its id, the workflow id.
func (s *stack) postGoal(text string) string {
	s.t.Helper()
	g := blackboard.NewGoal(text, 0, "user", nil)
	if err := s.bb.CreateArtefact(context.Background(), g, blackboard.WriteAuth{}); err != nil {
		s.t.Fatal(err)
	}
	return g.ID
}

// waitWorkflow waits for the workflow to end (blocking reads of the event
// stream) and returns it.
func (s *stack) waitWorkflow(id string, timeout time.Duration) *blackboard.Workflow {
	s.t.Helper()
	w, err := stacktest.WaitWorkflow(context.Background(), s.bb, id, timeout)
	if err != nil {
		s.t.Fatal(err)
	}
	return w
}

// artefacts lists a workflow's artefacts, oldest first.
func (s *stack) artefacts(workflow string) []*blackboard.Artefact {
	s.t.Helper()
	ctx := context.Background()
	page, err := s.bb.ListArtefacts(ctx, blackboard.PageQuery{WorkflowID: workflow, Limit: 1000})
	if err != nil {
		s.t.Fatal(err)
	}
	arts, err := s.bb.GetArtefacts(ctx, page.IDs)
	if err != nil {
		s.t.Fatal(err)
	}
	sort.SliceStable(arts, func(i, j int) bool { return arts[i].CreatedAtMs < arts[j].CreatedAtMs })
	return arts
}

func (s *stack) dumpLogs(ctx context.Context) {
	list, err := s.h.cli.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", docker.LabelInstance+"="+s.name)})
	if err != nil {
		s.t.Logf("logs: %v", err)
		return
	}
	for _, c := range list.Items {
		comp := c.Labels[docker.LabelComponent]
		if comp == docker.ComponentAgent {
			comp = c.Labels[docker.LabelAgent]
		}
		var b bytes.Buffer
		if err := s.h.rt.Logs(ctx, &instance.Record{Name: s.name}, comp, false, &b); err != nil {
			s.t.Logf("logs of %s: %v", comp, err)
		}
		out := b.String()
		if len(out) > 30000 {
			out = "...\n" + out[len(out)-30000:]
		}
		s.t.Logf("==== %s (%s) ====\n%s", comp, c.State, out)
	}
}

// container inspects the container of a component.
func (s *stack) container(component string) client.ContainerInspectResult {
	s.t.Helper()
	c, ok := s.rec.Components[component]
	if !ok {
		s.t.Fatalf("no component %s in %+v", component, s.rec.Components)
	}
	res, err := s.h.cli.ContainerInspect(context.Background(), c.Container, client.ContainerInspectOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	return res
}

// leftovers lists what exists with the instance's label.
func (h *harness) leftovers(t testing.TB, name string) []string {
	t.Helper()
	ctx := context.Background()
	f := make(client.Filters).Add("label", docker.LabelInstance+"="+name)
	var out []string
	cs, err := h.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cs.Items {
		out = append(out, "container "+strings.Join(c.Names, ","))
	}
	ns, err := h.cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns.Items {
		out = append(out, "network "+n.Name)
	}
	vs, err := h.cli.VolumeList(ctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs.Items {
		out = append(out, "volume "+v.Name)
	}
	return out
}

// buildImage builds a throwaway image from a Dockerfile and removes it at
// cleanup.
func (h *harness) buildImage(t testing.TB, tag, dockerfile string) {
	t.Helper()
	buildWith(t, h, tag, dockerfile, "")
}

// passwordOf returns the password of a redis:// URL.
func passwordOf(t testing.TB, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	return pw
}

// byType groups artefacts by type.
func byType(arts []*blackboard.Artefact) map[string][]*blackboard.Artefact {
	m := map[string][]*blackboard.Artefact{}
	for _, a := range arts {
		m[a.Type] = append(m[a.Type], a)
	}
	return m
}

func types(arts []*blackboard.Artefact) []string {
	out := make([]string, len(arts))
	for i, a := range arts {
		out[i] = fmt.Sprintf("%s v%d (%s)", a.Type, a.Version, a.ProducedByRole)
	}
	return out
}
