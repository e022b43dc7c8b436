package orchestrator

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
)

// AgentDirectory knows which configured agents exist and which of them are
// alive (their cub's heartbeat key exists). Claims snapshot the live set as
// their expected bidders, so the directory only decides who is asked, never
// how a claim already asked ends.
//
// Safe for concurrent use.
type AgentDirectory struct {
	bb     *blackboard.Client
	log    zerolog.Logger
	every  time.Duration
	agents map[string]string // name → role, from sett.yml
	names  []string

	mu      sync.RWMutex
	live    []string
	loaded  bool
	gen     uint64 // bumped whenever live changes
	refresh chan struct{}
}

// NewAgentDirectory returns a directory of the configured agents (name →
// role), re-reading heartbeats every `every`.
func NewAgentDirectory(bb *blackboard.Client, log zerolog.Logger, agents map[string]string, every time.Duration) *AgentDirectory {
	names := make([]string, 0, len(agents))
	for n := range agents {
		names = append(names, n)
	}
	sort.Strings(names)
	return &AgentDirectory{bb: bb, log: log.With().Str("component", "agent_directory").Logger(),
		every: every, agents: agents, names: names, refresh: make(chan struct{}, 1)}
}

// Run refreshes liveness until ctx ends.
func (d *AgentDirectory) Run(ctx context.Context) error {
	t := time.NewTicker(d.every)
	defer t.Stop()
	for {
		if err := d.Refresh(ctx); err != nil && ctx.Err() == nil {
			d.log.Warn().Err(err).Msg("agent liveness refresh failed")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-d.refresh:
		}
	}
}

// Poke asks for a refresh soon (an agent just registered).
func (d *AgentDirectory) Poke() {
	select {
	case d.refresh <- struct{}{}:
	default:
	}
}

// Refresh re-reads every configured agent's heartbeat in one round trip.
func (d *AgentDirectory) Refresh(ctx context.Context) error {
	alive, err := d.bb.AgentLiveness(ctx, d.names)
	if err != nil {
		return err
	}
	live := make([]string, 0, len(alive))
	for _, n := range d.names {
		if _, ok := alive[n]; ok {
			live = append(live, n)
		}
	}
	d.mu.Lock()
	changed := !d.loaded || !equalStrings(d.live, live)
	d.live, d.loaded = live, true
	if changed {
		d.gen++
	}
	d.mu.Unlock()
	if changed {
		d.log.Info().Strs("live_agents", live).Msg("agent liveness changed")
	}
	return nil
}

// Names returns the sorted names of the configured agents.
func (d *AgentDirectory) Names() []string { return append([]string(nil), d.names...) }

// Live returns the sorted names of configured agents that are alive.
func (d *AgentDirectory) Live() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return append([]string(nil), d.live...)
}

// Generation changes whenever the live set does: what was computed from
// Live under one generation holds until it changes.
func (d *AgentDirectory) Generation() uint64 {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.gen
}

// IsLive reports whether the named agent is alive.
func (d *AgentDirectory) IsLive(name string) bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	for _, n := range d.live {
		if n == name {
			return true
		}
	}
	return false
}

// ProducerFor picks the agent that reworks an artefact produced by role:
// among configured agents with that role, the first live one by name, else
// the first by name. ok is false when no configured agent has the role.
func (d *AgentDirectory) ProducerFor(role string) (string, bool) {
	var candidates []string
	for _, n := range d.names {
		if d.agents[n] == role {
			candidates = append(candidates, n)
		}
	}
	if len(candidates) == 0 {
		return "", false
	}
	for _, n := range candidates {
		if d.IsLive(n) {
			return n, true
		}
	}
	return candidates[0], true
}

// ReworkerFor picks the agent that reworks a version produced by agent
// producer with role role (issue 28: rework goes to the producer of the
// version). See reworker; safe for concurrent use.
func (d *AgentDirectory) ReworkerFor(producer, role string) (agent string, fallback bool, ok bool) {
	return reworker(producer, role, d.agents, d.names, d.IsLive)
}

// reworker picks who reworks a version: its producer when it is a
// configured, live agent; else (fallback true) the first live agent of
// the same role by name; else the producer when it is configured (its
// claim waits for it to come back); else the first agent of the role by
// name (fallback). ok is false when neither the producer nor any agent of
// the role is configured. names are the configured agents, sorted;
// agents maps each to its role.
func reworker(producer, role string, agents map[string]string, names []string, live func(string) bool) (agent string, fallback bool, ok bool) {
	_, configured := agents[producer]
	if configured && live(producer) {
		return producer, false, true
	}
	var candidates []string
	for _, n := range names {
		if n != producer && agents[n] == role {
			candidates = append(candidates, n)
		}
	}
	for _, n := range candidates {
		if live(n) {
			return n, true, true
		}
	}
	switch {
	case configured:
		return producer, false, true
	case len(candidates) > 0:
		return candidates[0], true, true
	}
	return "", false, false
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
