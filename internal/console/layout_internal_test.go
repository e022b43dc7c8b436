package console

import (
	"strconv"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/provenance"
)

func TestSideBySide(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want []diffRow
	}{
		{"same", "x\ny", "x\ny", []diffRow{{1, 1, "x", "x", "same"}, {2, 2, "y", "y", "same"}}},
		{"added line", "x", "x\nz", []diffRow{{1, 1, "x", "x", "same"}, {0, 2, "", "z", "add"}}},
		{"removed line", "x\ny", "y", []diffRow{{1, 0, "x", "", "del"}, {2, 1, "y", "y", "same"}}},
		{"changed line", "a\nb\nc", "a\nB\nc", []diffRow{{1, 1, "a", "a", "same"}, {2, 2, "b", "B", "change"}, {3, 3, "c", "c", "same"}}},
		{"empty left", "", "n", []diffRow{{0, 1, "", "n", "add"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := sideBySide(tc.a, tc.b)
			if len(got) != len(tc.want) {
				t.Fatalf("rows %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("row %d %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

// art makes an artefact for the layout tests.
func art(id, logical string, version int, st blackboard.StructuralType, at int64, sources ...string) *blackboard.Artefact {
	return &blackboard.Artefact{ID: id, LogicalID: logical, Version: version, StructuralType: st, Type: "T", WorkflowID: "g",
		CreatedAtMs: at, SourceArtefacts: sources, ProducedByAgent: "agent"}
}

func TestLayoutChainsVersionsInOneColumnAndPointsDown(t *testing.T) {
	goal := art("g", "g", 1, blackboard.StructuralStandard, 1)
	v1 := art("p1", "p", 1, blackboard.StructuralStandard, 2, "g")
	r1 := art("r1", "r1", 1, blackboard.StructuralReview, 3, "p1")
	r1.Payload = `{"verdict":"reject","severity":"major"}`
	v2 := art("p2", "p", 2, blackboard.StructuralStandard, 4, "p1", "r1")
	r2 := art("r2", "r2", 1, blackboard.StructuralReview, 5, "p2")
	r2.Payload = `{"verdict":"approve"}`
	g := layoutGraph(provenance.Build(&blackboard.Workflow{ID: "g"}, []*blackboard.Artefact{r2, v2, goal, r1, v1}, nil))
	at := map[string]gnode{}
	for _, n := range g.Nodes {
		at[n.ID] = n
	}
	if at["p1"].X != at["p2"].X {
		t.Errorf("v1 at x=%d, v2 at x=%d: versions of a thread share a column", at["p1"].X, at["p2"].X)
	}
	for _, e := range [][2]string{{"g", "p1"}, {"p1", "r1"}, {"r1", "p2"}, {"p1", "p2"}, {"p2", "r2"}} {
		if at[e[0]].Y >= at[e[1]].Y {
			t.Errorf("%s (y=%d) is not above %s (y=%d)", e[0], at[e[0]].Y, e[1], at[e[1]].Y)
		}
	}
	if at["r1"].Class != "review-no" || !strings.Contains(at["r1"].Sub, "reject") || !strings.Contains(at["r1"].Sub, "major") {
		t.Errorf("rejecting review %+v", at["r1"])
	}
	if at["r2"].Class != "review-ok" || at["g"].Class != "goal" {
		t.Errorf("approving review %+v, goal %+v", at["r2"], at["g"])
	}
	versions := 0
	for _, e := range g.Edges {
		if e.Class == "version" {
			versions++
		}
	}
	if versions != 1 || len(g.Edges) != 5 || len(g.Threads) != 1 {
		t.Errorf("%d version edges of %d, %d thread boxes; want 1 of 5 and 1", versions, len(g.Edges), len(g.Threads))
	}
}

func TestLayoutPacksOneVersionThreadsIntoFewColumns(t *testing.T) {
	// A chain of 500 artefacts, each its own thread, needs one column.
	arts := []*blackboard.Artefact{art("a0", "a0", 1, blackboard.StructuralStandard, 0)}
	for i := 1; i < 500; i++ {
		id := "a" + strconv.Itoa(i)
		arts = append(arts, art(id, id, 1, blackboard.StructuralStandard, int64(i), arts[i-1].ID))
	}
	g := layoutGraph(provenance.Build(&blackboard.Workflow{ID: "a0"}, arts, nil))
	if g.Width > 2*colW+2*margin {
		t.Errorf("width %d for a chain: threads that never overlap should share a column", g.Width)
	}
	if len(g.Nodes) != 500 || len(g.Edges) != 499 {
		t.Errorf("%d nodes and %d edges, want 500 and 499", len(g.Nodes), len(g.Edges))
	}
}

// overlaps reports two nodes drawn on top of each other.
func overlaps(g graph) (gnode, gnode, bool) {
	for i, a := range g.Nodes {
		for _, b := range g.Nodes[i+1:] {
			if a.X < b.X+nodeW && b.X < a.X+nodeW && a.Y < b.Y+nodeH && b.Y < a.Y+nodeH {
				return a, b, true
			}
		}
	}
	return gnode{}, gnode{}, false
}

func TestLayoutWrapsAWideFanOutAndKeepsEdgesPointingDown(t *testing.T) {
	// One goal, 499 artefacts derived from it: rows wrap at maxCols.
	arts := []*blackboard.Artefact{art("g", "g", 1, blackboard.StructuralStandard, 0)}
	for i := 1; i < 500; i++ {
		id := "a" + strconv.Itoa(i)
		arts = append(arts, art(id, id, 1, blackboard.StructuralStandard, int64(i), "g"))
	}
	g := layoutGraph(provenance.Build(&blackboard.Workflow{ID: "g"}, arts, nil))
	if !g.Wrapped || g.Width > maxCols*colW+2*margin {
		t.Errorf("a fan-out of 499 is %d wide (wrapped %v), want at most %d", g.Width, g.Wrapped, maxCols*colW+2*margin)
	}
	if a, b, ok := overlaps(g); ok {
		t.Fatalf("nodes %s and %s overlap at (%d,%d) and (%d,%d)", a.ID, b.ID, a.X, a.Y, b.X, b.Y)
	}
	at := map[string]gnode{}
	for _, n := range g.Nodes {
		at[n.ID] = n
		if n.X+nodeW > g.Width || n.Y+nodeH > g.Height {
			t.Fatalf("node %s at (%d,%d) outside the %dx%d graph", n.ID, n.X, n.Y, g.Width, g.Height)
		}
	}
	for _, a := range arts[1:] {
		if at[a.ID].Y <= at["g"].Y {
			t.Fatalf("%s is not below the goal", a.ID)
		}
	}
}

func TestNodesShowClaimsBidsDecisionsFailuresLearningsAndDeadEnds(t *testing.T) {
	goal := art("g", "g", 1, blackboard.StructuralStandard, 1)
	plan := art("p1", "p", 1, blackboard.StructuralStandard, 2, "g")
	plan.Type = "Plan"
	fail := art("f1", "f1", 1, blackboard.StructuralFailure, 3, "p1")
	fail.Summary = "tool exited 2: disk full"
	dead := art("d1", "d1", 1, blackboard.StructuralStandard, 4, "g")
	claims := []*blackboard.Claim{
		{ID: "c1", ArtefactID: "p1", Status: blackboard.ClaimComplete, ReviewDecision: "review decision: proceed (all_approve): 1 of 1 reviews approve",
			Approval: blackboard.ClaimApproval{Decision: blackboard.ApprovalApproved, By: "alice", Reason: "ok"}},
		{ID: "c2", ArtefactID: "d1", Status: blackboard.ClaimTerminated, TerminationReason: "no consumer for Draft"},
	}
	p := provenance.Build(&blackboard.Workflow{ID: "g"}, []*blackboard.Artefact{goal, plan, fail, dead}, claims)
	p.Bids["c1"] = map[string]blackboard.Bid{"planner": blackboard.BidExclusive, "reviewer": blackboard.BidReview, "x": blackboard.BidIgnore}
	p.Learnings = []blackboard.Learning{{ID: "l1", ArtefactID: "p1", Text: "cite the ticket"}}
	at := map[string]gnode{}
	for _, n := range layoutGraph(p).Nodes {
		at[n.ID] = n
	}
	tests := []struct {
		id, class string
		in        []string // each in Title, Sub, Claim or Tooltip
	}{
		{"p1", "plain learned", []string{"complete", "3 bids", "exclusive planner", "review reviewer", "1 ignored",
			"review decision: proceed (all_approve)", "complete · → proceed · approved by", "Plan v1 · learned", "learned: cite the ticket"}},
		{"f1", "failure dead", []string{"FAILURE", "disk full"}},
		{"d1", "plain dead", []string{"terminated", "no consumer for Draft", "dead end"}},
		{"g", "goal", nil},
	}
	for _, tc := range tests {
		n := at[tc.id]
		if n.Class != tc.class {
			t.Errorf("%s: class %q, want %q", tc.id, n.Class, tc.class)
		}
		all := n.Title + "|" + n.Sub + "|" + n.Claim + "|" + n.Tooltip
		for _, w := range tc.in {
			if !strings.Contains(all, w) {
				t.Errorf("%s lacks %q: %s", tc.id, w, all)
			}
		}
	}
}
