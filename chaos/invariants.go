package chaos

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/orchestrator"
)

// check reads the invariants from Redis (and the tools' stamps), then runs
// the janitor with a zero-length retention and counts what it left.
func (c *campaign) check(ctx context.Context) (Report, error) {
	r := Report{Seed: c.opts.Seed, Workflows: len(c.posted), Faults: c.opts.Faults, Reasons: map[string]int{},
		Injected: c.injected, Recovery: c.recovery}
	k := c.bb.Keys()
	for _, id := range c.posted {
		wf, err := c.rdb.HGetAll(ctx, k.Workflow(id)).Result()
		if err != nil {
			return r, fmt.Errorf("chaos: read workflow %s: %w", id, err)
		}
		switch st := wf["status"]; {
		case st == "":
			r.Missing++
		case st == string(blackboard.WorkflowRunning):
			r.Stuck++
		case st == string(blackboard.WorkflowCompleted):
			r.Completed++
		case wf["outcome"] == "":
			r.FailedNoReason++
		default:
			r.Failed++
			r.Reasons[st+": "+wf["outcome"]]++
		}
		if err := c.checkThreads(ctx, id, wf["status"] == string(blackboard.WorkflowCompleted), &r); err != nil {
			return r, err
		}
	}
	var err error
	if r.DoubleRuns, err = doubleRuns(c.stamps, c.cubDeaths); err != nil {
		return r, err
	}
	// What is in flight when the last workflow ends (a late bid request,
	// the queue entry of the last result) is acknowledged within moments;
	// wait (polling, bounded) for the streams to settle.
	settle := time.Now().Add(15 * time.Second)
	for {
		if r.Unacknowledged, r.UnacknowledgedBy, err = c.unacknowledged(ctx); err != nil {
			return r, err
		}
		if r.Unacknowledged == 0 || time.Now().After(settle) {
			break
		}
		if err := sleep(ctx, 100*time.Millisecond); err != nil {
			return r, err
		}
	}
	for _, p := range append(c.cubs, c.orch) {
		r.UnexpectedExits += p.UnexpectedExits()
	}
	if err := c.retention(ctx, &r); err != nil {
		return r, err
	}
	return r, nil
}

// checkThreads counts threads of workflow id that hold a version twice,
// and a completed workflow without its final artefact.
func (c *campaign) checkThreads(ctx context.Context, id string, completed bool, r *Report) error {
	k := c.bb.Keys()
	ids, err := c.rdb.ZRange(ctx, k.WorkflowArtefactIndex(id), 0, -1).Result()
	if err != nil {
		return fmt.Errorf("chaos: read artefacts of %s: %w", id, err)
	}
	threads := map[string]map[string]int{}
	done := false
	for _, a := range ids {
		v, err := c.rdb.HMGet(ctx, k.Artefact(a), "logical_id", "version", "type").Result()
		if err != nil {
			return fmt.Errorf("chaos: read artefact %s: %w", a, err)
		}
		logical, _ := v[0].(string)
		version, _ := v[1].(string)
		typ, _ := v[2].(string)
		if typ == doneType {
			done = true
		}
		if completed && (typ == "GoalDefined" || typ == draftType) {
			// Configured consumers exist for these types: a completed
			// workflow must not hold one whose claim ended without work.
			reason, err := c.rdb.HGet(ctx, k.Claim(blackboard.DeriveID("claim", a)), "completion_reason").Result()
			if err != nil && !errors.Is(err, redis.Nil) {
				return fmt.Errorf("chaos: read the claim of %s: %w", a, err)
			}
			if strings.HasPrefix(reason, "Chain ends here") {
				r.EndedWithConsumers++
			}
		}
		if threads[logical] == nil {
			threads[logical] = map[string]int{}
		}
		threads[logical][version]++
	}
	for logical, versions := range threads {
		dup := false
		for _, n := range versions {
			dup = dup || n > 1
		}
		// The thread's own ZSET must agree: one member per version.
		members, err := c.rdb.ZRangeWithScores(ctx, k.Thread(logical), 0, -1).Result()
		if err != nil {
			return fmt.Errorf("chaos: read thread %s: %w", logical, err)
		}
		seen := map[float64]bool{}
		for _, m := range members {
			dup = dup || seen[m.Score]
			seen[m.Score] = true
		}
		if dup {
			r.DuplicateVersions++
		}
	}
	if completed && !done {
		r.CompletedWithoutWork++
	}
	return nil
}

