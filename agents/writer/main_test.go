package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/tool"
)

// TestWriterReturnsMemory: first versions and revisions carry an agent
// memory the cub accepts as it is; learnings carry none.
func TestWriterReturnsMemory(t *testing.T) {
	tests := []struct {
		name    string
		in      tool.Input
		wantMem bool
	}{
		{name: "first version", in: tool.Input{ClaimType: tool.ClaimTypeExclusive, Workflow: tool.Workflow{Goal: "Design the cache"},
			TargetArtefact: tool.Artefact{ID: "g", Type: "GoalDefined", Payload: "Design the cache"}}, wantMem: true},
		{name: "revision", in: tool.Input{ClaimType: tool.ClaimTypeFeedback, TargetArtefact: tool.Artefact{ID: "p", Type: "Plan", Version: 1, Payload: "# Plan"},
			Feedback: []tool.Artefact{{ID: "r", Payload: `{"verdict":"reject","findings":["add tests"]}`}}}, wantMem: true},
		{name: "learning", in: tool.Input{ClaimType: tool.ClaimTypeLearn, TargetArtefact: tool.Artefact{ID: "p", Type: "Plan"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, _ := json.Marshal(tt.in)
			var out bytes.Buffer
			if err := run(bytes.NewReader(in), &out, "Plan"); err != nil {
				t.Fatal(err)
			}
			o, err := tool.ParseOutput(out.Bytes(), tt.in.ClaimType, 0)
			if err != nil {
				t.Fatalf("output %s: %v", out.Bytes(), err)
			}
			if (o.Memory != nil) != tt.wantMem {
				t.Fatalf("memory %s, want one: %v", o.Memory, tt.wantMem)
			}
			if o.Memory == nil {
				return
			}
			m, err := memory.ParseAgentMemory(o.Memory)
			if err != nil || m.Status != memory.StatusDone || m.Summary == "" || len(m.ArtifactIndex) != 1 {
				t.Fatalf("memory %s: %+v, %v", o.Memory, m, err)
			}
		})
	}
}

// TestWriterRevisesFromMemories: a review whose payload was omitted for
// its author's memory is answered from the memory's key findings.
func TestWriterRevisesFromMemories(t *testing.T) {
	mem := memory.RenderAgentMemory("security", memory.AgentMemory{Status: memory.StatusNeedsRevision,
		KeyFindings: []string{"The Plan must mention auth."}, HighestSeverity: "Major"})
	in := tool.Input{ClaimType: tool.ClaimTypeFeedback, TargetArtefact: tool.Artefact{ID: "p", Type: "Plan", Version: 1, Payload: "# Plan"},
		Feedback: []tool.Artefact{{ID: "r", ProducedByAgent: "security", ProducedByRole: "security", PayloadOmitted: true}}}
	in.Memory.Upstream = map[string]string{"security": mem}
	o := revise(in)
	if !strings.Contains(o.ArtefactPayload, "From security: The Plan must mention auth.") {
		t.Fatalf("revision does not answer the memory's findings:\n%s", o.ArtefactPayload)
	}
}
