package stacktest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/daemonproc"
	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/redistest"
)

// Stack is one Sett instance under test: its sett.yml, a workspace
// directory, a blackboard client and the processes started for it.
type Stack struct {
	T         testing.TB
	Bin       Binaries
	Redis     *redistest.Server
	Instance  string
	Dir       string // workspace, holds sett.yml
	Config    string // path of sett.yml
	BB        *blackboard.Client
	mu        sync.Mutex
	procs     []*Proc
	extraPath string
	redisYAML string
	procEnv   func(name string) []string
}

// Options tune a stack.
type Options struct {
	// Redis is the server to use; nil means the package's shared one.
	Redis *redistest.Server
	// Conn, when set, replaces Redis: the stack's own client dials it,
	// and the daemons get no SETT_REDIS_URL but RedisYAML appended to
	// sett.yml as the services.redis section (Sentinel, Cluster, TLS,
	// ACL users). HashTag must match RedisYAML.
	Conn      *blackboard.Conn
	RedisYAML string
	HashTag   bool
	// ProcEnvFunc, when set, adds environment to the process named name
	// ("orchestrator", "cub-<agent>"): its own ACL user, for instance.
	ProcEnvFunc func(name string) []string
}

// New writes yaml as sett.yml into a fresh workspace and connects a
// blackboard client for a fresh instance. The example agents' binaries are
// on the PATH the cubs see.
func New(tb testing.TB, yaml string, opts ...Options) *Stack {
	tb.Helper()
	var o Options
	if len(opts) > 0 {
		o = opts[0]
	}
	srv := o.Redis
	conn := o.Conn
	if conn == nil {
		if srv == nil {
			srv = redistest.Shared(tb)
		}
		conn = &blackboard.Conn{URL: srv.URL()}
	}
	s := &Stack{T: tb, Bin: Build(tb), Redis: srv, Instance: redistest.Instance(tb), Dir: tb.TempDir(), redisYAML: o.RedisYAML, procEnv: o.ProcEnvFunc}
	s.Config = filepath.Join(s.Dir, "sett.yml")
	s.WriteConfig(yaml)
	bb, err := blackboard.DialConn(context.Background(), *conn, blackboard.Options{Instance: s.Instance, HashTag: o.HashTag})
	if err != nil {
		tb.Fatal(err)
	}
	s.BB = bb
	s.extraPath = s.Bin.Dir
	tb.Cleanup(func() {
		s.StopAll()
		_ = bb.Close()
		if tb.Failed() || os.Getenv("STACKTEST_LOGS") != "" {
			s.DumpLogs()
		}
	})
	return s
}

// Proc is one started daemon (a daemonproc.Process with the test's
// failure handling).
type Proc struct {
	Name     string
	HTTPAddr string
	LogPath  string
	stack    *Stack
	proc     *daemonproc.Process
}

// stopGrace is how long Stop waits for a clean exit before it kills.
const stopGrace = 10 * time.Second

// readyTimeout bounds WaitReady.
const readyTimeout = 30 * time.Second

func (s *Stack) baseEnv() []string {
	env := []string{
		"PATH=" + s.extraPath + string(os.PathListSeparator) + os.Getenv("PATH"),
		"HOME=" + os.Getenv("HOME"),
		"SETT_INSTANCE=" + s.Instance,
		"SETT_CONFIG=" + s.Config,
		"SETT_LOG_FORMAT=json",
		"SETT_LOG_LEVEL=debug",
	}
	if s.redisYAML == "" {
		env = append(env, "SETT_REDIS_URL="+s.Redis.URL())
	}
	return env
}

// StartOrchestrator starts an orchestrator process (name "orchestrator",
// or "orchestrator-2" and so on for more).
func (s *Stack) StartOrchestrator() *Proc { return s.StartOrchestratorWith() }

// StartCub starts the cub of an agent, with the workspace as working
// directory.
func (s *Stack) StartCub(agent string) *Proc { return s.StartReplica(agent, "") }

// StartReplica starts another replica of an agent's cub, with a consumer
// name (and log) of its own, as a second pod or container would have;
// replica "" is StartCub's.
func (s *Stack) StartReplica(agent, replica string) *Proc {
	name, consumer := "cub-"+agent, "test-"+agent
	if replica != "" {
		name, consumer = name+"-"+replica, consumer+"-"+replica
	}
	return s.start(name, []string{s.Bin.Cub, "--agent", agent, "--workspace", s.Dir, "--consumer", consumer},
		append(s.baseEnv(), s.extraEnv(name)...))
}

func (s *Stack) extraEnv(name string) []string {
	if s.procEnv == nil {
		return nil
	}
	return s.procEnv(name)
}

func (s *Stack) count(prefix string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, p := range s.procs {
		if strings.HasPrefix(p.Name, prefix) {
			n++
		}
	}
	return n
}

