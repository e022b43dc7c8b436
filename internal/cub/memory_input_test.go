package cub

import (
	"strings"
	"testing"

	"github.com/settdev/sett/internal/tool"
)

func TestOmitPayload(t *testing.T) {
	long := "# Plan\n" + strings.Repeat("step\n", LongPayload/5+1)
	upstream := map[string]string{"planner": "memory", "critic": "memory"}
	for _, c := range []struct {
		name string
		a    tool.Artefact
		want bool
	}{
		{"a review whose author left a memory", tool.Artefact{ID: "r", StructuralType: "Review", ProducedByAgent: "critic", Payload: "{}"}, true},
		{"a review whose author left none", tool.Artefact{ID: "r", StructuralType: "Review", ProducedByAgent: "other", Payload: "{}"}, false},
		{"a long plan whose author left a memory", tool.Artefact{ID: "p", StructuralType: "Standard", Type: "Plan", ProducedByAgent: "planner", Payload: long}, true},
		{"a short plan: cheaper to pass than to fetch", tool.Artefact{ID: "p", StructuralType: "Standard", Type: "Plan", ProducedByAgent: "planner", Payload: "# Plan\nstep"}, false},
		{"a long plan without its author's memory", tool.Artefact{ID: "p", StructuralType: "Standard", Type: "Plan", ProducedByAgent: "other", Payload: long}, false},
		{"the target, however long", tool.Artefact{ID: "target", StructuralType: "Standard", Type: "Plan", ProducedByAgent: "planner", Payload: long}, false},
		{"the goal: the person's words", tool.Artefact{ID: "g", StructuralType: "Standard", Type: "GoalDefined", ProducedByAgent: "planner", Payload: long}, false},
		{"an artefact of no agent (a person's)", tool.Artefact{ID: "h", StructuralType: "Standard", Type: "Plan", Payload: long}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := omitPayload(c.a, upstream, "target"); got != c.want {
				t.Errorf("omitPayload = %v, want %v", got, c.want)
			}
		})
	}
	arts := []tool.Artefact{{ID: "p", StructuralType: "Standard", Type: "Plan", ProducedByAgent: "planner", Payload: long}}
	omitPayloads(arts, upstream, "target")
	if a := arts[0]; !a.PayloadOmitted || a.Payload != "" || a.PayloadBytes != len(long) || len(a.Sections) != 1 || a.Sections[0] != "Plan" {
		t.Errorf("omitted plan %+v, want no payload, its size and its one section", a)
	}
}
