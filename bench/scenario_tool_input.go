package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/settdev/sett/internal/cub"
	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/tool"
)

// toolInputSizes measures a rework's tool input (issue 28: memory-first
// reading) as the cub assembles it: the goal, an 8 KB Plan in the
// context chain and the four reviews of the latest round in feedback,
// each a 10-finding review of about 3 KB. With memories, the reviewers'
// compact memories stand for their payloads (payload_omitted, with
// payload_bytes and the sections sett-read can fetch); without, the
// payloads are sent. Deterministic: one sample each.
func (r *runner) toolInputSizes(context.Context) error {
	plan := tool.Artefact{ID: "plan-2", LogicalID: "plan", Version: 2, StructuralType: "Standard", Type: "Plan",
		Payload:        "# Plan\n" + strings.Repeat("## Task\nImplement the cache layer with an LRU eviction policy and metrics.\n", 110),
		ProducedByRole: "planner", ProducedByAgent: "planner", WorkflowID: "wf"}
	reviewers := []string{"ct-security", "ct-scalability", "ct-maintainability", "ct-strategy"}
	var reviews []tool.Artefact
	upstream := map[string]string{}
	for i, agent := range reviewers {
		var findings []map[string]string
		for j := 0; j < 10; j++ {
			findings = append(findings, map[string]string{"severity": "High",
				"text": fmt.Sprintf("%s finding %d: the plan's task %d does not say how the cache is invalidated when the upstream record changes, nor who owns the TTL; add it to §Task", agent, j, j)})
		}
		payload, _ := json.Marshal(map[string]any{"status": "NEEDS_REVISION", "severity": "High", "findings": findings})
		reviews = append(reviews, tool.Artefact{ID: fmt.Sprintf("review-%d", i), LogicalID: fmt.Sprintf("review-%d", i), Version: 1,
			StructuralType: "Review", Type: "Review", Payload: string(payload), SourceArtefacts: []string{plan.ID},
			ProducedByRole: "critic", ProducedByAgent: agent, WorkflowID: "wf"})
		upstream[agent] = memory.RenderAgentMemory(agent, memory.AgentMemory{Status: memory.StatusNeedsRevision,
			Summary: "the plan leaves cache invalidation open", HighestSeverity: "High",
			KeyFindings:   []string{"invalidation on upstream change missing", "TTL owner missing", "no metrics for hit rate", "no load test task", "rollback unclear"},
			ArtifactIndex: []memory.ArtifactEntry{{Path: "review-" + fmt.Sprint(i), Sections: []string{"§findings"}}}})
	}
	input := func(withMemories bool) (int, error) {
		in := tool.Input{ClaimID: "c", ClaimType: tool.ClaimTypeFeedback, TargetArtefact: plan,
			Feedback: append([]tool.Artefact(nil), reviews...), Workflow: tool.Workflow{ID: "wf", Goal: "Ship the cache"},
			Instance: "bench", Agent: "planner"}
		if withMemories {
			in.Memory.Upstream = upstream
			cub.OmitPayloads(in.Feedback, upstream, in.TargetArtefact.ID)
		}
		data, err := in.MarshalJSON()
		return len(data), err
	}
	with, err := input(true)
	if err != nil {
		return err
	}
	without, err := input(false)
	if err != nil {
		return err
	}
	f := NewFigure("tool_input_bytes_rework_4_reviews", "rework input, 4 reviews, memories standing for payloads", "bytes", "inputs", []float64{float64(with)}, "")
	f.Note = fmt.Sprintf("the cub's assembly (OmitPayloads) of a rework of an 8 KB Plan with four 10-finding reviews; %.0f %% of the input without memories; the omitted payloads stay fetchable whole or by section with sett-read; informational",
		100*float64(with)/float64(without))
	r.add(f)
	f = NewFigure("tool_input_bytes_rework_4_reviews_no_memory", "rework input, 4 reviews, payloads sent", "bytes", "inputs", []float64{float64(without)}, "")
	f.Note = "the same rework when the reviewers leave no memory; informational"
	r.add(f)
	return nil
}
