package console

import (
	"encoding/json"
	"fmt"
	"sort"

	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/reviewpolicy"
	"github.com/settdev/sett/pkg/blackboard"
)

// Graph layout, in SVG user units.
const (
	nodeW, nodeH = 184, 48
	colW, rowH   = 204, 78
	margin       = 12
)

// graph is a workflow's provenance laid out for SVG: artefacts as nodes,
// each thread (a logical id's versions) in one column, rows by longest
// path from the goal, so every edge points down.
type graph struct {
	Width, Height int
	Nodes         []gnode
	Edges         []gedge
	Threads       []gthread
}

type gnode struct {
	X, Y    int
	ID      string
	Title   string // "Plan v2"
	Sub     string // producer, verdict, approval
	Class   string // goal, review-ok, review-no, failure, human, dead, plain
	Tooltip string
}

type gedge struct {
	Path  string
	Class string // version, source
}

// gthread is the box drawn around a thread with more than one version.
type gthread struct {
	X, Y, W, H int
	Label      string
}

// verdictOf reads a review the way the review policy does.
func verdictOf(a *blackboard.Artefact) reviewpolicy.Verdict {
	var m *memory.AgentMemory
	if a.Memory != "" {
		var doc memory.AgentMemory
		if json.Unmarshal([]byte(a.Memory), &doc) == nil {
			m = &doc
		}
	}
	return reviewpolicy.Judge(a.Payload, m)
}

// layoutGraph lays out arts (any order); claims by artefact id annotate
// approvals and dead ends.
func layoutGraph(arts []*blackboard.Artefact, claimOf map[string]*blackboard.Claim) graph {
	sorted := append([]*blackboard.Artefact(nil), arts...)
	sort.SliceStable(sorted, func(i, j int) bool {
		if sorted[i].CreatedAtMs != sorted[j].CreatedAtMs {
			return sorted[i].CreatedAtMs < sorted[j].CreatedAtMs
		}
		return sorted[i].Depth < sorted[j].Depth
	})
	row := map[string]int{}
	lastOf := map[string]string{} // logical id → latest version seen
	type span struct{ first, last int }
	spans := map[string]*span{}
	var threadOrder []string
	for _, a := range sorted {
		r := 0
		for _, s := range a.SourceArtefacts {
			if sr, ok := row[s]; ok && sr+1 > r {
				r = sr + 1
			}
		}
		if prev, ok := lastOf[a.LogicalID]; ok && row[prev]+1 > r {
			r = row[prev] + 1
		}
		row[a.ID] = r
		lastOf[a.LogicalID] = a.ID
		if sp, ok := spans[a.LogicalID]; ok {
			sp.last = max(sp.last, r)
		} else {
			spans[a.LogicalID] = &span{r, r}
			threadOrder = append(threadOrder, a.LogicalID)
		}
	}
	// Threads share a column when their rows do not overlap (greedy
	// interval colouring), so 500 one-version threads stay narrow.
	col := map[string]int{}
	var colEnd []int
	sort.SliceStable(threadOrder, func(i, j int) bool { return spans[threadOrder[i]].first < spans[threadOrder[j]].first })
	for _, t := range threadOrder {
		sp := spans[t]
		placed := false
		for ci, end := range colEnd {
			if end < sp.first {
				col[t], colEnd[ci], placed = ci, sp.last, true
				break
			}
		}
		if !placed {
			col[t] = len(colEnd)
			colEnd = append(colEnd, sp.last)
		}
	}
	g := graph{}
	pos := map[string][2]int{}
	maxRow := 0
	versions := map[string]int{}
	for _, a := range sorted {
		versions[a.LogicalID]++
	}
	for _, t := range threadOrder {
		if versions[t] < 2 {
			continue
		}
		sp := spans[t]
		g.Threads = append(g.Threads, gthread{X: margin + col[t]*colW - 6, Y: margin + sp.first*rowH - 16,
			W: nodeW + 12, H: (sp.last-sp.first)*rowH + nodeH + 22, Label: "thread " + shortID(t)})
	}
	for _, a := range sorted {
		x, y := margin+col[a.LogicalID]*colW, margin+row[a.ID]*rowH
		pos[a.ID] = [2]int{x, y}
		maxRow = max(maxRow, row[a.ID])
		n := gnode{X: x, Y: y, ID: a.ID, Title: ellipsis(fmt.Sprintf("%s v%d", a.Type, a.Version), 26), Class: "plain"}
		who := a.ProducedByAgent
		if who == "" {
			who = a.ProducedByRole
		}
		n.Sub = who
		switch {
		case a.IsGoal():
			n.Class = "goal"
		case a.StructuralType == blackboard.StructuralFailure:
			n.Class = "failure"
		case a.StructuralType == blackboard.StructuralReview && a.ProducedByRole == "human":
			n.Class = "human"
			n.Sub = a.Metadata["decision"] + " by " + a.Metadata["decided_by"]
		case a.StructuralType == blackboard.StructuralReview:
			v := verdictOf(a)
			n.Class, n.Sub = "review-no", who+" ✗ reject"
			if v.Approves() {
				n.Class, n.Sub = "review-ok", who+" ✓ approve"
			}
			if v.Severity != "" {
				n.Sub += " (" + v.Severity + ")"
			}
		}
		if cl := claimOf[a.ID]; cl != nil {
			switch {
			case cl.Status == blackboard.ClaimPendingApproval:
				n.Sub += " · awaits approval"
			case cl.Approval.Decision != "":
				n.Sub += " · " + string(cl.Approval.Decision) + " by " + cl.Approval.By
			}
			if cl.Status == blackboard.ClaimTerminated && n.Class == "plain" {
				n.Class = "dead"
			}
		}
		n.Sub = ellipsis(n.Sub, 30)
		n.Tooltip = ellipsis(a.Summary, 300)
		g.Nodes = append(g.Nodes, n)
	}
	for _, a := range sorted {
		to := pos[a.ID]
		for i, s := range a.SourceArtefacts {
			from, ok := pos[s]
			if !ok {
				continue
			}
			class := "source"
			if i == 0 && a.Version > 1 {
				class = "version"
			}
			x1, y1 := from[0]+nodeW/2, from[1]+nodeH
			x2, y2 := to[0]+nodeW/2, to[1]
			g.Edges = append(g.Edges, gedge{Class: class,
				Path: fmt.Sprintf("M%d %d C%d %d %d %d %d %d", x1, y1, x1, y1+rowH/2, x2, y2-rowH/2, x2, y2)})
		}
	}
	g.Width = margin*2 + max(1, len(colEnd))*colW
	g.Height = margin*2 + (maxRow+1)*rowH
	return g
}
