package blackboard

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Retention: what the leader's janitor deletes so that Redis does
// not grow without bound. A finished workflow's records — the workflow,
// its artefacts, threads (versions), claims with their bids, grants,
// outputs and failures, memories and shared memory, and its entries in
// every index (approvals included) — go together once its retention period
// has passed. Learnings and the tool memory stay: they are what the
// instance knows, not the history of one workflow. The events stream is
// trimmed by length and age; idle stream consumers without pending entries
// are removed. Inbox and grant entries are already deleted when
// acknowledged.

// FinishedWorkflows returns up to limit ids of workflows that ended at
// least minAge ago (Redis clock), oldest start first. It pages through the
// workflows index by start time (a workflow ends after it starts), so
// running workflows are skipped, never returned.
func (c *Client) FinishedWorkflows(ctx context.Context, minAge time.Duration, limit int) ([]string, error) {
	if limit <= 0 {
		return nil, nil
	}
	now, err := c.Now(ctx)
	if err != nil {
		return nil, err
	}
	cutoff := now - minAge.Milliseconds()
	const page = 200
	var out []string
	for offset := int64(0); len(out) < limit; offset += page {
		octx, cancel := c.op(ctx)
		ids, err := c.rdb.ZRangeByScore(octx, c.keys.WorkflowIndex(), &redis.ZRangeBy{
			Min: "-inf", Max: strconv.FormatInt(cutoff, 10), Offset: offset, Count: page,
		}).Result()
		if err != nil {
			cancel()
			return nil, fmt.Errorf("blackboard: list workflows started before %d: %w", cutoff, err)
		}
		cmds, err := c.rdb.Pipelined(octx, func(p redis.Pipeliner) error {
			for _, id := range ids {
				p.HMGet(octx, c.keys.Workflow(id), "status", "ended_at_ms")
			}
			return nil
		})
		cancel()
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, fmt.Errorf("blackboard: read workflows: %w", err)
		}
		for i, id := range ids {
			v := cmds[i].(*redis.SliceCmd).Val()
			status, _ := v[0].(string)
			endedStr, _ := v[1].(string)
			ended, _ := strconv.ParseInt(endedStr, 10, 64)
			if status == "" || status == string(WorkflowRunning) || ended > cutoff {
				continue
			}
			out = append(out, id)
			if len(out) == limit {
				break
			}
		}
		if len(ids) < page {
			break
		}
	}
	return out, nil
}

// PurgeWorkflow deletes one finished workflow's records and index entries
// in one atomic step, once it ended at least minAge ago, and returns how
// many keys went (with dryRun: would go; nothing is written). It returns
// ErrNotFound (already gone: the call is idempotent), ErrRunning,
// ErrRetained or ErrChanged.
func (c *Client) PurgeWorkflow(ctx context.Context, workflowID string, minAge time.Duration, dryRun bool) (int, error) {
	keys, artefacts, claims, err := c.workflowKeys(ctx, workflowID)
	if err != nil {
		return 0, err
	}
	req, err := json.Marshal(map[string]any{
		"workflow_id": workflowID, "min_age_ms": minAge.Milliseconds(),
		"artefacts": artefacts, "claims": claims, "dry_run": dryRun,
	})
	if err != nil {
		return 0, fmt.Errorf("blackboard: encode purge of %s: %w", workflowID, err)
	}
	octx, cancel := c.op(ctx)
	defer cancel()
	res, err := c.evalsha(octx, c.scripts.purgeWorkflow, keys, string(req)).StringSlice()
	if err != nil {
		return 0, fmt.Errorf("blackboard: purge workflow %s: %w", workflowID, err)
	}
	if len(res) < 2 {
		return 0, fmt.Errorf("blackboard: purge workflow %s: unexpected reply %v", workflowID, res)
	}
	switch res[0] {
	case "OK":
		n, _ := strconv.Atoi(res[1])
		return n, nil
	case "NOT_FOUND":
		return 0, fmt.Errorf("%w: workflow %s", ErrNotFound, workflowID)
	case "RUNNING":
		return 0, fmt.Errorf("%w: %s", ErrRunning, workflowID)
	case "RETAINED":
		return 0, fmt.Errorf("%w: %s ended at %s ms", ErrRetained, workflowID, res[1])
	case "CHANGED":
		return 0, fmt.Errorf("%w: %s (%s)", ErrChanged, workflowID, res[1])
	}
	return 0, fmt.Errorf("blackboard: purge workflow %s: unknown code %q", workflowID, res[0])
}

