package blackboard

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/textcut"
)

// This file holds the read-only views the CLI's audit and status commands
// need (`sett hoard`, `sett status`). Nothing here writes.

// LeaderInfo is who holds the orchestrator leader lease.
type LeaderInfo struct {
	// Holder names the orchestrator holding the lease; "" when nobody
	// leads (no orchestrator running, or its lease expired).
	Holder string `json:"holder,omitempty"`
	// Epoch is the fencing epoch of the latest leader (0 before any).
	Epoch int64 `json:"epoch"`
	// TTL is how long the lease lasts without renewal; zero when nobody
	// leads.
	TTL time.Duration `json:"-"`
}

// Leader reads the leader lease (`orchestrator:leader`, its TTL) and the
// fencing epoch (`orchestrator:epoch`) in one pipelined round trip.
// Errors: ErrCorrupt when the epoch is not a number.
func (c *Client) Leader(ctx context.Context) (LeaderInfo, error) {
	ctx, cancel := c.op(ctx)
	defer cancel()
	pipe := c.rdb.Pipeline()
	holder := pipe.Get(ctx, c.keys.Leader())
	ttl := pipe.PTTL(ctx, c.keys.Leader())
	epoch := pipe.Get(ctx, c.keys.Epoch())
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return LeaderInfo{}, fmt.Errorf("blackboard: read leader: %w", err)
	}
	var li LeaderInfo
	li.Holder = holder.Val()
	if d := ttl.Val(); li.Holder != "" && d > 0 {
		li.TTL = d
	}
	if s := epoch.Val(); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return LeaderInfo{}, fmt.Errorf("%w: leader epoch %q", ErrCorrupt, textcut.Bytes(s, 32))
		}
		li.Epoch = n
	}
	return li, nil
}

