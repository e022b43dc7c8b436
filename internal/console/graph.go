package console

import (
	"fmt"
	"sort"
	"strings"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/provenance"
)

// Graph layout, in SVG user units.
const (
	nodeW, nodeH = 224, 62
	colW, rowH   = 244, 92
	margin       = 12
	// maxCols is the widest the graph gets: when more threads run side
	// by side, each row's nodes wrap onto extra lines of maxCols.
	maxCols = 10
)

// graph is a workflow's provenance laid out for SVG: artefacts as nodes,
// each thread (a logical id's versions) in one column, rows by longest
// path from the goal, so every edge points down.
type graph struct {
	Width, Height int
	Nodes         []gnode
	Edges         []gedge
	Threads       []gthread
	// Wrapped is true when rows were too wide and wrapped onto lines.
	Wrapped bool
}

type gnode struct {
	X, Y  int
	ID    string
	Title string // "Plan v2"
	Sub   string // producer and verdict, decision or failure reason
	Claim string // the claim: phase, bids, review decision, approval
	// Class is goal, review-ok, review-no, failure, human or plain;
	// "dead" is added for a dead-ended branch, "learned" when a learning
	// was recorded from it.
	Class   string
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

// layoutGraph lays out a workflow's provenance.
func layoutGraph(p *provenance.Workflow) graph {
	row := map[string]int{}
	lastOf := map[string]string{} // logical id → latest version seen
	type span struct{ first, last int }
	spans := map[string]*span{}
	for _, a := range p.Arts {
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
		}
	}
	// Threads share a column when their rows do not overlap (greedy
	// interval colouring), so 500 one-version threads in a chain stay
	// narrow.
	threads := append([]string(nil), p.ThreadOrder...)
	sort.SliceStable(threads, func(i, j int) bool { return spans[threads[i]].first < spans[threads[j]].first })
	col := map[string]int{}
	var colEnd []int
	for _, t := range threads {
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
	// Too many columns (a wide fan-out): each row's nodes, in column
	// order, wrap onto lines of maxCols.
	g := graph{Wrapped: len(colEnd) > maxCols}
	byRow := map[int][]*blackboard.Artefact{}
	maxRow := 0
	for _, a := range p.Arts {
		byRow[row[a.ID]] = append(byRow[row[a.ID]], a)
		maxRow = max(maxRow, row[a.ID])
	}
	pos := map[string][2]int{}
	y, cols := margin, max(1, min(len(colEnd), maxCols))
	for r := 0; r <= maxRow; r++ {
		as := byRow[r]
		sort.SliceStable(as, func(i, j int) bool { return col[as[i].LogicalID] < col[as[j].LogicalID] })
		lines := 1
		for i, a := range as {
			c, line := col[a.LogicalID], 0
			if g.Wrapped {
				c, line = i%maxCols, i/maxCols
				lines = max(lines, line+1)
			}
			pos[a.ID] = [2]int{margin + c*colW, y + line*rowH}
		}
		y += lines * rowH
	}
	g.Width = margin*2 + cols*colW - (colW - nodeW)
	g.Height = y - rowH + nodeH + margin
	for _, t := range p.ThreadOrder {
		vs := p.Threads[t]
		if len(vs) < 2 {
			continue
		}
		x := pos[vs[0].ID][0]
		same := true
		for _, v := range vs {
			same = same && pos[v.ID][0] == x
		}
		if !same {
			continue // wrapped apart: the version edges still chain them
		}
		top, bottom := pos[vs[0].ID][1], pos[vs[len(vs)-1].ID][1]
		g.Threads = append(g.Threads, gthread{X: x - 6, Y: top - 16, W: nodeW + 12, H: bottom - top + nodeH + 22,
			Label: "thread " + blackboard.ShortID(t)})
	}
	for _, a := range p.Arts {
		xy := pos[a.ID]
		g.Nodes = append(g.Nodes, describe(p, a, xy[0], xy[1]))
	}
	for _, a := range p.Arts {
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
			bend := max((y2-y1)/2, 12)
			g.Edges = append(g.Edges, gedge{Class: class,
				Path: fmt.Sprintf("M%d %d C%d %d %d %d %d %d", x1, y1, x1, y1+bend, x2, y2-bend, x2, y2)})
		}
	}
	return g
}

