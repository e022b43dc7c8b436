package provenance

import (
	"testing"

	"github.com/settdev/sett/internal/blackboard"
)

func TestDecisionOutcome(t *testing.T) {
	for line, want := range map[string]string{
		"review decision: rework (any_reject): 1 of 2 reject. Read: r1 ✗ reject (Major).": "rework",
		"review decision: proceed (all_approve): all approve":                             "proceed",
		"something else": "something else",
		"":               "",
	} {
		if got := DecisionOutcome(line); got != want {
			t.Errorf("DecisionOutcome(%q) = %q, want %q", line, got, want)
		}
	}
}

func art(id, logical string, version int, st blackboard.StructuralType, at int64, sources ...string) *blackboard.Artefact {
	return &blackboard.Artefact{ID: id, LogicalID: logical, Version: version, StructuralType: st, Type: "T", WorkflowID: "g",
		CreatedAtMs: at, SourceArtefacts: sources}
}

func TestBuildHangsThreadsUnderTheirSourceAndFindsDeadEnds(t *testing.T) {
	goal := art("g", "g", 1, blackboard.StructuralStandard, 1)
	goal.Type = blackboard.GoalType
	p1 := art("p1", "p", 1, blackboard.StructuralStandard, 2, "g")
	p2 := art("p2", "p", 2, blackboard.StructuralStandard, 4, "p1")
	d := art("d", "d", 1, blackboard.StructuralStandard, 5, "p2")
	f := art("f", "f", 1, blackboard.StructuralFailure, 6, "p2")
	orphan := art("o", "o", 1, blackboard.StructuralStandard, 7, "elsewhere")
	claims := []*blackboard.Claim{
		{ID: "c1", ArtefactID: "p1", Status: blackboard.ClaimTerminated}, // reworked into p2: not a dead end
		{ID: "c2", ArtefactID: "p2", Status: blackboard.ClaimComplete},
		{ID: "c3", ArtefactID: "d", Status: blackboard.ClaimTerminated},
	}
	p := Build(&blackboard.Workflow{ID: "g"}, []*blackboard.Artefact{orphan, f, d, p2, p1, goal}, claims)
	if len(p.Roots) != 1 || p.Roots[0] != "g" {
		t.Fatalf("roots %v, want [g]", p.Roots)
	}
	if got := p.Children["g"]; len(got) != 2 || got[0] != "p" || got[1] != "o" {
		t.Errorf("children of the goal %v, want [p o] (the orphan hangs under the goal)", got)
	}
	if got := p.Children["p2"]; len(got) != 2 {
		t.Errorf("children of p2 %v, want d and f", got)
	}
	if vs := p.Threads["p"]; len(vs) != 2 || vs[0].ID != "p1" || !p.Latest(vs[1]) {
		t.Errorf("thread p %v", vs)
	}
	for id, want := range map[string]bool{"p1": false, "p2": false, "d": true, "f": true, "g": false} {
		if got := p.DeadEnd(p.ByID[id]); got != want {
			t.Errorf("DeadEnd(%s) = %v, want %v", id, got, want)
		}
	}
	p.Bids["c2"] = map[string]blackboard.Bid{"b": blackboard.BidReview, "a": blackboard.BidExclusive, "z": blackboard.BidIgnore}
	if got, want := p.BidText("c2"), "3 bids: exclusive a, review b, 1 ignored"; got != want {
		t.Errorf("BidText = %q, want %q", got, want)
	}
	if p.BidText("c3") != "" {
		t.Error("BidText of a claim without bids is not empty")
	}
}
