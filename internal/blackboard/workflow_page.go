package blackboard

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// WorkflowQuery selects a page of workflows for ListWorkflowPage.
type WorkflowQuery struct {
	// Status keeps only workflows in this status; "" keeps every status.
	Status WorkflowStatus
	// Text keeps only workflows whose id starts with it or whose goal
	// contains it (case-insensitive); "" keeps every workflow.
	Text string
	// Agent keeps only workflows in which this agent produced an
	// artefact; "" keeps every workflow.
	Agent string
	// Type keeps only workflows holding an artefact of this type; ""
	// keeps every workflow.
	Type string
	// Limit is the page size; zero means 50.
	Limit int64
	// Cursor continues from a previous WorkflowPage.Next.
	Cursor string
	// MaxScan bounds how many index entries one call examines when a
	// filter is set; zero means 5000. The page may then hold fewer than
	// Limit workflows with a Next to go on from.
	MaxScan int64
}

// WorkflowPage is one page of workflows, newest first.
type WorkflowPage struct {
	Workflows []*Workflow
	// Next is the cursor of the following (older) page; empty at the end.
	Next string
	// Examined is how many index entries were read.
	Examined int
}

// ListWorkflowPage returns a page of workflows, newest first, walking the
// workflow index (scored by start time) from the cursor in bounded
// batches: O(log N + examined) whatever the total, never SCAN. The cursor
// is "<score>:<offset>" as in ListArtefacts. Errors: ErrInvalid (a bad
// cursor or status).
func (c *Client) ListWorkflowPage(ctx context.Context, q WorkflowQuery) (WorkflowPage, error) {
	if q.Status != "" && !q.Status.Valid() {
		return WorkflowPage{}, fmt.Errorf("%w: workflow status %q is not one of %v", ErrInvalid, q.Status, AllWorkflowStatuses())
	}
	if q.Limit <= 0 {
		q.Limit = 50
	}
	if q.MaxScan <= 0 {
		q.MaxScan = 5000
	}
	score, offset := "+inf", int64(0)
	if q.Cursor != "" {
		var s int64
		if _, err := fmt.Sscanf(q.Cursor, "%d:%d", &s, &offset); err != nil || offset < 0 {
			return WorkflowPage{}, fmt.Errorf("%w: page cursor %q", ErrInvalid, q.Cursor)
		}
		score = strconv.FormatInt(s, 10)
	}
	text := strings.ToLower(strings.TrimSpace(q.Text))
	agent, typ := strings.TrimSpace(q.Agent), strings.TrimSpace(q.Type)
	filtered := q.Status != "" || text != "" || agent != "" || typ != ""
	batch := q.Limit
	if filtered {
		batch = min(max(q.Limit, 200), q.MaxScan)
	}
	var p WorkflowPage
	for {
		octx, cancel := c.op(ctx)
		zs, err := c.rdb.ZRevRangeByScoreWithScores(octx, c.keys.WorkflowIndex(), &redis.ZRangeBy{
			Max: score, Min: "-inf", Offset: offset, Count: batch,
		}).Result()
		cancel()
		if err != nil {
			return WorkflowPage{}, fmt.Errorf("blackboard: list workflows: %w", err)
		}
		ids := make([]string, len(zs))
		for i, z := range zs {
			ids[i] = z.Member.(string)
		}
		wfs, err := c.GetWorkflows(ctx, ids)
		if err != nil {
			return WorkflowPage{}, err
		}
		for i, z := range zs {
			// Advance the position past this entry first: the cursor
			// always resumes right after the last examined entry.
			s := strconv.FormatInt(int64(z.Score), 10)
			if s == score {
				offset++
			} else {
				score, offset = s, 1
			}
			p.Examined++
			w := wfs[i]
			if w == nil || !keepWorkflow(w, q.Status, text, agent, typ) {
				continue
			}
			p.Workflows = append(p.Workflows, w)
			if int64(len(p.Workflows)) == q.Limit {
				if i < len(zs)-1 || int64(len(zs)) == batch {
					p.Next = score + ":" + strconv.FormatInt(offset, 10)
				}
				return p, nil
			}
		}
		if int64(len(zs)) < batch {
			return p, nil // the index holds nothing further
		}
		if int64(p.Examined) >= q.MaxScan {
			p.Next = score + ":" + strconv.FormatInt(offset, 10)
			return p, nil
		}
	}
}

// keepWorkflow is the list's filter: status, agent and type exactly,
// text as an id prefix or a case-insensitive part of the goal.
func keepWorkflow(w *Workflow, status WorkflowStatus, text, agent, typ string) bool {
	if status != "" && w.Status != status {
		return false
	}
	if agent != "" && !sortedHas(w.Agents, agent) || typ != "" && !sortedHas(w.Types, typ) {
		return false
	}
	return text == "" || strings.HasPrefix(w.ID, text) || strings.Contains(strings.ToLower(w.Goal), text)
}

func sortedHas(list []string, s string) bool {
	i := sort.SearchStrings(list, s)
	return i < len(list) && list[i] == s
}
