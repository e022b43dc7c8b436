package blackboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Registration is what a cub announces about its agent.
type Registration struct {
	Name        string   `json:"name"`
	Role        string   `json:"role"`
	Consumes    []string `json:"consumes,omitempty"`
	Strategy    string   `json:"bidding_strategy,omitempty"`
	Consumer    string   `json:"consumer"`
	Version     string   `json:"version,omitempty"`
	StartedAtMs int64    `json:"started_at_ms"`
}

// RegisterAgent records the agent in the registry, sets its heartbeat with
// ttl and appends an agent_registered event (to the audit stream and the
// orchestrator's queue), in one MULTI transaction.
func (c *Client) RegisterAgent(ctx context.Context, r Registration, ttl time.Duration) error {
	if err := ValidateAgentName(r.Name); err != nil {
		return err
	}
	body, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("blackboard: encode registration: %w", err)
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	_, err = c.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, c.keys.Agents(), r.Name, string(body))
		p.Set(ctx, c.keys.Heartbeat(r.Name), r.Consumer, ttl)
		values := []any{
			"event", string(EventAgentRegistered), "ts", strconv.FormatInt(time.Now().UnixMilli(), 10),
			"agent", r.Name, "role", r.Role, "consumer", r.Consumer,
		}
		p.XAdd(ctx, &redis.XAddArgs{Stream: c.keys.Events(), Values: values})
		// The orchestrator re-reads agent liveness when one registers.
		p.XAdd(ctx, &redis.XAddArgs{Stream: c.keys.OrchestratorQueue(), Values: values})
		p.Publish(ctx, c.keys.AgentEvents(r.Name), string(body))
		return nil
	})
	if err != nil {
		return fmt.Errorf("blackboard: register agent %s: %w", r.Name, err)
	}
	return nil
}

// HeartbeatParams is one beat of a cub replica.
type HeartbeatParams struct {
	Agent string
	// Consumer is the beating replica.
	Consumer string
	// TTL is how long the beat keeps the agent live.
	TTL time.Duration
	// Leases are the work leases the replica holds, extended to LeaseTTL.
	Leases   []Lease
	LeaseTTL time.Duration
}

