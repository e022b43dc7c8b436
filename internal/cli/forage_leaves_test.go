package cli

import (
	"testing"

	"github.com/settdev/sett/pkg/blackboard"
)

func TestLeafArtefactsAreTheResults(t *testing.T) {
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
	got := leafArtefacts([]*blackboard.Artefact{approval, goal, v1, rejection, v2, failure})
	if len(got) != 1 || got[0].ID != "failure" {
		ids := []string{}
		for _, a := range got {
			ids = append(ids, a.ID)
		}
		t.Fatalf("leaves %v, want [failure] (plan-v2 is built on by the failure)", ids)
	}
	got = leafArtefacts([]*blackboard.Artefact{goal, v1, rejection, v2, approval})
	if len(got) != 1 || got[0].ID != "plan-v2" {
		t.Fatalf("leaves %v, want the approved rework plan-v2 only", got)
	}
}
