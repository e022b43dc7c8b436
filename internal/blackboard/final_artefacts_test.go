package blackboard_test

import (
	"slices"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
)

func TestFinalArtefacts(t *testing.T) {
	t.Parallel()
	art := func(id string, st blackboard.StructuralType, ms int64, sources ...string) *blackboard.Artefact {
		return &blackboard.Artefact{ID: id, StructuralType: st, CreatedAtMs: ms, SourceArtefacts: sources}
	}
	goal := art("goal", blackboard.StructuralStandard, 1)
	v1 := art("plan-v1", blackboard.StructuralStandard, 2, "goal")
	rejection := art("review-1", blackboard.StructuralReview, 3, "plan-v1")
	v2 := art("plan-v2", blackboard.StructuralStandard, 4, "plan-v1", "review-1")
	approval := art("review-2", blackboard.StructuralReview, 5, "plan-v2")
	failure := art("failure", blackboard.StructuralFailure, 6, "plan-v2")
	note := art("note", blackboard.StructuralStandard, 4, "plan-v1")
	terminal := art("a-terminal", blackboard.StructuralTerminal, 4, "plan-v1")
	for _, c := range []struct {
		name string
		arts []*blackboard.Artefact
		want []string
	}{
		{"a failure built on the last version", []*blackboard.Artefact{approval, goal, v1, rejection, v2, failure}, []string{"failure"}},
		{"the approved rework, not its review", []*blackboard.Artefact{goal, v1, rejection, v2, approval}, []string{"plan-v2"}},
		{"the goal alone: nothing was built on it", []*blackboard.Artefact{goal}, []string{"goal"}},
		{"parallel results, oldest first then by id", []*blackboard.Artefact{note, goal, v1, terminal}, []string{"a-terminal", "note"}},
		{"a review only judges: the plan it judged stays a result", []*blackboard.Artefact{goal, v1, rejection}, []string{"plan-v1"}},
		{"missing artefacts are skipped", []*blackboard.Artefact{nil, goal, v1}, []string{"plan-v1"}},
		{"nothing", nil, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, a := range blackboard.FinalArtefacts(c.arts) {
				got = append(got, a.ID)
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("FinalArtefacts = %v, want %v", got, c.want)
			}
		})
	}
}