// InboxLengths returns the number of entries waiting in each agent's
// streams (bid requests and grants not yet done), in one pipelined round
// trip of XLEN. An agent without streams has 0.
func (c *Client) InboxLengths(ctx context.Context, agents []string) (map[string]int64, error) {
	out := make(map[string]int64, len(agents))
	if len(agents) == 0 {
		return out, nil
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	pipe := c.rdb.Pipeline()
	cmds := make([][2]*redis.IntCmd, len(agents))
	for i, a := range agents {
		cmds[i] = [2]*redis.IntCmd{pipe.XLen(ctx, c.keys.Inbox(a)), pipe.XLen(ctx, c.keys.AgentGrants(a))}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, fmt.Errorf("blackboard: read inbox lengths: %w", err)
	}
	for i, a := range agents {
		out[a] = cmds[i][0].Val() + cmds[i][1].Val()
	}
	return out, nil
}

// ClaimOutputs reads the results recorded for many claims (agent → id of
// the artefact it produced for the claim) in one pipelined round trip. The
// result is aligned with claimIDs; a claim without results has an empty
// map. Errors: ErrInvalid for a malformed id.
func (c *Client) ClaimOutputs(ctx context.Context, claimIDs []string) ([]map[string]string, error) {
	for _, id := range claimIDs {
		if err := ValidateID(id); err != nil {
			return nil, err
		}
	}
	if len(claimIDs) == 0 {
		return nil, nil
	}
	return c.hgetAllEach(ctx, claimIDs, c.keys.Outputs, "claim outputs")
}

// WorkflowCounts counts workflows by status.
type WorkflowCounts struct {
	// ByStatus counts the examined workflows by status.
	ByStatus map[WorkflowStatus]int
	// Running lists the ids of the examined running workflows, newest
	// first.
	Running []string
	// Examined is how many workflows were read (the newest ones).
	Examined int
	// Total is the number of workflows in the instance.
	Total int64
}

// CountWorkflows reads the status of the newest workflows (at most newest;
// zero means 10 000) from the workflow index, in pipelined batches of
// HGET — never SCAN. When Total exceeds Examined the counts cover only the
// newest workflows.
func (c *Client) CountWorkflows(ctx context.Context, newest int64) (WorkflowCounts, error) {
	if newest <= 0 {
		newest = 10000
	}
	wc := WorkflowCounts{ByStatus: map[WorkflowStatus]int{}}
	octx, cancel := c.op(ctx)
	pipe := c.rdb.Pipeline()
	total := pipe.ZCard(octx, c.keys.WorkflowIndex())
	idsCmd := pipe.ZRevRange(octx, c.keys.WorkflowIndex(), 0, newest-1)
	_, err := pipe.Exec(octx)
	cancel()
	if err != nil {
		return wc, fmt.Errorf("blackboard: list workflows: %w", err)
	}
	wc.Total = total.Val()
	ids := idsCmd.Val()
	const batch = 1000
	for start := 0; start < len(ids); start += batch {
		chunk := ids[start:min(start+batch, len(ids))]
		octx, cancel := c.op(ctx)
		pipe := c.rdb.Pipeline()
		cmds := make([]*redis.StringCmd, len(chunk))
		for i, id := range chunk {
			cmds[i] = pipe.HGet(octx, c.keys.Workflow(id), "status")
		}
		_, err := pipe.Exec(octx)
		cancel()
		if err != nil && !errors.Is(err, redis.Nil) {
			return wc, fmt.Errorf("blackboard: read workflow statuses: %w", err)
		}
		for i, cmd := range cmds {
			st := WorkflowStatus(cmd.Val())
			if st == "" {
				continue // indexed but gone: nothing to count
			}
			wc.Examined++
			wc.ByStatus[st]++
			if st == WorkflowRunning {
				wc.Running = append(wc.Running, chunk[i])
			}
		}
	}
	return wc, nil
}

// ArtefactScan is what ScanArtefacts returns.
type ArtefactScan struct {
	// Artefacts are the kept artefacts, newest first.
	Artefacts []*Artefact
	// Next continues the scan right after the last examined artefact (a
	// ListArtefacts cursor); "" when the index holds nothing further.
	Next string
	// Examined is how many index entries were read.
	Examined int
	// Pages is how many index pages were read.
	Pages int
	// Truncated is true when the scan stopped at its page bound before
	// keeping Limit artefacts; Next then says where to go on.
	Truncated bool
}

// ScanQuery selects artefacts for ScanArtefacts.
type ScanQuery struct {
	// PageQuery bounds the scan (workflow, time range, cursor) and gives
	// the number of artefacts to keep in Limit (zero means 50).
	PageQuery
	// Keep selects artefacts the index cannot (type, producer...); nil
	// keeps every artefact.
	Keep func(*Artefact) bool
	// PageSize is how many index entries each round trip reads; zero
	// means Limit when Keep is nil and max(Limit, 200) otherwise.
	PageSize int64
	// MaxPages bounds the scan; zero means 20.
	MaxPages int
}

// ScanArtefacts pages through a time index newest first (as ListArtefacts
// does, never KEYS or SCAN), reads each page's artefacts in one pipelined
// round trip and keeps those Keep selects until Limit are kept, the index
// ends, or MaxPages pages were read. Next resumes exactly after the last
// artefact examined, even in the middle of a page, so no artefact is ever
// skipped or shown twice across calls. Errors: ErrInvalid (bad cursor or
// id), ErrCorrupt.
func (c *Client) ScanArtefacts(ctx context.Context, q ScanQuery) (ArtefactScan, error) {
	if q.Limit <= 0 {
		q.Limit = 50
	}
	if q.MaxPages <= 0 {
		q.MaxPages = 20
	}
	if q.PageSize <= 0 {
		q.PageSize = q.Limit
		if q.Keep != nil {
			q.PageSize = max(q.Limit, 200)
		}
	}
	// The cursor is "<score>:<skip>": resume at created_at_ms <= score,
	// skipping the first skip entries that have exactly that score (they
	// come first in a newest-first range). Tracking the score of the last
	// examined entry and how many entries with that score were examined
	// since the cursor lets the scan stop anywhere inside a page.
	var curScore, curSkip int64
	haveCur := false
	if q.Cursor != "" {
		if _, err := fmt.Sscanf(q.Cursor, "%d:%d", &curScore, &curSkip); err != nil || curSkip < 0 {
			return ArtefactScan{}, fmt.Errorf("%w: page cursor %q", ErrInvalid, textcut.Bytes(q.Cursor, 64))
		}
		haveCur = true
	}
	var res ArtefactScan
	pq := q.PageQuery
	pq.Limit = q.PageSize
	for res.Pages < q.MaxPages {
		page, err := c.ListArtefacts(ctx, pq)
		if err != nil {
			return res, err
		}
		res.Pages++
		arts, err := c.GetArtefacts(ctx, page.IDs)
		if err != nil {
			return res, err
		}
		for i, a := range arts {
			res.Examined++
			if haveCur && page.Scores[i] == curScore {
				curSkip++
			} else {
				curScore, curSkip, haveCur = page.Scores[i], 1, true
			}
			if a == nil || (q.Keep != nil && !q.Keep(a)) {
				continue
			}
			res.Artefacts = append(res.Artefacts, a)
			if int64(len(res.Artefacts)) == q.Limit {
				if i < len(arts)-1 || page.Next != "" {
					res.Next = fmt.Sprintf("%d:%d", curScore, curSkip)
				}
				return res, nil
			}
		}
		if page.Next == "" {
			return res, nil
		}
		pq.Cursor = page.Next
	}
	res.Truncated = true
	res.Next = pq.Cursor
	return res, nil
}

// ShortIDs returns, for each artefact id, its shortest prefix of at least
// minLen characters that no other artefact id shares — what listings show
// so that every short id they print resolves with ResolveID. It reads the
// lexicographic neighbours of each id in the id index (ZRANGEBYLEX, two
// per id) in one pipelined round trip. An id missing from the index gets
// its minLen prefix.
func (c *Client) ShortIDs(ctx context.Context, ids []string, minLen int) (map[string]string, error) {
	out := make(map[string]string, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	ctx, cancel := c.op(ctx)
	defer cancel()
	key := c.keys.ArtefactIDIndex()
	pipe := c.rdb.Pipeline()
	prev := make([]*redis.StringSliceCmd, len(ids))
	next := make([]*redis.StringSliceCmd, len(ids))
	for i, id := range ids {
		prev[i] = pipe.ZRevRangeByLex(ctx, key, &redis.ZRangeBy{Max: "(" + id, Min: "-", Count: 1})
		next[i] = pipe.ZRangeByLex(ctx, key, &redis.ZRangeBy{Min: "(" + id, Max: "+", Count: 1})
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, fmt.Errorf("blackboard: read id neighbours: %w", err)
	}
	for i, id := range ids {
		n := minLen
		for _, nb := range append(prev[i].Val(), next[i].Val()...) {
			n = max(n, commonPrefix(id, nb)+1)
		}
		out[id] = id[:min(n, len(id))]
	}
	return out, nil
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
