package blackboard

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// The scheduler lives in the scripts: a granting step passes
// through the instance-wide gate (pause, max_concurrent_claims, strict
// priority order) and each grant through its agent's gate (max_concurrent
// per live replica). What waits is stored in sorted sets in release
// order, so nothing waiting is lost or doubled by a restart; this file
// holds the calls that configure, inspect and drive it.

// ControlSource says who paused the instance: a person (cli) or the
// .sett_stop file.
const (
	ControlFromCLI      = "cli"
	ControlFromStopFile = "stop_file"
)

// SetCapacity stores the per-agent limits the gates enforce (agent →
// max_concurrent, per replica) and how long a replica counts as live
// after its last beat, replacing what was stored.
//
// leaseCheck is how long after its delivery a grant's lease is first
// checked (the orchestrator's lease TTL plus its margin).
func (c *Client) SetCapacity(ctx context.Context, limits map[string]int, replicaTTL, leaseCheck time.Duration) error {
	vals := []any{"_replica_ttl_ms", strconv.FormatInt(replicaTTL.Milliseconds(), 10),
		"_lease_check_ms", strconv.FormatInt(leaseCheck.Milliseconds(), 10)}
	for _, agent := range sortedKeys(limits) {
		if err := ValidateAgentName(agent); err != nil {
			return err
		}
		vals = append(vals, agent, strconv.Itoa(limits[agent]))
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	_, err := c.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, c.keys.Capacity())
		p.HSet(ctx, c.keys.Capacity(), vals...)
		return nil
	})
	if err != nil {
		return fmt.Errorf("blackboard: store agent capacity: %w", err)
	}
	return nil
}

