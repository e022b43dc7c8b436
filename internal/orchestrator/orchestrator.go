package orchestrator

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/escalation"
)

// Orchestrator is the coordination daemon of one instance. Build it with
// New and call Run once.
type Orchestrator struct {
	bb      *blackboard.Client
	cfg     Config
	log     zerolog.Logger // component "orchestrator"
	base    zerolog.Logger // no component: each service adds its own
	m       *Metrics
	id      string
	lease   *LeaderLease
	dir     *AgentDirectory
	started atomic.Bool
}

// New wires an orchestrator. id is its stable identity for the leader
// lease: a restart with the same id takes over from its dead predecessor
// at once, so no two live orchestrators may share one (empty: none, a
// restart waits for the lease to expire; see LeaderLease). log must not
// carry a component: each service adds its own.
func New(bb *blackboard.Client, cfg Config, m *Metrics, log zerolog.Logger, id string) *Orchestrator {
	cfg.applyDefaults()
	cfg.Events.MaxConcurrentClaims = cfg.Claims.MaxConcurrentClaims
	o := &Orchestrator{bb: bb, cfg: cfg, log: log.With().Str("component", "orchestrator").Logger(), base: log, m: m}
	o.lease = NewLeaderLease(bb, o.base, id, cfg.LeaderTTL)
	o.id = o.lease.ID()
	o.dir = NewAgentDirectory(bb, o.base, cfg.Agents, cfg.LivenessRefresh)
	return o
}

// Leading reports whether this orchestrator holds the leader lease.
func (o *Orchestrator) Leading() bool { return o.lease.Epoch() != 0 }

// Started reports whether Run has made its first leadership attempt (a
// standby that knows another orchestrator leads is healthy too).
func (o *Orchestrator) Started() bool { return o.started.Load() }

// Run keeps the agent directory fresh and, whenever this process holds the
// leader lease, runs the event loop, timer loop, reconciler and the claim
// workers. It returns when ctx ends.
func (o *Orchestrator) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = o.dir.Run(ctx) }()
	if err := o.dir.Refresh(ctx); err != nil {
		o.log.Warn().Err(err).Msg("first agent liveness read failed")
	}
	o.started.Store(true)
	err := o.lease.Lead(ctx, o.lead)
	wg.Wait()
	return err
}

// lead runs the leader's services until the lease is lost or ctx ends.
func (o *Orchestrator) lead(ctx context.Context, epoch int64) {
	o.m.Leading.Set(1)
	defer o.m.Leading.Set(0)
	epochFn := func() int64 { return epoch }
	disp := NewDispatcher(o.cfg.ClaimHandlers, 256)
	advancer := NewClaimAdvancer(AdvancerParams{Client: o.bb, Config: o.cfg.Advancer, Claims: o.cfg.Claims,
		Directory: o.dir, Epoch: epochFn, Metrics: o.m, Log: o.base})
	learnings := NewLearningsPublisher(o.bb, o.cfg.VaultManagesToolMemory, o.base)
	advancer.LearningsChangedFunc = learnings.Publish
	timers := NewTimerLoop(TimerLoopParams{Client: o.bb, Dispatcher: disp, Advancer: advancer, Epoch: epochFn, Log: o.base})
	advancer.TimerArmedFunc = timers.Armed
	creator := NewClaimCreator(CreatorParams{Client: o.bb, Config: o.cfg.Creator, Claims: o.cfg.Claims,
		Directory: o.dir, Advancer: advancer, Epoch: epochFn, Metrics: o.m, Log: o.base})
	events := NewEventLoop(EventLoopParams{Client: o.bb, Config: o.cfg.Events, Dispatcher: disp, Creator: creator,
		Advancer: advancer, Directory: o.dir, Metrics: o.m, Log: o.base})
	hook := escalation.New(o.cfg.Escalation, o.base)
	defer func() { _ = hook.Close(context.WithoutCancel(ctx)) }()
	events.EscalateFunc = hook.Notify
	reconciler := NewReconciler(ReconcilerParams{Client: o.bb, Config: o.cfg.Reconciler, Dispatcher: disp,
		Advancer: advancer, Metrics: o.m, Log: o.base})
	stopFile := NewStopFileWatcher(o.bb, o.cfg.StopDirs, o.base)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	run := func(name string, f func(context.Context) error) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(ctx); err != nil && ctx.Err() == nil {
				o.log.Error().Err(err).Str("service", name).Msg("service stopped; giving up leadership")
				cancel()
			}
		}()
	}
	// The scheduler's per-agent gates read the limits from Redis; the
	// leader states them from sett.yml before granting anything.
	for {
		err := o.bb.SetCapacity(ctx, o.cfg.AgentLimits, o.cfg.HeartbeatTTL, o.cfg.Claims.LeaseTTL+leaseMargin)
		if err == nil {
			break
		}
		o.log.Warn().Err(err).Msg("storing the agents' capacity failed; retrying")
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
	if err := learnings.Publish(ctx); err != nil && ctx.Err() == nil {
		o.log.Warn().Err(err).Msg("publishing the learnings failed; the next learning publishes them again")
	}
	run("dispatcher", disp.Run)
	run("event_loop", events.Run)
	run("timer_loop", timers.Run)
	run("reconciler", reconciler.Run)
	run("stop_file_watcher", stopFile.Run)
	for _, svc := range o.cfg.LeaderServices {
		run(svc.Name, svc.Run)
	}
	run("janitor", NewJanitor(o.bb, o.cfg.Retention, o.log).Run)
	wg.Wait()
}