// workflowKeys reads what the purge script needs: the key list in the
// script's order, and the workflow's artefact and claim ids.
func (c *Client) workflowKeys(ctx context.Context, workflowID string) ([]string, []string, []string, error) {
	octx, cancel := c.op(ctx)
	defer cancel()
	var artCmd, claimCmd *redis.StringSliceCmd
	_, err := c.rdb.Pipelined(octx, func(p redis.Pipeliner) error {
		artCmd = p.ZRange(octx, c.keys.WorkflowArtefactIndex(workflowID), 0, -1)
		claimCmd = p.ZRange(octx, c.keys.WorkflowClaimIndex(workflowID), 0, -1)
		return nil
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("blackboard: read indexes of workflow %s: %w", workflowID, err)
	}
	artefacts, claims := artCmd.Val(), claimCmd.Val()
	logical := make([]*redis.StringCmd, len(artefacts))
	if len(artefacts) > 0 {
		_, err = c.rdb.Pipelined(octx, func(p redis.Pipeliner) error {
			for i, id := range artefacts {
				logical[i] = p.HGet(octx, c.keys.Artefact(id), "logical_id")
			}
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, nil, nil, fmt.Errorf("blackboard: read threads of workflow %s: %w", workflowID, err)
		}
	}
	k := c.keys
	keys := []string{
		k.Workflow(workflowID), k.WorkflowIndex(), k.ArtefactIndex(), k.ArtefactIDIndex(),
		k.ClaimIDIndex(), k.ActiveClaims(), k.ApprovalIndex(), k.Timers(), k.Running(),
		k.WorkflowArtefactIndex(workflowID), k.WorkflowClaimIndex(workflowID),
		k.WorkflowMemories(workflowID), k.SharedMemory(workflowID),
	}
	threads := map[string]bool{workflowID: true}
	keys = append(keys, k.Thread(workflowID))
	for i, id := range artefacts {
		keys = append(keys, k.Artefact(id), k.ClaimByArtefact(id))
		if l := logical[i].Val(); l != "" && !threads[l] {
			threads[l] = true
			keys = append(keys, k.Thread(l))
		}
	}
	for _, id := range claims {
		keys = append(keys, k.Claim(id), k.Bids(id), k.Grants(id), k.Outputs(id), k.Failures(id))
	}
	return keys, artefacts, claims, nil
}

// TrimEvents trims the events stream to about maxLen entries (0: no
// length bound) and drops entries older than maxAge (0: no age bound),
// with the approximate (~) form so Redis frees whole macro nodes only. It
// returns the number of entries removed. With dryRun nothing is removed
// and the count is what an exact trim would remove (the approximate trim
// removes at most that).
func (c *Client) TrimEvents(ctx context.Context, maxLen int64, maxAge time.Duration, dryRun bool) (int64, error) {
	stream := c.keys.Events()
	var removed int64
	if maxAge > 0 {
		now, err := c.Now(ctx)
		if err != nil {
			return 0, err
		}
		minID := strconv.FormatInt(now-maxAge.Milliseconds(), 10) + "-0"
		if dryRun {
			n, err := c.countBefore(ctx, stream, minID)
			if err != nil {
				return 0, err
			}
			removed += n
		} else {
			n, err := c.trimUntilDone(ctx, func(ctx context.Context) *redis.IntCmd {
				return c.rdb.XTrimMinIDApprox(ctx, stream, minID, 0)
			})
			removed += n
			if err != nil {
				return removed, fmt.Errorf("blackboard: trim events before %s: %w", minID, err)
			}
		}
	}
	if maxLen > 0 {
		if dryRun {
			octx, cancel := c.op(ctx)
			n, err := c.rdb.XLen(octx, stream).Result()
			cancel()
			if err != nil {
				return 0, fmt.Errorf("blackboard: length of events: %w", err)
			}
			if over := n - removed - maxLen; over > 0 {
				removed += over
			}
		} else {
			n, err := c.trimUntilDone(ctx, func(ctx context.Context) *redis.IntCmd {
				return c.rdb.XTrimMaxLenApprox(ctx, stream, maxLen, 0)
			})
			removed += n
			if err != nil {
				return removed, fmt.Errorf("blackboard: trim events to %d: %w", maxLen, err)
			}
		}
	}
	return removed, nil
}

// trimUntilDone repeats an approximate XTRIM until it removes nothing.
// Redis caps one approximate trim at 100 macro nodes (10 000 entries with
// the default node size) so that no single call blocks the server; a
// stream that grew past its bound by more than that between two passes
// needs several calls, each short, to get back under it.
func (c *Client) trimUntilDone(ctx context.Context, trim func(context.Context) *redis.IntCmd) (int64, error) {
	var removed int64
	for {
		octx, cancel := c.op(ctx)
		n, err := trim(octx).Result()
		cancel()
		if err != nil {
			return removed, err
		}
		removed += n
		if n == 0 {
			return removed, nil
		}
	}
}

// countBefore counts a stream's entries with ids below minID, in pages:
// only `sett gc --dry-run` uses it.
func (c *Client) countBefore(ctx context.Context, stream, minID string) (int64, error) {
	const page = 1000
	var n int64
	start := "-"
	for {
		octx, cancel := c.op(ctx)
		msgs, err := c.rdb.XRangeN(octx, stream, start, "("+minID, page).Result()
		cancel()
		if err != nil {
			return 0, fmt.Errorf("blackboard: count events before %s: %w", minID, err)
		}
		n += int64(len(msgs))
		if len(msgs) < page {
			return n, nil
		}
		start = "(" + msgs[len(msgs)-1].ID
	}
}

// EventsLength returns the number of entries in the events stream.
func (c *Client) EventsLength(ctx context.Context) (int64, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	n, err := c.rdb.XLen(ctx, c.keys.Events()).Result()
	if err != nil {
		return 0, fmt.Errorf("blackboard: length of events: %w", err)
	}
	return n, nil
}

// ReapConsumers removes the stream consumers (of every registered agent's
// inbox and grants, and of the orchestrator queue) idle for at least
// minIdle with nothing pending, and the agents' replicas whose last beat
// is older than minIdle. It returns what it removed ("<stream> <consumer>"
// lines); with dryRun, what it would remove.
func (c *Client) ReapConsumers(ctx context.Context, minIdle time.Duration, dryRun bool) ([]string, error) {
	agents, err := c.Agents(ctx)
	if err != nil {
		return nil, err
	}
	type target struct{ stream, group string }
	targets := []target{{c.keys.OrchestratorQueue(), "orchestrator"}}
	for name := range agents {
		targets = append(targets, target{c.keys.Inbox(name), inboxGroup}, target{c.keys.AgentGrants(name), inboxGroup})
	}
	dry := "0"
	if dryRun {
		dry = "1"
	}
	var out []string
	for _, t := range targets {
		octx, cancel := c.op(ctx)
		names, err := c.evalsha(octx, c.scripts.reapConsumers, []string{t.stream}, t.group, minIdle.Milliseconds(), dry).StringSlice()
		cancel()
		if err != nil && !errors.Is(err, redis.Nil) {
			return out, fmt.Errorf("blackboard: reap consumers of %s: %w", t.stream, err)
		}
		for _, n := range names {
			out = append(out, t.stream+" "+n)
		}
	}
	now, err := c.Now(ctx)
	if err != nil {
		return out, err
	}
	cutoff := "(" + strconv.FormatInt(now-minIdle.Milliseconds(), 10)
	for name := range agents {
		key := c.keys.AgentReplicas(name)
		octx, cancel := c.op(ctx)
		stale, err := c.rdb.ZRangeByScore(octx, key, &redis.ZRangeBy{Min: "-inf", Max: cutoff}).Result()
		if err == nil && len(stale) > 0 && !dryRun {
			// ZREMRANGEBYSCORE, not ZREM of what was read: a replica that
			// beat in between has a new score and stays.
			err = c.rdb.ZRemRangeByScore(octx, key, "-inf", cutoff).Err()
		}
		cancel()
		if err != nil {
			return out, fmt.Errorf("blackboard: reap replicas of %s: %w", name, err)
		}
		for _, r := range stale {
			out = append(out, key+" "+r)
		}
	}
	return out, nil
}

// MemoryUsed returns the memory Redis holds for data (INFO memory):
// used_memory less the script cache (used_memory_scripts_eval), client
// buffers (mem_clients_normal) and the AOF buffer (mem_aof_buffer), which
// depend on who is connected and which scripts were loaded, not on what
// is stored. It is what the retention bench reports per finished workflow.
func (c *Client) MemoryUsed(ctx context.Context) (int64, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	info, err := c.rdb.Info(ctx, "memory").Result()
	if err != nil {
		return 0, fmt.Errorf("blackboard: info memory: %w", err)
	}
	fields := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				fields[k] = n
			}
		}
	}
	used, ok := fields["used_memory"]
	if !ok {
		return 0, fmt.Errorf("blackboard: info memory: no used_memory field")
	}
	return used - fields["used_memory_scripts_eval"] - fields["mem_clients_normal"] - fields["mem_aof_buffer"], nil
}
