package chaos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/daemonproc"
	"github.com/settdev/sett/internal/redistest"
)

// FaultKind names one kind of injected fault.
type FaultKind string

// The fault kinds, in the order the report lists them.
const (
	KillOrchestrator FaultKind = "kill orchestrator"
	KillCub          FaultKind = "kill cub"
	KillRedis        FaultKind = "kill redis (AOF)"
	Latency          FaultKind = "latency 100±50ms, 3s"
	Reset            FaultKind = "connection resets"
	Partition        FaultKind = "partition 3s"
	// Outage cuts every daemon off Redis for longer than bid_timeout:
	// claims collecting bids must ask again, never end as dead ends.
	Outage FaultKind = "redis unreachable 3.5s (> bid_timeout)"
	// FreezeCub stops one cub (SIGSTOP) across a bid window, shorter
	// than the lease: its silence must not count as an ignore.
	FreezeCub FaultKind = "cub frozen 2.5s (SIGSTOP)"
	// TruncatedAOF kills Redis and cuts the tail of its append-only file
	// before the restart: the blackboard loses its last writes.
	TruncatedAOF FaultKind = "kill redis, AOF tail cut"
)

// AllFaultKinds lists every fault kind.
func AllFaultKinds() []FaultKind {
	return []FaultKind{KillOrchestrator, KillCub, KillRedis, Latency, Reset, Partition, Outage, FreezeCub, TruncatedAOF}
}

// campaignFaultKinds are the kinds a campaign draws from: every kind but
// TruncatedAOF unless the options ask for Redis rollbacks.
func campaignFaultKinds(o Options) []FaultKind {
	kinds := AllFaultKinds()
	if o.Rollback {
		return kinds
	}
	return slices.DeleteFunc(kinds, func(k FaultKind) bool { return k == TruncatedAOF })
}

const (
	instanceName = "chaos"
	draftType    = "ChaosDraft"
	reviewType   = "ChaosReview"
	doneType     = "ChaosDone"
	// toolSleepMax bounds the long tool (two replicas of the coder).
	toolSleepMax = 1500 * time.Millisecond
)

// campaign is one run: its Redis, proxy, daemons and what it observed.
type campaign struct {
	opts   Options
	dir    string
	bins   map[string]string
	rng    *mrand.Rand
	redis  *redistest.Server
	proxy  *toxiproxy.Proxy
	bb     *blackboard.Client
	rdb    *redis.Client
	orch   *daemonproc.Process
	cubs   []*daemonproc.Process
	stamps string
	// cubDeaths maps the pid of each cub a fault killed to when it was
	// reaped (Unix ns), for the double-run check.
	cubDeaths map[int]int64

	mu       sync.Mutex
	posted   []string
	recovery map[FaultKind][]time.Duration
	injected map[FaultKind]int
}

// Run runs a campaign and returns its report. An error means the campaign
// could not run (a build failed, a daemon never started); broken
// invariants are in the report, not errors.
func Run(ctx context.Context, opts Options) (Report, error) {
	opts = opts.withDefaults()
	c := &campaign{opts: opts, rng: mrand.New(mrand.NewPCG(uint64(opts.Seed), 0x5e77)),
		recovery: map[FaultKind][]time.Duration{}, injected: map[FaultKind]int{}, cubDeaths: map[int]int64{}}
	var err error
	if c.dir = opts.WorkDir; c.dir == "" {
		if c.dir, err = os.MkdirTemp("", "sett-chaos-*"); err != nil {
			return Report{}, fmt.Errorf("chaos: %w", err)
		}
		if !opts.KeepWorkDir {
			defer os.RemoveAll(c.dir)
		}
	}
	root := opts.RepoRoot
	if root == "" {
		if root, err = daemonproc.RepoRoot(); err != nil {
			return Report{}, fmt.Errorf("chaos: %w: run from the repository", err)
		}
	}
	c.progress("building the daemons and the chaos tool in %s", c.dir)
	if err := c.build(ctx, root); err != nil {
		return Report{}, err
	}
	if err := c.start(ctx); err != nil {
		c.close()
		return Report{}, err
	}
	defer c.close()
	started := time.Now()
	if err := c.drive(ctx); err != nil {
		return Report{}, err
	}
	c.progress("draining: waiting up to %s for every workflow to end", opts.Drain)
	c.drain(ctx)
	rep, err := c.check(ctx)
	rep.Duration = time.Since(started)
	return rep, err
}

func (c *campaign) progress(format string, args ...any) {
	fmt.Fprintf(c.opts.Progress, "chaos: "+format+"\n", args...)
}