// Heartbeat renews the agent's liveness, records this replica's beat,
// extends the given work leases and keeps their grant entries fresh (so
// that a sibling never reclaims work this replica is doing), in one
// pipelined round trip. It returns the leases that were no longer held
// (lost, re-granted or taken by another replica). Errors: ErrInvalid for a
// TTL (or, with leases, a LeaseTTL) under a millisecond.
func (c *Client) Heartbeat(ctx context.Context, p HeartbeatParams) ([]Lease, error) {
	// extend_lease reads a zero TTL as a release: a zero LeaseTTL would
	// silently drop every lease it was asked to keep. A zero TTL would
	// leave a heartbeat that never expires (and that AgentLiveness, which
	// needs a TTL, reports as dead).
	if p.TTL < time.Millisecond || (len(p.Leases) > 0 && p.LeaseTTL < time.Millisecond) {
		return nil, fmt.Errorf("%w: heartbeat ttl %v and lease ttl %v must be at least 1ms", ErrInvalid, p.TTL, p.LeaseTTL)
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	var entries []string
	for _, l := range p.Leases {
		if l.StreamID != "" {
			entries = append(entries, l.StreamID)
		}
	}
	run := func() ([]*redis.Cmd, error) {
		pipe := c.rdb.Pipeline()
		c.scripts.call(ctx, pipe, c.scripts.beat, []string{c.keys.Heartbeat(p.Agent), c.keys.AgentReplicas(p.Agent)},
			p.Consumer, p.TTL.Milliseconds())
		cmds := make([]*redis.Cmd, len(p.Leases))
		for i, l := range p.Leases {
			cmds[i] = c.scripts.call(ctx, pipe, c.scripts.extendLease, []string{c.keys.Lease(l.ClaimID, p.Agent)},
				leaseValue(l.Token, p.Consumer), p.LeaseTTL.Milliseconds())
		}
		if len(entries) > 0 {
			// Claiming our own entries with a min idle of 0 resets their
			// idle time: a sibling's reclaim only takes entries idle far
			// longer than a beat.
			pipe.XClaimJustID(ctx, &redis.XClaimArgs{Stream: c.keys.AgentGrants(p.Agent), Group: inboxGroup,
				Consumer: p.Consumer, MinIdle: 0, Messages: entries})
		}
		_, err := pipe.Exec(ctx)
		return cmds, err
	}
	cmds, err := run()
	if isNoScript(err) {
		if err = c.scripts.preload(ctx, c.rdb); err == nil {
			cmds, err = run()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("blackboard: heartbeat of %s: %w", p.Agent, err)
	}
	var lost []Lease
	for i, cmd := range cmds {
		if n, _ := cmd.Int(); n != 1 {
			lost = append(lost, p.Leases[i])
		}
	}
	return lost, nil
}

// leaseValue is what a lease holds: the grant token and its holder.
func leaseValue(token, holder string) string { return token + "|" + holder }

// Deregister removes the agent's heartbeat so it stops being asked to bid
// (a clean shutdown); the registry entry stays for the audit.
func (c *Client) Deregister(ctx context.Context, agent string) error {
	ctx, cancel := c.op(ctx)
	defer cancel()
	if err := c.rdb.Del(ctx, c.keys.Heartbeat(agent)).Err(); err != nil {
		return fmt.Errorf("blackboard: deregister %s: %w", agent, err)
	}
	return nil
}

// AgentLiveness reports, for each agent name, whether its heartbeat exists
// and (when it does) its remaining TTL; one pipelined round trip.
func (c *Client) AgentLiveness(ctx context.Context, agents []string) (map[string]time.Duration, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	pipe := c.rdb.Pipeline()
	cmds := make([]*redis.DurationCmd, len(agents))
	for i, a := range agents {
		cmds[i] = pipe.PTTL(ctx, c.keys.Heartbeat(a))
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("blackboard: read heartbeats: %w", err)
	}
	out := make(map[string]time.Duration, len(agents))
	for i, a := range agents {
		if d := cmds[i].Val(); d > 0 {
			out[a] = d
		}
	}
	return out, nil
}

// Agents reads the registry: agent name → registration.
func (c *Client) Agents(ctx context.Context) (map[string]Registration, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	m, err := c.rdb.HGetAll(ctx, c.keys.Agents()).Result()
	if err != nil {
		return nil, fmt.Errorf("blackboard: read agents: %w", err)
	}
	out := make(map[string]Registration, len(m))
	for name, v := range m {
		var r Registration
		if err := json.Unmarshal([]byte(v), &r); err != nil {
			return nil, fmt.Errorf("%w: registration of agent %s: %v", ErrCorrupt, name, err)
		}
		out[name] = r
	}
	return out, nil
}

// Lease names a grant a cub holds.
type Lease struct {
	ClaimID string
	Token   string
	// StreamID is the grant's entry in the agent's grants stream, kept
	// fresh by Heartbeat ("" when unknown).
	StreamID string
}

// TakeLeaseParams names the work lease TakeLease takes.
type TakeLeaseParams struct {
	ClaimID string
	Agent   string
	// Token is the grant's token.
	Token string
	// Holder is the cub (consumer) that runs the work.
	Holder string
	TTL    time.Duration
}

// TakeLease takes the work lease for a grant before the cub (p.Holder)
// runs it. Errors: ErrStaleGrant (re-granted: drop it), ErrExists
// (already delivered: a replay), ErrStaleStatus (the claim ended),
// ErrLeaseHeld (another replica runs it), ErrNotFound, ErrInvalid.
func (c *Client) TakeLease(ctx context.Context, p TakeLeaseParams) error {
	if err := ValidateID(p.ClaimID); err != nil {
		return err
	}
	if p.TTL < time.Millisecond {
		return fmt.Errorf("%w: lease ttl %v must be at least 1ms", ErrInvalid, p.TTL)
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	res, err := c.run(ctx, c.scripts.takeLease,
		[]string{c.keys.Claim(p.ClaimID), c.keys.Grants(p.ClaimID), c.keys.Outputs(p.ClaimID), c.keys.Lease(p.ClaimID, p.Agent)},
		p.Agent, p.Token, p.TTL.Milliseconds(), p.Holder)
	if err != nil {
		return err
	}
	if err := scriptError("take_lease", res); err != nil {
		return fmt.Errorf("lease of %s on claim %s: %w", p.Agent, p.ClaimID, err)
	}
	return nil
}

// ReleaseLease drops a lease the cub (holder) still holds under token.
func (c *Client) ReleaseLease(ctx context.Context, claimID, agent, token, holder string) error {
	ctx, cancel := c.op(ctx)
	defer cancel()
	if err := c.evalsha(ctx, c.scripts.extendLease, []string{c.keys.Lease(claimID, agent)}, leaseValue(token, holder), 0).Err(); err != nil {
		return fmt.Errorf("blackboard: release lease of %s on claim %s: %w", agent, claimID, err)
	}
	return nil
}

// HandBackLease drops a lease the cub (holder) still holds under token and
// marks the grant as handed back (for keep): a draining cub whose tool
// could not finish in time gives the work back, and the orchestrator
// grants it again without counting the attempt. Returns whether the lease
// was still held (false: it had lapsed, and the grant counts as lost).
func (c *Client) HandBackLease(ctx context.Context, claimID, agent, token, holder string, keep time.Duration) (bool, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	n, err := c.evalsha(ctx, c.scripts.extendLease, []string{c.keys.Lease(claimID, agent), c.keys.HandBack(claimID, agent)},
		leaseValue(token, holder), 0, keep.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("blackboard: hand back the grant of %s on claim %s: %w", agent, claimID, err)
	}
	return n == 1, nil
}

// TakeGrant takes the work lease of a grant and reads what running it
// needs — the claim, its target and its workflow — in one pipelined round
// trip. Errors: those of TakeLease (the reads are then not returned), and
// those of ReadGrant.
func (c *Client) TakeGrant(ctx context.Context, g InboxMessage, holder string, ttl time.Duration) (*GrantView, error) {
	if err := validateIDs(g.ClaimID, g.ArtefactID, g.WorkflowID); err != nil {
		return nil, err
	}
	if err := ValidateAgentName(g.Agent); err != nil {
		return nil, err
	}
	if ttl < time.Millisecond {
		return nil, fmt.Errorf("%w: lease ttl %v is under 1ms", ErrInvalid, ttl)
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	var memRev, shared *redis.StringCmd
	var memories *redis.MapStringStringCmd
	run := func() (*redis.Cmd, [3]*redis.MapStringStringCmd, error) {
		var reads [3]*redis.MapStringStringCmd
		pipe := c.rdb.Pipeline()
		lease := c.scripts.call(ctx, pipe, c.scripts.takeLease,
			[]string{c.keys.Claim(g.ClaimID), c.keys.Grants(g.ClaimID), c.keys.Outputs(g.ClaimID), c.keys.Lease(g.ClaimID, g.Agent)},
			g.Agent, g.Token, ttl.Milliseconds(), holder)
		reads[0] = pipe.HGetAll(ctx, c.keys.Claim(g.ClaimID))
		reads[1] = pipe.HGetAll(ctx, c.keys.Artefact(g.ArtefactID))
		reads[2] = pipe.HGetAll(ctx, c.keys.Workflow(g.WorkflowID))
		memRev = pipe.HGet(ctx, c.keys.ToolMemory(), "rev")
		shared = pipe.HGet(ctx, c.keys.SharedMemory(g.WorkflowID), "json")
		memories = pipe.HGetAll(ctx, c.keys.WorkflowMemories(g.WorkflowID))
		_, err := pipe.Exec(ctx)
		if errors.Is(err, redis.Nil) {
			err = nil // no tool memory published yet
		}
		return lease, reads, err
	}
	lease, reads, err := run()
	if isNoScript(err) {
		if err = c.scripts.preload(ctx, c.rdb); err == nil {
			lease, reads, err = run()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("blackboard: take grant %s: %w", g.ClaimID, err)
	}
	res, err := lease.StringSlice()
	if err != nil {
		return nil, fmt.Errorf("blackboard: take lease %s: %w", g.ClaimID, err)
	}
	if err := scriptError("take_lease", res); err != nil {
		return nil, fmt.Errorf("lease of %s on claim %s: %w", g.Agent, g.ClaimID, err)
	}
	v := &GrantView{}
	if v.Claim, err = DecodeClaim(reads[0].Val()); err != nil {
		return nil, fmt.Errorf("claim %s: %w", g.ClaimID, err)
	}
	if v.Target, err = DecodeArtefact(reads[1].Val()); err != nil {
		return nil, fmt.Errorf("artefact %s: %w", g.ArtefactID, err)
	}
	if v.Workflow, err = DecodeWorkflow(reads[2].Val()); err != nil {
		return nil, fmt.Errorf("workflow %s: %w", g.WorkflowID, err)
	}
	v.ToolMemoryRev, _ = strconv.ParseInt(memRev.Val(), 10, 64)
	v.SharedMemory = shared.Val()
	if m := memories.Val(); len(m) > 0 {
		v.Memories = make(map[string]StoredMemory, len(m))
		for agent, raw := range m {
			sm, err := decodeStoredMemory(agent, raw)
			if err != nil {
				continue // a memory that does not decode is not passed on; the grant still runs
			}
			v.Memories[agent] = sm
		}
	}
	return v, nil
}