// PauseState is the instance's pause switch.
type PauseState struct {
	Paused  bool   `json:"paused"`
	SinceMs int64  `json:"since_ms,omitempty"`
	By      string `json:"by,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Source is ControlFromCLI or ControlFromStopFile.
	Source string `json:"source,omitempty"`
}

// Pause stops every new grant from the moment it returns; running tools
// finish. changed is false when the instance was paused already. source
// is ControlFromCLI or ControlFromStopFile.
func (c *Client) Pause(ctx context.Context, by, reason, source string) (changed bool, err error) {
	return c.control(ctx, "pause", by, reason, source)
}

// Resume lifts a pause and queues the release of what waited; a resume
// from the stop file only lifts a pause the stop file made. changed is
// false when nothing was lifted.
func (c *Client) Resume(ctx context.Context, by, source string) (changed bool, err error) {
	return c.control(ctx, "resume", by, "", source)
}

func (c *Client) control(ctx context.Context, op, by, reason, source string) (bool, error) {
	if len(by) > 200 || len(reason) > MaxDecisionReasonBytes {
		return false, fmt.Errorf("%w: the name (at most 200 bytes) or the reason (at most %d) is too long", ErrInvalid, MaxDecisionReasonBytes)
	}
	if source != ControlFromCLI && source != ControlFromStopFile {
		return false, fmt.Errorf("%w: control source %q", ErrInvalid, source)
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	res, err := c.run(ctx, c.scripts.control, []string{c.keys.Control(), c.keys.Events(), c.keys.OrchestratorQueue()},
		op, by, reason, c.keys.WorkflowEvents(), source)
	if err != nil {
		return false, err
	}
	if err := scriptError("control", res); err != nil {
		return false, err
	}
	return len(res) > 1 && res[1] == "1", nil
}

// GetPauseState reads the pause switch.
func (c *Client) GetPauseState(ctx context.Context) (PauseState, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	m, err := c.rdb.HGetAll(ctx, c.keys.Control()).Result()
	if err != nil {
		return PauseState{}, fmt.Errorf("blackboard: read control: %w", err)
	}
	st := PauseState{Paused: m["paused"] != "", By: m["paused_by"], Reason: m["paused_reason"], Source: m["paused_source"]}
	st.SinceMs, _ = strconv.ParseInt(m["paused_since_ms"], 10, 64)
	return st, nil
}

// RefillAgent hands the agent's waiting grants to its inbox while it has
// free slots (after a resume, or when a replica joins).
func (c *Client) RefillAgent(ctx context.Context, agent string) error {
	return c.releaseGrant(ctx, agent, "")
}

// ReleaseGrant frees the slot agent holds for claimID (a grant it will not
// run: stale or already delivered) and refills the agent.
func (c *Client) ReleaseGrant(ctx context.Context, agent, claimID string) error {
	if err := ValidateID(claimID); err != nil {
		return err
	}
	return c.releaseGrant(ctx, agent, claimID)
}

func (c *Client) releaseGrant(ctx context.Context, agent, claimID string) error {
	if err := ValidateAgentName(agent); err != nil {
		return err
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	res, err := c.run(ctx, c.scripts.releaseGrant, []string{c.keys.AgentRunning(agent), c.keys.AgentWaiting(agent),
		c.keys.AgentReplicas(agent), c.keys.Capacity(), c.keys.Control(), c.keys.AgentGrants(agent), c.keys.Timers()}, agent, claimID)
	if err != nil {
		return err
	}
	return scriptError("release_grant", res)
}

// WaitingClaim is a claim whose next grant waits in the scheduler.
type WaitingClaim struct {
	ClaimID           string `json:"claim_id"`
	Priority          int    `json:"priority"`
	WorkflowStartedMs int64  `json:"workflow_started_ms"`
}

// WaitingClaims lists up to limit waiting claims in release order
// (highest priority first, oldest workflow first); limit <= 0 lists all.
func (c *Client) WaitingClaims(ctx context.Context, limit int64) ([]WaitingClaim, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	stop := limit - 1
	if limit <= 0 {
		stop = -1
	}
	zs, err := c.rdb.ZRangeWithScores(ctx, c.keys.Waiting(), 0, stop).Result()
	if err != nil {
		return nil, fmt.Errorf("blackboard: read waiting claims: %w", err)
	}
	out := make([]WaitingClaim, 0, len(zs))
	for _, z := range zs {
		member, _ := z.Member.(string)
		age, id, ok := strings.Cut(member, ":")
		if !ok || ValidateID(id) != nil {
			continue
		}
		started, _ := strconv.ParseInt(age, 10, 64)
		out = append(out, WaitingClaim{ClaimID: id, Priority: -int(z.Score), WorkflowStartedMs: started})
	}
	return out, nil
}

// SchedulerCounts is how busy the scheduler is.
type SchedulerCounts struct {
	// Running counts claims holding slots; Waiting claims whose next
	// grant waits.
	Running int64 `json:"running"`
	Waiting int64 `json:"waiting"`
}

// CountScheduler reads the running and waiting counts in one round trip.
func (c *Client) CountScheduler(ctx context.Context) (SchedulerCounts, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	pipe := c.rdb.Pipeline()
	run := pipe.SCard(ctx, c.keys.Running())
	wait := pipe.ZCard(ctx, c.keys.Waiting())
	if _, err := pipe.Exec(ctx); err != nil {
		return SchedulerCounts{}, fmt.Errorf("blackboard: count scheduler: %w", err)
	}
	return SchedulerCounts{Running: run.Val(), Waiting: wait.Val()}, nil
}

// WaitingGrant is a grant that waits for one of its agent's slots.
type WaitingGrant struct {
	Agent             string `json:"agent"`
	ClaimID           string `json:"claim_id"`
	ArtefactID        string `json:"artefact_id"`
	WorkflowID        string `json:"workflow_id"`
	Grant             string `json:"grant"`
	Priority          int    `json:"priority"`
	WorkflowStartedMs int64  `json:"workflow_started_ms"`
}

// AgentQueues lists, for each agent, the grants waiting for its slots in
// release order, and the number of slots each holds.
func (c *Client) AgentQueues(ctx context.Context, agents []string) (map[string][]WaitingGrant, map[string]int64, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	pipe := c.rdb.Pipeline()
	waits := make([]*redis.ZSliceCmd, len(agents))
	runs := make([]*redis.IntCmd, len(agents))
	for i, a := range agents {
		waits[i] = pipe.ZRangeWithScores(ctx, c.keys.AgentWaiting(a), 0, -1)
		runs[i] = pipe.ZCard(ctx, c.keys.AgentRunning(a))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, nil, fmt.Errorf("blackboard: read agent queues: %w", err)
	}
	queues := make(map[string][]WaitingGrant, len(agents))
	held := make(map[string]int64, len(agents))
	for i, a := range agents {
		held[a] = runs[i].Val()
		for _, z := range waits[i].Val() {
			member, _ := z.Member.(string)
			age, body, ok := strings.Cut(member, ":")
			if !ok {
				continue
			}
			var m struct {
				Fields []string `json:"fields"`
			}
			if json.Unmarshal([]byte(body), &m) != nil {
				continue
			}
			f := map[string]string{}
			for j := 0; j+1 < len(m.Fields); j += 2 {
				f[m.Fields[j]] = m.Fields[j+1]
			}
			started, _ := strconv.ParseInt(age, 10, 64)
			queues[a] = append(queues[a], WaitingGrant{Agent: a, ClaimID: f["claim_id"], ArtefactID: f["artefact_id"],
				WorkflowID: f["workflow_id"], Grant: f["grant"], Priority: -int(z.Score), WorkflowStartedMs: started})
		}
	}
	return queues, held, nil
}