// build compiles the orchestrator, the cub and the chaos tool.
func (c *campaign) build(ctx context.Context, root string) error {
	paths, err := daemonproc.Build(ctx, root, filepath.Join(c.dir, "bin"), daemonproc.Target{Pkg: "./cmd/orchestrator"},
		daemonproc.Target{Pkg: "./cmd/cub"}, daemonproc.Target{Pkg: "./chaos/cmd/sett-chaos-tool"})
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	c.bins = map[string]string{"orchestrator": paths[0], "cub": paths[1], "tool": paths[2]}
	return nil
}

// yaml is the campaign's sett.yml: an author writes a draft from each goal;
// two reviewers review every draft in parallel (one sends version 1 back:
// a feedback loop); a coder with two replicas runs a long tool on the
// approved draft and ends the workflow. Timeouts are short so that a
// killed cub's grant comes back within seconds. Retention keeps
// everything during the campaign; the check runs the janitor afterwards.
func (c *campaign) yaml() string {
	tool := func(mode, typ string, sleep time.Duration) string {
		args := []string{strconv.Quote(c.bins["tool"]), `"-mode"`, strconv.Quote(mode), `"-type"`, strconv.Quote(typ),
			`"-stamps"`, strconv.Quote(c.stamps)}
		if sleep > 0 {
			args = append(args, `"-sleep-max"`, strconv.Quote(sleep.String()))
		}
		return "[" + strings.Join(args, ", ") + "]"
	}
	// bid_timeout (2 s) is shorter than the partitions, the outages and
	// the freezes: a claim whose consumers could not answer in time asks
	// again instead of ending as a dead end, and that is what the
	// campaign checks (a completed workflow always has its work). The
	// lease (5 s) outlasts a frozen cub (2.5 s), so a freeze costs no
	// grant.
	return fmt.Sprintf(`version: "1.0"
orchestrator: {bid_timeout: 2s, no_bid_timeout: 5m, lease_ttl: 5s, agent_heartbeat_ttl: 3s, max_review_iterations: 3}
agents:
  author: {command: %s, bidding_strategy: exclusive, consumes: [GoalDefined], max_concurrent: 4}
  reviewer-a: {command: %s, bidding_strategy: review, consumes: [%s], max_concurrent: 4}
  reviewer-b: {command: %s, bidding_strategy: review, consumes: [%s], max_concurrent: 4}
  coder: {command: %s, bidding_strategy: exclusive, consumes: [%s], max_concurrent: 2}
retention: {workflows: 0, events_max_len: 0, events_max_age: 0, consumer_idle: 0}
`, tool("standard", draftType, 0),
		tool("review-reject-v1", reviewType, 0), draftType,
		tool("review-approve", reviewType, 0), draftType,
		tool("terminal", doneType, toolSleepMax), draftType)
}

// start starts Redis (AOF, fsync always: the campaign tests Sett's
// recovery, not the one-second window of everysec), the proxy, the cubs
// and the orchestrator.
func (c *campaign) start(ctx context.Context) error {
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return err
	}
	var err error
	c.redis, err = redistest.NewServer(redistest.ServerOptions{Password: hex.EncodeToString(raw), AppendOnly: true,
		AppendFsync: "always", Dir: filepath.Join(c.dir, "redis")})
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	listen := l.Addr().String()
	l.Close()
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	c.proxy = toxiproxy.NewProxy(server, "redis", listen, c.redis.Addr)
	if err := c.proxy.Start(); err != nil {
		return fmt.Errorf("chaos: start toxiproxy: %w", err)
	}
	ro, err := redis.ParseURL(c.redis.URL())
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	ro.PoolSize = 32
	c.rdb = redis.NewClient(ro)
	if c.bb, err = blackboard.New(ctx, c.rdb, blackboard.Options{Instance: instanceName}); err != nil {
		return err
	}
	c.stamps = filepath.Join(c.dir, "stamps.log")
	config := filepath.Join(c.dir, "sett.yml")
	if err := os.WriteFile(config, []byte(c.yaml()), 0o644); err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	viaProxy := (&url.URL{Scheme: "redis", User: url.UserPassword("", c.redis.Password), Host: listen, Path: "/0"}).String()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "SETT_INSTANCE=" + instanceName,
		"SETT_REDIS_URL=" + viaProxy, "SETT_CONFIG=" + config, "SETT_LOG_FORMAT=json"}
	for _, cub := range []struct{ agent, consumer string }{
		{"author", "author-1"}, {"reviewer-a", "reviewer-a-1"}, {"reviewer-b", "reviewer-b-1"},
		{"coder", "coder-1"}, {"coder", "coder-2"},
	} {
		p, err := daemonproc.New(daemonproc.Spec{Name: "cub-" + cub.consumer, Argv: []string{c.bins["cub"], "--agent", cub.agent,
			"--workspace", c.dir, "--consumer", cub.consumer}, Env: env, Dir: c.dir})
		if err != nil {
			return err
		}
		c.cubs = append(c.cubs, p)
		if err := startReady(ctx, p); err != nil {
			return err
		}
	}
	// No --id: a restarted orchestrator is a new process, as under the
	// runtimes, and waits for the dead one's leader lease to expire.
	if c.orch, err = daemonproc.New(daemonproc.Spec{Name: "orchestrator", Argv: []string{c.bins["orchestrator"]}, Env: env, Dir: c.dir}); err != nil {
		return err
	}
	return startReady(ctx, c.orch)
}