// describe is one artefact's node: what it is, who made it and how it
// was judged, and what its claim went through.
func describe(p *provenance.Workflow, a *blackboard.Artefact, x, y int) gnode {
	n := gnode{X: x, Y: y, ID: a.ID, Title: fmt.Sprintf("%s v%d", a.Type, a.Version), Class: "plain",
		Sub: provenance.Producer(a)}
	tip := []string{a.Type + " v" + fmt.Sprint(a.Version) + " " + a.ID + " by " + provenance.Producer(a)}
	if a.Summary != "" {
		tip = append(tip, a.Summary)
	}
	switch {
	case a.IsGoal():
		n.Class = "goal"
	case a.StructuralType == blackboard.StructuralFailure:
		n.Class = "failure"
		n.Title = "FAILURE " + n.Title
		n.Sub = provenance.Producer(a) + ": " + firstNonEmpty(a.Summary, a.Payload)
	case a.StructuralType == blackboard.StructuralReview && a.ProducedByRole == "human":
		n.Class = "human"
		n.Sub = a.Metadata["decision"] + " by " + a.Metadata["decided_by"]
	case a.StructuralType == blackboard.StructuralReview:
		n.Sub = provenance.Producer(a) + " " + provenance.VerdictText(a)
		n.Class = "review-no"
		if provenance.Judge(a).Approves() {
			n.Class = "review-ok"
		}
	}
	var line, bids []string
	for i, cl := range p.Claims[a.ID] {
		if i == 0 {
			line = append(line, string(cl.Status))
		}
		what := "claim " + blackboard.ShortID(cl.ID)
		if cl.IsFeedback() {
			what = fmt.Sprintf("feedback claim %s (iteration %d)", blackboard.ShortID(cl.ID), cl.Iteration)
		}
		tip = append(tip, what+": "+string(cl.Status))
		if b := p.BidText(cl.ID); b != "" {
			tip = append(tip, "  "+b)
			if i == 0 {
				bids = append(bids, strings.SplitN(b, ":", 2)[0])
			}
		}
		if cl.ReviewDecision != "" {
			tip = append(tip, "  "+cl.ReviewDecision)
			line = append(line, "→ "+provenance.DecisionOutcome(cl.ReviewDecision))
		}
		switch {
		case cl.Status == blackboard.ClaimPendingApproval:
			tip = append(tip, "  awaits approval")
			line = append(line, "awaits approval")
		case cl.Approval.Decision != "":
			d := string(cl.Approval.Decision) + " by " + cl.Approval.By
			if cl.Approval.Reason != "" {
				d += ": " + cl.Approval.Reason
			}
			tip = append(tip, "  "+d)
			line = append(line, string(cl.Approval.Decision)+" by "+cl.Approval.By)
		}
		if cl.TerminationReason != "" {
			tip = append(tip, "  terminated: "+cl.TerminationReason)
			if i == 0 {
				line = append(line, cl.TerminationReason)
			}
		}
	}
	line = append(line, bids...)
	if p.DeadEnd(a) {
		n.Class += " dead"
		tip = append(tip, "dead end: nothing went on from here")
	}
	if ls := p.Learned(a.ID); len(ls) > 0 {
		n.Class += " learned"
		n.Title += " · learned"
		for _, l := range ls {
			tip = append(tip, "learned: "+l.Text)
		}
	}
	n.Sub = ellipsis(n.Sub, 36)
	n.Title = ellipsis(n.Title, 30)
	n.Claim = ellipsis(strings.Join(line, " · "), 40)
	n.Tooltip = cutRunes(strings.Join(tip, "\n"), 1200)
	return n
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if strings.TrimSpace(x) != "" {
			return x
		}
	}
	return ""
}

// cutRunes cuts s to n runes, keeping its lines.
func cutRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
