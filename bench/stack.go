package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/daemonproc"
	"github.com/settdev/sett/internal/redistest"
)

// agentSpec is one agent of a stack's sett.yml, running the no-op tool.
type agentSpec struct {
	name          string
	mode          string // the no-op tool's -mode
	typ           string // the no-op tool's -type
	strategy      string // bidding_strategy
	consumes      []string
	maxConcurrent int // 0: the default (1)
}

// stackSpec describes a stack: its agents and whether its daemons reach
// Redis through counting proxies.
type stackSpec struct {
	name    string
	agents  []agentSpec
	proxied bool
	// tcp connects the daemons over loopback TCP instead of the Unix
	// socket (the TCP rows; proxied stacks are on TCP anyway).
	tcp bool
	// extra is appended to sett.yml (top-level sections, e.g. retention).
	extra string
	// orchestrator is added to the orchestrator section (", key: value").
	orchestrator string
	// askRuleBids sets orchestrator.decide_rule_bids: false, so that
	// every agent is asked to bid and answers with a submit_bid; by
	// default the orchestrator records the bids the noop agents' rules
	// decide and nobody bids.
	askRuleBids bool
	// topology, when set, is the Redis the stack uses instead of a
	// redis-server of its own (a cluster, a TLS node): the daemons read
	// it from services.redis, as a user's would. The caller stops it.
	topology *redistest.Topology
}

// stack is a running Sett instance: its own redis-server, one cub per
// agent and one orchestrator, started as the local runtime starts them
// (same environment variables, JSON logs at the default info level), plus
// the harness's own blackboard client and event watcher.
type stack struct {
	Name     string
	Instance string
	// AskRuleBids: the agents are asked to bid (stackSpec.askRuleBids).
	AskRuleBids bool
	Dir         string
	Redis       *redistest.Server
	// Topology is the Redis of a stack on a cluster or TLS (Redis and Raw
	// are nil then); Remote is the harness's client on it.
	Topology *redistest.Topology
	Remote   redis.UniversalClient
	// BB is the harness's client; Counter counts its round trips.
	BB      *blackboard.Client
	Raw     *redis.Client
	Counter *clientCounter
	Watcher *eventWatcher

	Orchestrator *daemonproc.Process
	Cubs         []*daemonproc.Process
	// Proxies by process name, when the stack is proxied.
	Proxies map[string]*RoundTripProxy
}

// bidders is how many bid_submitted events a goal gets on a stack of
// agents noop agents: each one bids when asked; none is asked when the
// orchestrator records the bids their rules decide (the default).
func (s *stack) bidders(agents int) int {
	if s.AskRuleBids {
		return agents
	}
	return 0
}

// yaml renders the stack's sett.yml.
func (sp stackSpec) yaml(noop string) string {
	var b strings.Builder
	b.WriteString("version: \"1.0\"\n")
	// A generous bid timeout: every agent answers within milliseconds, and
	// a timeout firing would be a bug the figures should not hide.
	orch := sp.orchestrator
	if sp.askRuleBids {
		orch += ", decide_rule_bids: false"
	}
	b.WriteString("orchestrator: {bid_timeout: 10s" + orch + "}\n")
	b.WriteString("agents:\n")
	for _, a := range sp.agents {
		cmd := []string{strconv.Quote(noop), `"-mode"`, strconv.Quote(a.mode), `"-type"`, strconv.Quote(a.typ)}
		consumes := make([]string, len(a.consumes))
		for i, c := range a.consumes {
			consumes[i] = strconv.Quote(c)
		}
		fmt.Fprintf(&b, "  %s: {command: [%s], bidding_strategy: %s, consumes: [%s]", a.name,
			strings.Join(cmd, ", "), a.strategy, strings.Join(consumes, ", "))
		if a.maxConcurrent > 0 {
			fmt.Fprintf(&b, ", max_concurrent: %d", a.maxConcurrent)
		}
		b.WriteString("}\n")
	}
	b.WriteString(sp.extra)
	if sp.topology != nil {
		b.WriteString("services:\n  redis:\n")
		for _, line := range strings.SplitAfter(strings.TrimRight(sp.topology.YAML, "\n")+"\n", "\n") {
			if line != "" {
				b.WriteString("    " + line)
			}
		}
	}
	return b.String()
}