// startReady (re)starts a daemon and waits until it answers /readyz; a
// loaded machine may take long to start five cubs.
func startReady(ctx context.Context, p *daemonproc.Process) error {
	if err := p.Start(); err != nil {
		return err
	}
	return p.WaitReady(ctx, 60*time.Second)
}

func (c *campaign) close() {
	if c.orch != nil {
		c.orch.KillGroup()
	}
	for _, p := range c.cubs {
		p.KillGroup()
	}
	if c.proxy != nil {
		c.proxy.Stop()
	}
	if c.rdb != nil {
		_ = c.rdb.Close()
	}
	if c.redis != nil {
		c.redis.Shutdown()
	}
}

// drive posts the goals in batches, one before each fault, and injects
// the faults at seeded moments.
func (c *campaign) drive(ctx context.Context) error {
	batches := c.opts.Faults + 1
	per := (c.opts.Workflows + batches - 1) / batches
	kinds := campaignFaultKinds(c.opts)
	for i := 0; i < batches; i++ {
		n := min(per, c.opts.Workflows-len(c.posted))
		if err := c.post(ctx, n); err != nil {
			return err
		}
		if i == c.opts.Faults {
			break
		}
		// A seeded pause, so faults hit workflows at different stages.
		if err := sleep(ctx, time.Duration(200+c.rng.IntN(1300))*time.Millisecond); err != nil {
			return err
		}
		kind := kinds[c.rng.IntN(len(kinds))]
		c.progress("fault %d/%d: %s (%d workflows posted)", i+1, c.opts.Faults, kind, len(c.posted))
		if err := c.inject(ctx, kind); err != nil {
			return fmt.Errorf("fault %d (%s): %w", i+1, kind, err)
		}
	}
	return nil
}

// post writes n goals directly to Redis (not through the proxy),
// retrying a write that fails: CreateArtefact refuses a second write of
// the same id, so a retry never makes two goals.
func (c *campaign) post(ctx context.Context, n int) error {
	for range n {
		g := blackboard.NewGoal(fmt.Sprintf("chaos goal %d", len(c.posted)+1), 0, "user", nil)
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := c.bb.CreateArtefact(ctx, g, blackboard.WriteAuth{})
			if err == nil || errors.Is(err, blackboard.ErrExists) {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("chaos: post goal: %w", err)
			}
			if err := sleep(ctx, 100*time.Millisecond); err != nil {
				return err
			}
		}
		c.mu.Lock()
		c.posted = append(c.posted, g.ID)
		c.mu.Unlock()
	}
	return nil
}