// start starts a process in the workspace and records it for StopAll and
// DumpLogs.
func (s *Stack) start(name string, argv, env []string) *Proc {
	s.T.Helper()
	dp, err := daemonproc.New(daemonproc.Spec{Name: name, Argv: argv, Env: env, Dir: s.Dir})
	if err != nil {
		s.T.Fatal(err)
	}
	p := &Proc{Name: name, HTTPAddr: dp.HTTPAddr, LogPath: dp.LogPath, stack: s, proc: dp}
	s.mu.Lock()
	s.procs = append(s.procs, p)
	s.mu.Unlock()
	if err := dp.Start(); err != nil {
		s.T.Fatal(err)
	}
	return p
}

// Start (re)starts the process with its original arguments and address.
func (p *Proc) Start() error { return p.proc.Start() }

// Signal sends sig to the process without waiting for it to exit (see
// WaitExit).
func (p *Proc) Signal(sig syscall.Signal) { _ = p.proc.Signal(sig) }

// Kill sends SIGKILL to the process (a crash) and waits for it to exit.
func (p *Proc) Kill() { p.proc.Kill() }

// Stop sends SIGTERM and waits for a clean exit (SIGKILL after 10s).
func (p *Proc) Stop() { p.proc.Stop(stopGrace) }

// Freeze stops the process with SIGSTOP (a hung or descheduled daemon:
// its connections stay open, it answers nothing); Thaw resumes it.
func (p *Proc) Freeze() { p.Signal(syscall.SIGSTOP) }

// Thaw resumes a frozen process with SIGCONT.
func (p *Proc) Thaw() { p.Signal(syscall.SIGCONT) }

// Running reports whether the process has not exited.
func (p *Proc) Running() bool { return p.proc.Running() }

// Ready reports whether the process answers /readyz with 200.
func (p *Proc) Ready() bool { return daemonproc.Ready(context.Background(), p.HTTPAddr) }

// StopAll stops every process still running.
func (s *Stack) StopAll() {
	s.mu.Lock()
	procs := append([]*Proc(nil), s.procs...)
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func(p *Proc) { defer wg.Done(); p.Stop() }(p)
	}
	wg.Wait()
}

// DumpLogs prints every process log to the test log.
func (s *Stack) DumpLogs() {
	s.mu.Lock()
	procs := append([]*Proc(nil), s.procs...)
	s.mu.Unlock()
	for _, p := range procs {
		s.T.Logf("==== %s log ====\n%s", p.Name, p.proc.LogTail(60000))
	}
}

// WaitReady waits until every given process answers /readyz, against
// one deadline 30s away; it fails the test at once when one of them exits.
func (s *Stack) WaitReady(procs ...*Proc) {
	s.T.Helper()
	deadline := time.Now().Add(readyTimeout)
	for _, p := range procs {
		if err := p.proc.WaitReady(context.Background(), time.Until(deadline)); err != nil {
			s.T.Fatal(err)
		}
	}
}

// Up starts a cub per agent, waits until they are ready (registered, with
// a heartbeat), then starts the orchestrator — whose first liveness read
// therefore sees every agent — and waits until it is ready too.
func (s *Stack) Up(agents ...string) (orch *Proc, cubs map[string]*Proc) {
	s.T.Helper()
	cubs = map[string]*Proc{}
	var procs []*Proc
	for _, a := range agents {
		cubs[a] = s.StartCub(a)
		procs = append(procs, cubs[a])
	}
	s.WaitReady(procs...)
	orch = s.StartOrchestrator()
	s.WaitReady(orch)
	return orch, cubs
}

// Eventually polls cond against one deadline and fails the test with what
// it waited for when the deadline passes.
func (s *Stack) Eventually(timeout time.Duration, what string, cond func() bool) {
	s.T.Helper()
	eventually.True(s.T, timeout, what, cond)
}

// PostGoal writes a goal artefact and returns its id (= the workflow id).
func (s *Stack) PostGoal(text string) string {
	s.T.Helper()
	g := blackboard.NewGoal(text, 0, "user", nil)
	if err := s.BB.CreateArtefact(context.Background(), g, blackboard.WriteAuth{}); err != nil {
		s.T.Fatal(err)
	}
	return g.ID
}

// WaitWorkflow blocks on the event stream until the workflow ends, and
// returns it.
func (s *Stack) WaitWorkflow(id string, timeout time.Duration) *blackboard.Workflow {
	s.T.Helper()
	w, err := WaitWorkflow(context.Background(), s.BB, id, timeout)
	if err != nil {
		s.T.Fatal(err)
	}
	return w
}

// WaitWorkflow waits until workflow id has a final status, reading the
// event stream with blocking reads (no polling of the hash).
func WaitWorkflow(ctx context.Context, bb *blackboard.Client, id string, timeout time.Duration) (*blackboard.Workflow, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	after := "0"
	for {
		w, err := bb.GetWorkflow(ctx, id)
		if err != nil && !errors.Is(err, blackboard.ErrNotFound) {
			return nil, err
		}
		if w != nil && w.Status.Final() {
			return w, nil
		}
		events, err := bb.ReadEvents(ctx, after, 1000, time.Second)
		if err != nil {
			if ctx.Err() != nil {
				return w, fmt.Errorf("workflow %s did not end within %s (status %v)", id, timeout, statusOf(w))
			}
			return nil, err
		}
		for _, e := range events {
			after = e.StreamID
		}
	}
}

