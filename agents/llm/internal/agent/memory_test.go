package agent

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/settdev/sett/agents/llm/internal/answer"
	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/tool"
	toolio "github.com/settdev/sett/pkg/tool"
)

// TestMemoryOf pins the memory sett-llm returns with each kind of answer,
// and that it always passes the memory contract as it is.
func TestMemoryOf(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a finding that goes on ", 30)
	review := tool.Input{ClaimType: tool.ClaimTypeReview, TargetArtefact: tool.Artefact{Type: "Plan", Version: 1}}
	rework := tool.Input{ClaimType: tool.ClaimTypeFeedback, TargetArtefact: tool.Artefact{Type: "Plan", Version: 2},
		Feedback: []tool.Artefact{{ID: "r1"}, {ID: "r2"}}}
	for _, tc := range []struct {
		name string
		typ  string
		in   tool.Input
		out  toolio.Answer
		want memory.AgentMemory
	}{
		{name: "a rejecting verdict: NEEDS_REVISION, its severity, at most 5 findings",
			typ: "Review", in: review,
			out: toolio.Answer{Summary: "reject (Major): no eviction", ArtefactPayload: answer.Verdict{Verdict: "reject", Severity: "Major",
				Findings: []string{"no eviction", "no TTL", "no metrics", "no tests", "no rollback", "no docs"}}},
			want: memory.AgentMemory{Status: memory.StatusNeedsRevision, Summary: "reject (Major): no eviction", HighestSeverity: "Major",
				KeyFindings: []string{"no eviction", "no TTL", "no metrics", "no tests", "no rollback"}}},
		{name: "an approving verdict: DONE",
			typ: "Review", in: review,
			out:  toolio.Answer{Summary: "approve", ArtefactPayload: answer.Verdict{Verdict: "approve", Findings: []string{long}}},
			want: memory.AgentMemory{Status: memory.StatusDone, Summary: "approve", KeyFindings: []string{toolio.MemoryText(long)}}},
		{name: "a text answer: its headings indexed",
			typ: "Plan", in: tool.Input{ClaimType: tool.ClaimTypeExclusive},
			out: toolio.Answer{Summary: "Plan", ArtefactPayload: "# Plan\n## Tasks\n- a\n## Risks\n- b\n"},
			want: memory.AgentMemory{Status: memory.StatusDone, Summary: "Plan",
				ArtifactIndex: []memory.ArtifactEntry{{Path: "Plan", Sections: []string{"§Plan", "§Tasks", "§Risks"}, Note: "this answer"}}}},
		{name: "a JSON rework: its keys indexed and the rework recorded",
			in:  rework,
			out: toolio.Answer{Summary: "Plan (JSON)", ArtefactPayload: json.RawMessage(`{"tasks": [], "risks": []}`)},
			want: memory.AgentMemory{Status: memory.StatusDone, Summary: "Plan (JSON)", Decisions: []string{"reworked Plan v2 after 2 review(s)"},
				ArtifactIndex: []memory.ArtifactEntry{{Path: "Plan", Sections: []string{"§risks", "§tasks"}, Note: "this answer"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := memoryOf(tc.typ, tc.in, tc.out)
			if !reflect.DeepEqual(*got, tc.want) {
				t.Fatalf("memoryOf =\n %+v\nwant\n %+v", *got, tc.want)
			}
			raw, _ := json.Marshal(got)
			if _, err := memory.ParseAgentMemory(raw); err != nil {
				t.Fatalf("the memory breaks the contract: %v", err)
			}
		})
	}
}