// startStack starts a stack and waits until every daemon is ready: the
// cubs first (registered, heartbeating), then the orchestrator, whose
// first liveness read therefore sees every agent.
func (r *runner) startStack(ctx context.Context, sp stackSpec) (s *stack, err error) {
	started := &stack{Name: sp.name, Instance: "bench-" + sp.name, AskRuleBids: sp.askRuleBids, Dir: filepath.Join(r.workDir, sp.name),
		Topology: sp.topology, Proxies: map[string]*RoundTripProxy{}}
	s = started
	// Every failure returns nil, err, which sets s to nil before this runs:
	// close what was started through a variable of its own.
	defer func() {
		if err != nil {
			started.Close()
		}
	}()
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	if sp.topology == nil {
		if s.Redis, err = startRedisServer(ctx, filepath.Join(s.Dir, "redis"), true); err != nil {
			return nil, err
		}
	}
	config := filepath.Join(s.Dir, "sett.yml")
	if err := os.WriteFile(config, []byte(sp.yaml(r.bins.Noop)), 0o644); err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	if err := s.connect(ctx); err != nil {
		return nil, err
	}
	urlFor := func(proc string) (string, error) {
		if sp.topology != nil {
			if sp.proxied {
				return "", fmt.Errorf("bench: stack %s: the round-trip proxies need a single node, not %s", sp.name, sp.topology.Name)
			}
			return "", nil
		}
		if !sp.proxied && !sp.tcp {
			// As the local runtime connects its daemons.
			return socketURL(s.Redis), nil
		}
		if !sp.proxied {
			return s.Redis.URL(), nil
		}
		p, err := NewRoundTripProxy(proc, s.Redis.Addr, r.scriptNames)
		if err != nil {
			return "", err
		}
		s.Proxies[proc] = p
		return urlVia(s.Redis, p.Addr()), nil
	}
	env := func(url string) []string {
		e := []string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
			"SETT_INSTANCE=" + s.Instance, "SETT_CONFIG=" + config,
			"SETT_LOG_FORMAT=json",
		}
		if url != "" { // a topology stack's daemons read services.redis
			e = append(e, "SETT_REDIS_URL="+url)
		}
		return e
	}
	for _, a := range sp.agents {
		url, err := urlFor("cub-" + a.name)
		if err != nil {
			return nil, err
		}
		p, err := daemonproc.Start(daemonproc.Spec{Name: "cub-" + a.name, Argv: []string{r.bins.Cub, "--agent", a.name,
			"--workspace", s.Dir, "--consumer", s.Instance + "-" + a.name}, Env: env(url), Dir: s.Dir})
		if err != nil {
			return nil, err
		}
		s.Cubs = append(s.Cubs, p)
	}
	for _, p := range s.Cubs {
		if err := p.WaitReady(ctx, 30*time.Second); err != nil {
			return nil, err
		}
	}
	url, err := urlFor("orchestrator")
	if err != nil {
		return nil, err
	}
	if s.Orchestrator, err = daemonproc.Start(daemonproc.Spec{Name: "orchestrator",
		Argv: []string{r.bins.Orchestrator, "--id", s.Instance + "-orchestrator"}, Env: env(url), Dir: s.Dir}); err != nil {
		return nil, err
	}
	if err := s.Orchestrator.WaitReady(ctx, 30*time.Second); err != nil {
		return nil, err
	}
	if sp.topology != nil {
		s.Watcher, err = startEventWatcherOn(ctx, sp.topology.Client(2),
			blackboard.Options{Instance: s.Instance, HashTag: sp.topology.HashTag}, s.Counter)
	} else {
		s.Watcher, err = startEventWatcher(ctx, s.Redis.URL(), s.Instance, s.Counter)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// connect opens the harness's counted client.
func (s *stack) connect(ctx context.Context) error {
	if s.Topology != nil {
		s.Remote = s.Topology.Client(64)
		s.Counter = &clientCounter{}
		s.Remote.AddHook(s.Counter)
		var err error
		s.BB, err = blackboard.New(ctx, s.Remote, blackboard.Options{Instance: s.Instance, HashTag: s.Topology.HashTag})
		return err
	}
	ro, err := redis.ParseURL(s.Redis.URL())
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	// Room for the concurrent posting and seeding goroutines.
	ro.PoolSize = 64
	s.Raw = redis.NewClient(ro)
	s.Counter = &clientCounter{}
	s.Raw.AddHook(s.Counter)
	s.BB, err = blackboard.New(ctx, s.Raw, blackboard.Options{Instance: s.Instance})
	return err
}

// Processes returns the daemons, orchestrator first.
func (s *stack) Processes() []*daemonproc.Process {
	if s.Orchestrator == nil {
		return s.Cubs
	}
	return append([]*daemonproc.Process{s.Orchestrator}, s.Cubs...)
}

// PostGoal writes a goal and returns its id and the host time right after
// the write returned.
func (s *stack) PostGoal(ctx context.Context, text string) (string, time.Time, error) {
	g := blackboard.NewGoal(text, 0, "user", nil)
	if err := s.BB.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
		return "", time.Time{}, err
	}
	return g.ID, time.Now(), nil
}

// RunGoal posts a goal and waits until its workflow ends; a workflow that
// does not complete is an error naming its outcome.
func (s *stack) RunGoal(ctx context.Context, text string) (id string, written time.Time, end observedEvent, err error) {
	id, written, err = s.PostGoal(ctx, text)
	if err != nil {
		return "", time.Time{}, observedEvent{}, err
	}
	end, err = s.WaitCompleted(ctx, id)
	return id, written, end, err
}

// WaitCompleted waits for the end of a workflow, which must be completed.
func (s *stack) WaitCompleted(ctx context.Context, id string) (observedEvent, error) {
	end, err := s.Watcher.WaitWorkflow(ctx, id, 60*time.Second)
	if err != nil {
		return end, fmt.Errorf("%w (stack %s, logs in %s)", err, s.Name, s.Dir)
	}
	if st := end.Field("status"); st != string(blackboard.WorkflowCompleted) {
		return end, fmt.Errorf("bench: workflow %s ended %s: %s (stack %s, logs in %s)", id, st, end.Field("reason"), s.Name, s.Dir)
	}
	return end, nil
}

// Close stops everything the stack started. Safe on a half-started stack.
func (s *stack) Close() {
	if s.Watcher != nil {
		s.Watcher.Close()
	}
	var wg sync.WaitGroup
	for _, p := range s.Processes() {
		wg.Add(1)
		go func(p *daemonproc.Process) { defer wg.Done(); p.Stop(50 * time.Millisecond) }(p)
	}
	wg.Wait()
	for _, p := range s.Proxies {
		p.Close()
	}
	if s.Raw != nil {
		_ = s.Raw.Close()
	}
	if s.Remote != nil {
		_ = s.Remote.Close()
	}
	if s.Redis != nil {
		s.Redis.Shutdown()
	}
}