// inject applies one fault, heals it, and measures the time from the heal
// to the next artefact written (progress resumed).
func (c *campaign) inject(ctx context.Context, kind FaultKind) error {
	c.injected[kind]++
	switch kind {
	case KillOrchestrator:
		c.orch.KillGroup()
		if err := startReady(ctx, c.orch); err != nil {
			return err
		}
	case KillCub:
		p := c.cubs[c.rng.IntN(len(c.cubs))]
		pid := p.Pid()
		p.KillGroup()
		// KillGroup returns once the cub is reaped: the kernel sent its
		// tools their parent-death SIGKILL before that.
		c.cubDeaths[pid] = time.Now().UnixNano()
		if err := startReady(ctx, p); err != nil {
			return err
		}
	case KillRedis:
		if err := c.redis.Kill(); err != nil {
			return err
		}
		if err := sleep(ctx, time.Duration(200+c.rng.IntN(800))*time.Millisecond); err != nil {
			return err
		}
		if err := c.redis.Start(); err != nil {
			return err
		}
	case TruncatedAOF:
		if err := c.redis.Kill(); err != nil {
			return err
		}
		if err := cutAOFTail(filepath.Join(c.dir, "redis"), 512); err != nil {
			return err
		}
		if err := c.redis.Start(); err != nil {
			return err
		}
	case Outage:
		if err := c.toxic(ctx, `{"name":"outage","type":"timeout","stream":"downstream","toxicity":1,"attributes":{"timeout":0}}`, 3500*time.Millisecond); err != nil {
			return err
		}
	case FreezeCub:
		p := c.cubs[c.rng.IntN(len(c.cubs))]
		if err := p.Signal(syscall.SIGSTOP); err != nil {
			return fmt.Errorf("chaos: freeze: %w", err)
		}
		serr := sleep(ctx, 2500*time.Millisecond)
		if err := p.Signal(syscall.SIGCONT); err != nil {
			return fmt.Errorf("chaos: thaw: %w", err)
		}
		if serr != nil {
			return serr
		}
	case Latency:
		if err := c.toxic(ctx, `{"name":"latency","type":"latency","stream":"downstream","toxicity":1,"attributes":{"latency":100,"jitter":50}}`, 3*time.Second); err != nil {
			return err
		}
	case Reset:
		if err := c.toxic(ctx, `{"name":"reset","type":"reset_peer","stream":"downstream","toxicity":1,"attributes":{"timeout":0}}`, 300*time.Millisecond); err != nil {
			return err
		}
	case Partition:
		if err := c.toxic(ctx, `{"name":"partition","type":"timeout","stream":"downstream","toxicity":1,"attributes":{"timeout":0}}`, 3*time.Second); err != nil {
			return err
		}
	}
	d, ok := c.waitProgress(ctx)
	if ok {
		c.mu.Lock()
		c.recovery[kind] = append(c.recovery[kind], d)
		c.mu.Unlock()
	}
	return nil
}

// toxic adds a toxic to the proxy for d, then removes it.
func (c *campaign) toxic(ctx context.Context, spec string, d time.Duration) error {
	t, err := c.proxy.Toxics.AddToxicJson(strings.NewReader(spec))
	if err != nil {
		return fmt.Errorf("chaos: add toxic: %w", err)
	}
	serr := sleep(ctx, d)
	if err := c.proxy.Toxics.RemoveToxic(context.WithoutCancel(ctx), t.Name); err != nil {
		return fmt.Errorf("chaos: remove toxic %s: %w", t.Name, err)
	}
	return serr
}

// waitProgress waits (polling, up to 60s) until an artefact is written
// after the heal, and returns how long that took. When every posted
// workflow has already ended there is nothing to progress: not measured.
func (c *campaign) waitProgress(ctx context.Context) (time.Duration, bool) {
	healed := time.Now()
	before, err := c.bb.CountArtefacts(ctx)
	for err != nil && time.Since(healed) < 60*time.Second {
		_ = sleep(ctx, 20*time.Millisecond)
		before, err = c.bb.CountArtefacts(ctx)
	}
	deadline := healed.Add(60 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		n, err := c.bb.CountArtefacts(ctx)
		if err == nil && n > before {
			return time.Since(healed), true
		}
		if c.allEnded(ctx) {
			return 0, false
		}
		_ = sleep(ctx, 20*time.Millisecond)
	}
	return time.Since(healed), true
}

// allEnded reports whether every posted workflow has ended.
func (c *campaign) allEnded(ctx context.Context) bool {
	c.mu.Lock()
	ids := append([]string(nil), c.posted...)
	c.mu.Unlock()
	for _, id := range ids {
		st, err := c.rdb.HGet(ctx, c.bb.Keys().Workflow(id), "status").Result()
		if err != nil || st == string(blackboard.WorkflowRunning) {
			return false
		}
	}
	return true
}

// drain waits until every workflow ended or Drain passed.
func (c *campaign) drain(ctx context.Context) {
	deadline := time.Now().Add(c.opts.Drain)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if c.allEnded(ctx) {
			return
		}
		_ = sleep(ctx, 200*time.Millisecond)
	}
}

// sleep waits d or until ctx ends: a pause of the driver, never a wait
// for something to happen.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// cutAOFTail cuts up to n bytes from the end of the newest incremental
// append-only file under dir (Redis 7's appendonlydir), as a disk that
// lost its last writes would: Redis loads what is left
// (aof-load-truncated, its default) and the blackboard rolls back.
func cutAOFTail(dir string, n int64) error {
	files, err := filepath.Glob(filepath.Join(dir, "appendonlydir", "*.incr.aof"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("chaos: no incremental AOF under %s (%v)", dir, err)
	}
	slices.Sort(files)
	newest := files[len(files)-1]
	st, err := os.Stat(newest)
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	return os.Truncate(newest, max(0, st.Size()-n))
}
