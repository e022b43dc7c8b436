package cub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/writeretry"
)

// Version is reported in the agent registration.
var Version = "dev"

// Cub is the sidecar of one agent. Build it with New and call Run once.
type Cub struct {
	bb      *blackboard.Client
	cfg     Config
	log     zerolog.Logger
	m       *Metrics
	keeper  *LeaseKeeper
	inbox   *InboxLoop
	Runner  *WorkRunner
	Bidder  *Bidder
	regDone chan struct{}
}

// New wires a cub for the agent described by cfg.
func New(bb *blackboard.Client, cfg Config, m *Metrics, log zerolog.Logger) (*Cub, error) {
	cfg.applyDefaults()
	if err := blackboard.ValidateAgentName(cfg.Agent); err != nil {
		return nil, err
	}
	if len(cfg.Command) == 0 {
		return nil, fmt.Errorf("cub: agent %s has no tool command (set agents.%s.command in sett.yml, or give the image a CMD)", cfg.Agent, cfg.Agent)
	}
	// log has no component: the services below add their own, and the
	// cub's own lines are component "cub" (each key once per line).
	log = log.With().Str("agent", cfg.Agent).Logger()
	c := &Cub{bb: bb, cfg: cfg, log: log.With().Str("component", "cub").Logger(), m: m, regDone: make(chan struct{})}
	c.keeper = NewLeaseKeeper(bb, cfg.leaseKeeper(), m, log)
	c.Runner = NewWorkRunner(WorkRunnerParams{Client: bb, Config: cfg.workRunner(), Builder: NewContextBuilder(bb, cfg.ContextDepth),
		Metrics: m, Log: log})
	c.Bidder = NewBidder(bb, cfg.bidder(), c.Runner.ToolEnv(""), log)
	c.inbox = NewInboxLoop(InboxLoopParams{Client: bb, Config: cfg.inboxLoop(), Bidder: c.Bidder, Runner: c.Runner,
		Keeper: c.keeper, Metrics: m, Log: log})
	return c, nil
}

// Ready reports why the cub is not ready, or nil: registered, heartbeat
// fresh, inbox being read.
func (c *Cub) Ready(ctx context.Context) error {
	select {
	case <-c.regDone:
	default:
		return errors.New("not registered yet")
	}
	if !c.keeper.Alive() {
		return errors.New("heartbeat not confirmed by Redis")
	}
	if !c.inbox.Started() {
		return errors.New("inbox not being read yet")
	}
	return c.bb.Ping(ctx)
}

// Beat renews the heartbeat and the held leases once now, on the goroutine
// the periodic beats use. The daemon calls it after the start-up
// collection and before it drops the start-up pages, so that the stack
// the beats need grows back while those pages are still mapped
// (idlemem.Release).
func (c *Cub) Beat(ctx context.Context) { c.keeper.Beat(ctx) }

// Run registers the agent (retrying until Redis answers), then heartbeats
// and serves the inbox until ctx ends.
func (c *Cub) Run(ctx context.Context) error {
	reg := blackboard.Registration{Name: c.cfg.Agent, Role: c.cfg.Role, Consumes: c.cfg.Consumes,
		Strategy: c.cfg.Strategy, Consumer: c.cfg.Consumer, Version: Version, StartedAtMs: time.Now().UnixMilli()}
	if err := writeretry.Until(ctx, time.Time{}, func(ctx context.Context) error {
		return c.bb.RegisterAgent(ctx, reg, c.cfg.HeartbeatTTL)
	}, func(err error, wait time.Duration) {
		c.log.Warn().Err(err).Dur("wait", wait).Msg("registering the agent failed; retrying")
	}); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	c.keeper.Beat(ctx)
	close(c.regDone)
	c.log.Info().Str("role", c.cfg.Role).Str("consumer", c.cfg.Consumer).Strs("command", c.cfg.Command).Msg("cub registered")

	// When ctx ends the inbox stops taking work; running grants go on
	// under work for the drain, with their leases renewed and withdrawals
	// heard (under keep), and are stopped when the drain ends.
	work, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWork()
	keep, stopKeep := context.WithCancel(context.WithoutCancel(ctx))
	defer stopKeep()
	drained := make(chan struct{})
	go c.drain(ctx, drained, stopWork)

	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); _ = c.keeper.Run(keep) }()
	go func() { defer wg.Done(); c.watchWithdrawals(keep) }()
	err := c.inbox.Run(ctx, work)
	close(drained)
	stopKeep()
	wg.Wait()
	return err
}

// drain ends work when ctx has ended and cfg.DrainTimeout has passed, or
// at once without a drain; it returns early once the inbox loop has
// returned (drained closed).
func (c *Cub) drain(ctx context.Context, drained <-chan struct{}, stopWork context.CancelFunc) {
	select {
	case <-ctx.Done():
	case <-drained:
		return
	}
	defer stopWork()
	if c.cfg.DrainTimeout <= 0 {
		return
	}
	running := c.keeper.Held()
	if running == 0 {
		return
	}
	c.log.Info().Int("grants", running).Dur("drain_timeout", c.cfg.DrainTimeout).
		Msg("stopping: taking no new work; running tools may finish within the drain")
	t := time.NewTimer(c.cfg.DrainTimeout)
	defer t.Stop()
	select {
	case <-drained:
		c.log.Info().Msg("drained: every running tool finished")
	case <-t.C:
		c.log.Warn().Int("grants", c.keeper.Held()).Msg("drain time over: stopping the tools still running and handing back their grants")
	}
}

// watchWithdrawals listens on the agent's channel for grants withdrawn
// while held (the orchestrator deletes their leases when their claims
// end, e.g. on `sett cancel`) and makes the lease keeper look at once.
// Pub/sub is only a doorbell: without it the next beat finds the lease
// gone all the same, a beat period later.
func (c *Cub) watchWithdrawals(ctx context.Context) {
	bo := backoff.NewExponentialBackOff()
	bo.MaxInterval, bo.MaxElapsedTime = 5*time.Second, 0
	for ctx.Err() == nil {
		sub, err := c.bb.Subscribe(ctx, c.bb.Keys().AgentEvents(c.cfg.Agent))
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(bo.NextBackOff()):
			}
			continue
		}
		bo.Reset()
		c.serveWithdrawals(ctx, sub)
		_ = sub.Close()
	}
}

func (c *Cub) serveWithdrawals(ctx context.Context, sub *blackboard.Subscription) {
	for {
		select {
		case <-ctx.Done():
			return
		case n, ok := <-sub.C():
			if !ok {
				return
			}
			var msg struct {
				Kind    string `json:"kind"`
				ClaimID string `json:"claim_id"`
			}
			if json.Unmarshal([]byte(n.Payload), &msg) == nil && msg.Kind == "withdrawn" && c.keeper.Holding(msg.ClaimID) {
				c.log.Info().Str("claim_id", msg.ClaimID).Msg("grant withdrawn; checking the lease now")
				c.keeper.Poke()
			}
		}
	}
}