// doubleRuns reads the stamps file and counts grants (claim, agent) with
// two runs whose [start, end] overlap. A run without an end stamp (its
// process was killed) lasted until its last alive stamp ("A", written
// every aliveStep while the tool sleeps) plus one step, or until its cub
// was reaped when the campaign killed that cub (cubDeaths: pid → Unix
// ns) earlier: the kernel kills a cub's tools as the cub dies. Without
// the second bound, a cub restarted and re-running its grant within one
// step of the kill passed for a double run.
func doubleRuns(path string, cubDeaths map[int]int64) (int, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("chaos: %w", err)
	}
	defer f.Close()
	type run struct{ start, end, alive, parent int64 }
	runs := map[string]map[string]*run{} // grant → pid → run
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 6 {
			continue
		}
		grant, pid := fs[1]+" "+fs[2], fs[3]
		ts, _ := strconv.ParseInt(fs[4], 10, 64)
		if runs[grant] == nil {
			runs[grant] = map[string]*run{}
		}
		r := runs[grant][pid]
		if r == nil {
			r = &run{}
			runs[grant][pid] = r
		}
		r.parent, _ = strconv.ParseInt(fs[5], 10, 64)
		switch fs[0] {
		case "S":
			r.start = ts
		case "A":
			r.alive = max(r.alive, ts)
		default:
			r.end = ts
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("chaos: read stamps: %w", err)
	}
	n := 0
	for _, byPid := range runs {
		var list []*run
		for _, r := range byPid {
			if r.end == 0 {
				r.end = max(r.start, r.alive) + int64(aliveStep)
				if died, ok := cubDeaths[int(r.parent)]; ok && died >= r.start {
					r.end = min(r.end, died)
				}
			}
			list = append(list, r)
		}
		overlap := false
		for i := range list {
			for j := i + 1; j < len(list); j++ {
				if list[i].start < list[j].end && list[j].start < list[i].end {
					overlap = true
				}
			}
		}
		if overlap {
			n++
		}
	}
	return n, nil
}

// aliveStep is the chaos tool's alive-stamp period (see
// cmd/sett-chaos-tool), with room for a slow write.
const aliveStep = 100 * time.Millisecond

// unacknowledged counts what is left in the orchestrator's queue (handled
// entries are deleted) and what is pending or unread in every agent's
// inbox and grants.
func (c *campaign) unacknowledged(ctx context.Context) (int64, map[string]int64, error) {
	k := c.bb.Keys()
	streams := []string{k.OrchestratorQueue()}
	for _, agent := range []string{"author", "reviewer-a", "reviewer-b", "coder"} {
		streams = append(streams, k.Inbox(agent), k.AgentGrants(agent))
	}
	var n int64
	by := map[string]int64{}
	for _, s := range streams {
		l, err := c.rdb.XLen(ctx, s).Result()
		if err != nil && err != redis.Nil {
			return 0, nil, fmt.Errorf("chaos: length of %s: %w", s, err)
		}
		if l > 0 {
			by[strings.TrimPrefix(s, k.Prefix())] = l
			n += l
		}
	}
	return n, by, nil
}

// retention runs janitor passes that delete every finished workflow, then
// counts the workflow keys and index entries left (a stuck workflow is
// never deleted, so it shows here as well).
func (c *campaign) retention(ctx context.Context, r *Report) error {
	j := orchestrator.NewJanitor(c.bb, orchestrator.Retention{Workflows: time.Nanosecond, Batch: 1000}, zerolog.Nop())
	for {
		rep, err := j.Pass(ctx, false)
		if err != nil {
			return fmt.Errorf("chaos: janitor: %w", err)
		}
		if len(rep.Workflows) == 0 {
			break
		}
	}
	k := c.bb.Keys()
	p := k.Prefix()
	iter := c.rdb.Scan(ctx, 0, p+"*", 1000).Iterator()
	for iter.Next(ctx) {
		rest := strings.TrimPrefix(iter.Val(), p)
		for _, kind := range []string{"artefact:", "thread:", "claim:", "claim_by_artefact:", "workflow:", "index:workflow:"} {
			if strings.HasPrefix(rest, kind) {
				r.KeysLeft++
				break
			}
		}
	}
	if err := iter.Err(); err != nil {
		return fmt.Errorf("chaos: scan: %w", err)
	}
	for _, idx := range []string{k.WorkflowIndex(), k.ArtefactIndex(), k.ClaimIDIndex()} {
		n, err := c.rdb.ZCard(ctx, idx).Result()
		if err != nil {
			return fmt.Errorf("chaos: %s: %w", idx, err)
		}
		r.IndexLeft += n
	}
	return nil
}
