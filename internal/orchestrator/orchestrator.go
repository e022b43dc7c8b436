package orchestrator

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/escalation"
	"github.com/settdev/sett/pkg/blackboard"
)

// Orchestrator is the coordination daemon of one instance. Build it with
// New and call Run once.
type Orchestrator struct {
	bb      *blackboard.Client
	set     Settings
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
func New(bb *blackboard.Client, set Settings, m *Metrics, log zerolog.Logger, id string) *Orchestrator {
	set.applyDefaults()
	o := &Orchestrator{bb: bb, set: set, log: log.With().Str("component", "orchestrator").Logger(), base: log, m: m}
	o.lease = NewLeaderLease(bb, o.base, id, set.LeaderTTL)
	o.id = o.lease.ID()
	o.dir = NewAgentDirectory(bb, o.base, set.Agents, set.LivenessRefresh)
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
	disp := NewDispatcher(o.set.Workers, 256)
	advancer := NewClaimAdvancer(o.bb, o.set, o.dir, epochFn, o.m, o.base)
	learnings := NewLearningsPublisher(o.bb, o.set.VaultManagesToolMemory, o.base)
	advancer.LearningsChangedFunc = learnings.Publish
	timers := NewTimerLoop(o.bb, disp, advancer, epochFn, o.base)
	advancer.TimerArmedFunc = timers.Armed
	creator := NewClaimCreator(o.bb, o.set, o.dir, advancer, epochFn, o.m, o.base)
	events := NewEventLoop(o.bb, disp, creator, advancer, o.dir, o.m, o.base, o.set.ReconcileEvery)
	hook := escalation.New(o.set.Escalation, o.base)
	defer func() { _ = hook.Close(context.WithoutCancel(ctx)) }()
	events.EscalateFunc = hook.Notify
	reconciler := NewReconciler(o.bb, disp, advancer, o.set.ReconcileEvery, o.m, o.base)
	stopFile := NewStopFileWatcher(o.bb, o.set.StopDirs, o.base)

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
		err := o.bb.SetCapacity(ctx, o.set.AgentLimits, o.set.HeartbeatTTL, o.set.LeaseTTL+leaseMargin)
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
	for _, svc := range o.set.LeaderServices {
		run(svc.Name, svc.Run)
	}
	run("janitor", NewJanitor(o.bb, o.set.Retention, o.log).Run)
	wg.Wait()
}
