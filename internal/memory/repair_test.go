package memory

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestRepairAgentMemory(t *testing.T) {
	long := strings.Repeat("x", MaxTextLen+50)
	findings := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = `"finding ` + string(rune('A'+i)) + `"`
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	manyDecisions := make([]string, 40)
	for i := range manyDecisions {
		manyDecisions[i] = `"decision"`
	}
	tests := []struct {
		name          string
		raw           string
		wantErr       bool
		wantTruncated bool
		wantCuts      []string // substrings, each in some cut
		check         func(t *testing.T, m AgentMemory)
	}{
		{name: "a valid memory is kept as it is", raw: `{"status":"DONE","key_findings":["a"]}`,
			check: func(t *testing.T, m AgentMemory) {
				if len(m.KeyFindings) != 1 {
					t.Errorf("findings %q", m.KeyFindings)
				}
			}},
		{name: "six key findings are cut to five", raw: `{"status":"NEEDS_REVISION","key_findings":` + findings(6) + `,"highest_severity":"Major"}`,
			wantTruncated: true, wantCuts: []string{"key_findings cut from 6 to 5"},
			check: func(t *testing.T, m AgentMemory) {
				if len(m.KeyFindings) != MaxKeyFindings || m.KeyFindings[0] != "finding A" || m.KeyFindings[4] != "finding E" {
					t.Errorf("findings %q, want the first five", m.KeyFindings)
				}
				if m.Status != StatusNeedsRevision || m.HighestSeverity != "Major" {
					t.Errorf("status/severity %s/%s lost", m.Status, m.HighestSeverity)
				}
			}},
		{name: "an over-long summary and finding are cut", raw: `{"status":"DONE","summary":"` + long + `","key_findings":["ok","` + long + `"]}`,
			wantTruncated: true, wantCuts: []string{"summary cut to 400", "key_findings[1] cut to 400"},
			check: func(t *testing.T, m AgentMemory) {
				if n := len([]rune(m.Summary)); n != MaxTextLen || !strings.HasSuffix(m.Summary, truncMark) {
					t.Errorf("summary of %d characters %q", n, m.Summary[len(m.Summary)-8:])
				}
			}},
		{name: "unknown fields and empty entries are dropped", raw: `{"status":"DONE","mood":"happy","decisions":["", 3, "keep"]}`,
			wantTruncated: true, wantCuts: []string{`unknown field "mood"`, "decisions[0]", "decisions[1]"},
			check: func(t *testing.T, m AgentMemory) {
				if len(m.Decisions) != 1 || m.Decisions[0] != "keep" {
					t.Errorf("decisions %q", m.Decisions)
				}
			}},
		{name: "too many lines: decisions go first", raw: `{"status":"DONE","key_findings":` + findings(5) + `,"decisions":[` + strings.Join(manyDecisions, ",") + `]}`,
			wantTruncated: true, wantCuts: []string{"the last entry of decisions dropped"},
			check: func(t *testing.T, m AgentMemory) {
				if RenderedLines(m) > MaxRenderedLines || len(m.KeyFindings) != 5 || len(m.Decisions) == 0 {
					t.Errorf("%d lines, %d findings, %d decisions", RenderedLines(m), len(m.KeyFindings), len(m.Decisions))
				}
			}},
		{name: "an index entry without a path is dropped", raw: `{"status":"DONE","artifact_index":[{"note":"x"},{"path":"plan.md","sections":["API"],"extra":1}]}`,
			wantTruncated: true, wantCuts: []string{"artifact_index[0] has no path", "artifact_index[1].extra"},
			check: func(t *testing.T, m AgentMemory) {
				if len(m.ArtifactIndex) != 1 || m.ArtifactIndex[0].Path != "plan.md" {
					t.Errorf("index %+v", m.ArtifactIndex)
				}
			}},
		{name: "no status cannot be repaired", raw: `{"key_findings":` + findings(6) + `}`, wantErr: true},
		{name: "an unknown status cannot be repaired", raw: `{"status":"MAYBE"}`, wantErr: true},
		{name: "not an object cannot be repaired", raw: `["DONE"]`, wantErr: true},
		{name: "not JSON cannot be repaired", raw: `{"status":`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, cuts, err := RepairAgentMemory(json.RawMessage(tt.raw))
			if tt.wantErr {
				if !errors.Is(err, ErrInvalidMemory) {
					t.Fatalf("err = %v, want ErrInvalidMemory", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Truncated != tt.wantTruncated || (len(cuts) > 0) != tt.wantTruncated {
				t.Fatalf("Truncated = %v, cuts %q; want truncated %v", m.Truncated, cuts, tt.wantTruncated)
			}
			for _, w := range tt.wantCuts {
				if !strings.Contains(strings.Join(cuts, " | "), w) {
					t.Errorf("cuts %q, want one containing %q", cuts, w)
				}
			}
			if tt.check != nil {
				tt.check(t, m)
			}
			// The repaired memory is one the strict reader accepts.
			b, _ := json.Marshal(m)
			var generic map[string]any
			_ = json.Unmarshal(b, &generic)
			delete(generic, "truncated")
			b, _ = json.Marshal(generic)
			if _, err := ParseAgentMemory(b); err != nil {
				t.Errorf("repaired memory is still invalid: %v", err)
			}
			if m.Truncated && !strings.Contains(RenderAgentMemory("a", m), "memory truncated") {
				t.Error("the rendered memory does not say it was truncated")
			}
		})
	}
}