func statusOf(w *blackboard.Workflow) string {
	if w == nil {
		return "missing"
	}
	return string(w.Status) + ", open items " + strconv.Itoa(w.OpenItems)
}

// StartOrchestratorWith starts an orchestrator with extra environment
// (e.g. SETT_FAILPOINT=...).
func (s *Stack) StartOrchestratorWith(env ...string) *Proc {
	name := "orchestrator"
	if n := s.count("orchestrator"); n > 0 {
		name = fmt.Sprintf("orchestrator-%d", n+1)
	}
	return s.start(name, []string{s.Bin.Orchestrator, "--id", name, "--leader-ttl", "2s"},
		append(append(s.baseEnv(), s.extraEnv(name)...), env...))
}

// SetEnv replaces the extra environment used by the next Start.
func (p *Proc) SetEnv(env ...string) {
	p.proc.SetEnv(append(append(p.stack.baseEnv(), p.stack.extraEnv(p.Name)...), env...))
}

// WaitExit waits until the process exits on its own and returns its exit
// code; it fails the test after timeout.
func (p *Proc) WaitExit(timeout time.Duration) int {
	p.stack.T.Helper()
	select {
	case <-p.proc.Exited():
	case <-time.After(timeout):
		p.stack.T.Fatalf("%s did not exit within %s", p.Name, timeout)
	}
	return p.proc.ExitCode()
}

// Restart starts a process that exited (or was killed) again.
func (p *Proc) Restart() {
	p.stack.T.Helper()
	if p.Running() {
		p.stack.T.Fatalf("%s is still running", p.Name)
	}
	if err := p.Start(); err != nil {
		p.stack.T.Fatal(err)
	}
}

// WriteConfig replaces sett.yml (processes read it when they start).
func (s *Stack) WriteConfig(yaml string) {
	s.T.Helper()
	if s.redisYAML != "" {
		yaml = strings.TrimRight(yaml, "\n") + "\nservices:\n  redis:\n" + indent(s.redisYAML, "    ")
	}
	if err := os.WriteFile(s.Config, []byte(yaml), 0o644); err != nil {
		s.T.Fatal(err)
	}
}

// Artefacts returns every artefact of a workflow, oldest first.
func (s *Stack) Artefacts(workflowID string) []*blackboard.Artefact {
	s.T.Helper()
	ctx := context.Background()
	page, err := s.BB.ListArtefacts(ctx, blackboard.PageQuery{WorkflowID: workflowID, Limit: 10000})
	if err != nil {
		s.T.Fatal(err)
	}
	arts, err := s.BB.GetArtefacts(ctx, page.IDs)
	if err != nil {
		s.T.Fatal(err)
	}
	for i, j := 0, len(arts)-1; i < j; i, j = i+1, j-1 {
		arts[i], arts[j] = arts[j], arts[i]
	}
	return arts
}

// OfType filters artefacts by type.
func OfType(arts []*blackboard.Artefact, typ string) []*blackboard.Artefact {
	var out []*blackboard.Artefact
	for _, a := range arts {
		if a.Type == typ {
			out = append(out, a)
		}
	}
	return out
}

// Claims returns every claim of a workflow, oldest first.
func (s *Stack) Claims(workflowID string) []*blackboard.Claim {
	s.T.Helper()
	ctx := context.Background()
	ids, err := s.BB.WorkflowClaims(ctx, workflowID)
	if err != nil {
		s.T.Fatal(err)
	}
	claims, err := s.BB.GetClaims(ctx, ids)
	if err != nil {
		s.T.Fatal(err)
	}
	return claims
}

// Events returns every event of the instance of the given types (all when
// none given), oldest first.
func (s *Stack) Events(types ...blackboard.EventType) []blackboard.Event {
	s.T.Helper()
	all, err := s.BB.RangeEvents(context.Background(), "-", "+", 0)
	if err != nil {
		s.T.Fatal(err)
	}
	if len(types) == 0 {
		return all
	}
	var out []blackboard.Event
	for _, e := range all {
		for _, t := range types {
			if e.Type == t {
				out = append(out, e)
			}
		}
	}
	return out
}

// WaitEvent blocks on the event stream until an event of type t matching
// match (nil: any) appears, and returns it.
func (s *Stack) WaitEvent(t blackboard.EventType, match func(blackboard.Event) bool, timeout time.Duration) blackboard.Event {
	s.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	after := "0"
	for {
		events, err := s.BB.ReadEvents(ctx, after, 1000, time.Second)
		if err != nil {
			s.T.Fatalf("waiting for event %s: %v", t, err)
		}
		for _, e := range events {
			after = e.StreamID
			if e.Type == t && (match == nil || match(e)) {
				return e
			}
		}
	}
}

// indent prefixes every non-empty line of text.
func indent(text, prefix string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if l != "" {
			b.WriteString(prefix)
		}
		b.WriteString(l + "\n")
	}
	return b.String()
}
