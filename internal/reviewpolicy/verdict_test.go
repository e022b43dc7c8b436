package reviewpolicy

import (
	"reflect"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/memory"
)

const (
	done  = memory.StatusDone
	nr    = memory.StatusNeedsRevision
	errSt = memory.StatusError
)

func TestJudge(t *testing.T) {
	mem := func(st memory.Status, sev string) *memory.AgentMemory {
		return &memory.AgentMemory{Status: st, HighestSeverity: sev}
	}
	tests := []struct {
		name            string
		payload         string
		mem             *memory.AgentMemory
		wantStatus      memory.Status
		wantSeverity    string
		wantMemSeverity string
		wantBasis       Basis
		wantFindings    []Finding
		wantGaps        []string // substrings, one per gap
		wantFeedback    bool     // Feedback is the trimmed payload
	}{
		// The legacy forms (the orchestrator's JudgeReview).
		{name: "empty object approves", payload: "{}", wantStatus: done, wantBasis: BasisLegacy},
		{name: "empty object with spaces approves", payload: " { } ", wantStatus: done, wantBasis: BasisLegacy},
		{name: "empty array approves", payload: " [] \n", wantStatus: done, wantBasis: BasisLegacy},
		{name: "verdict approve", payload: `{"verdict":"approve"}`, wantStatus: done, wantBasis: BasisPayload},
		{name: "verdict approve any case, with severity", payload: `{"verdict":"Approved","severity":"Minor"}`, wantStatus: done, wantSeverity: "Minor", wantBasis: BasisPayload},
		{name: "verdict reject", payload: `{"verdict":"reject","severity":"Major","findings":["no tests"]}`, wantStatus: nr, wantSeverity: "Major", wantBasis: BasisPayload,
			wantFindings: []Finding{{Text: "no tests"}}, wantFeedback: true},
		{name: "verdict rejected", payload: `{"verdict":"REJECTED"}`, wantStatus: nr, wantBasis: BasisPayload, wantFeedback: true},
		{name: "structured without verdict rejects", payload: `{"findings":["x"]}`, wantStatus: nr, wantBasis: BasisLegacy, wantFindings: []Finding{{Text: "x"}}, wantFeedback: true},
		{name: "unknown verdict rejects, a gap", payload: `{"verdict":"maybe"}`, wantStatus: nr, wantBasis: BasisPayload, wantGaps: []string{`verdict "maybe" is not approve or reject`}, wantFeedback: true},
		{name: "verdict of the wrong type rejects, a gap", payload: `{"verdict":true}`, wantStatus: nr, wantBasis: BasisPayload, wantGaps: []string{"verdict true is not approve or reject"}, wantFeedback: true},
		{name: "free text rejects", payload: "needs tests", wantStatus: nr, wantBasis: BasisLegacy, wantFeedback: true},
		{name: "empty payload rejects", payload: "   ", wantStatus: nr, wantBasis: BasisLegacy},
		{name: "non-empty array rejects", payload: `["fix line 3"]`, wantStatus: nr, wantBasis: BasisLegacy, wantFeedback: true},
		{name: "JSON string rejects", payload: `"ok"`, wantStatus: nr, wantBasis: BasisLegacy, wantFeedback: true},
		{name: "JSON null rejects", payload: `null`, wantStatus: nr, wantBasis: BasisLegacy, wantFeedback: true},

		// The structured form.
		{name: "status DONE", payload: `{"status":"DONE","severity":"Low"}`, wantStatus: done, wantSeverity: "Low", wantBasis: BasisPayload},
		{name: "status lower case", payload: `{"status":"needs_revision"}`, wantStatus: nr, wantBasis: BasisPayload, wantFeedback: true},
		{name: "status ERROR", payload: `{"status":"ERROR"}`, wantStatus: errSt, wantBasis: BasisPayload, wantFeedback: true},
		{name: "status line", payload: `{"status":"DONE: all good"}`, wantStatus: done, wantBasis: BasisPayload},
		{name: "unknown status, a gap", payload: `{"status":"FINISHED"}`, wantStatus: nr, wantBasis: BasisPayload, wantGaps: []string{`status "FINISHED" is not DONE, NEEDS_REVISION or ERROR`}, wantFeedback: true},
		{name: "verdict and status disagree: the worse wins", payload: `{"verdict":"approve","status":"NEEDS_REVISION"}`, wantStatus: nr, wantBasis: BasisPayload,
			wantGaps: []string{"verdict approve and status NEEDS_REVISION disagree; read as NEEDS_REVISION"}, wantFeedback: true},
		{name: "verdict reject beats status DONE", payload: `{"verdict":"reject","status":"DONE"}`, wantStatus: nr, wantBasis: BasisPayload,
			wantGaps: []string{"disagree; read as NEEDS_REVISION"}, wantFeedback: true},
		{name: "status ERROR beats verdict reject", payload: `{"verdict":"reject","status":"ERROR"}`, wantStatus: errSt, wantBasis: BasisPayload,
			wantGaps: []string{"disagree; read as ERROR"}, wantFeedback: true},
		{name: "findings as objects", payload: `{"verdict":"reject","findings":[{"severity":"Blocker","message":"SQL injection"},{"title":"typo","severity":"n/a"},{"x":1},"plain",3]}`,
			wantStatus: nr, wantBasis: BasisPayload, wantFeedback: true,
			wantFindings: []Finding{{Severity: "Blocker", Text: "SQL injection"}, {Text: "typo"}, {Text: `{"x":1}`}, {Text: "plain"}, {Text: "3"}}},
		{name: "findings as one string", payload: `{"verdict":"reject","findings":"one thing"}`, wantStatus: nr, wantBasis: BasisPayload, wantFeedback: true, wantFindings: []Finding{{Text: "one thing"}}},
		{name: "findings of the wrong type, a gap", payload: `{"verdict":"reject","findings":{"a":1}}`, wantStatus: nr, wantBasis: BasisPayload, wantFeedback: true, wantGaps: []string{"findings {\"a\":1} is not a list"}},
		{name: "severity not a string, a gap", payload: `{"verdict":"reject","severity":3}`, wantStatus: nr, wantBasis: BasisPayload, wantFeedback: true, wantGaps: []string{"severity 3 is not a string"}},
		{name: "severity N/A is none", payload: `{"verdict":"approve","severity":"N/A"}`, wantStatus: done, wantBasis: BasisPayload},

		// The agent memory informs what the payload leaves open.
		{name: "memory status when the payload has none", payload: "A long review text.", mem: mem(done, "Minor"), wantStatus: done, wantSeverity: "Minor", wantBasis: BasisMemory},
		{name: "memory NEEDS_REVISION beats a legacy {}", payload: "{}", mem: mem(nr, "High"), wantStatus: nr, wantSeverity: "High", wantBasis: BasisMemory, wantFeedback: true},
		{name: "memory ERROR", payload: "", mem: mem(errSt, ""), wantStatus: errSt, wantBasis: BasisMemory},
		{name: "memory severity fills a payload without one", payload: `{"verdict":"reject"}`, mem: mem(nr, "Major"), wantStatus: nr, wantSeverity: "Major", wantBasis: BasisPayload, wantFeedback: true},
		{name: "payload and memory severities both kept", payload: `{"verdict":"reject","severity":"Minor"}`, mem: mem(nr, "Major"), wantStatus: nr, wantSeverity: "Minor", wantMemSeverity: "Major", wantBasis: BasisPayload, wantFeedback: true},
		{name: "same severity in payload and memory is kept once", payload: `{"verdict":"reject","severity":"major"}`, mem: mem(nr, "Major"), wantStatus: nr, wantSeverity: "major", wantBasis: BasisPayload, wantFeedback: true},
		{name: "memory NEEDS_REVISION beats payload approve, a gap", payload: `{"verdict":"approve"}`, mem: mem(nr, ""), wantStatus: nr, wantBasis: BasisMemory,
			wantGaps: []string{"the payload says DONE but the agent memory says NEEDS_REVISION; read as the worse, NEEDS_REVISION"}, wantFeedback: true},
		{name: "payload NEEDS_REVISION beats memory DONE, a gap", payload: `{"status":"NEEDS_REVISION"}`, mem: mem(done, "Minor"), wantStatus: nr, wantSeverity: "Minor", wantBasis: BasisPayload,
			wantGaps: []string{"read as the worse, NEEDS_REVISION"}, wantFeedback: true},
		{name: "memory ERROR beats payload DONE", payload: `{"status":"DONE","severity":"Minor"}`, mem: mem(errSt, "Blocker"), wantStatus: errSt, wantSeverity: "Minor", wantMemSeverity: "Blocker", wantBasis: BasisMemory,
			wantGaps: []string{"read as the worse, ERROR"}, wantFeedback: true},
		{name: "DONE/Minor payload, NEEDS_REVISION/Blocker memory", payload: `{"status":"DONE","severity":"Minor"}`, mem: mem(nr, "Blocker"), wantStatus: nr, wantSeverity: "Minor", wantMemSeverity: "Blocker", wantBasis: BasisMemory,
			wantGaps: []string{"read as the worse, NEEDS_REVISION"}, wantFeedback: true},
		{name: "memory severity N/A is none", payload: "{}", mem: mem(done, "N/A"), wantStatus: done, wantBasis: BasisMemory},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Judge(tt.payload, tt.mem)
			if v.Status != tt.wantStatus || v.Severity != tt.wantSeverity || v.Basis != tt.wantBasis || v.Reason == "" {
				t.Fatalf("Judge = %+v; want status %s severity %q basis %s and a reason", v, tt.wantStatus, tt.wantSeverity, tt.wantBasis)
			}
			if v.MemorySeverity != tt.wantMemSeverity {
				t.Errorf("MemorySeverity = %q, want %q", v.MemorySeverity, tt.wantMemSeverity)
			}
			if v.Approves() != (tt.wantStatus == done) {
				t.Errorf("Approves() = %v", v.Approves())
			}
			if !reflect.DeepEqual(v.Findings, tt.wantFindings) && !(len(v.Findings) == 0 && len(tt.wantFindings) == 0) {
				t.Errorf("Findings = %#v, want %#v", v.Findings, tt.wantFindings)
			}
			if len(v.Gaps) != len(tt.wantGaps) {
				t.Fatalf("Gaps = %q, want %d like %q", v.Gaps, len(tt.wantGaps), tt.wantGaps)
			}
			for i, g := range tt.wantGaps {
				if !strings.Contains(v.Gaps[i], g) {
					t.Errorf("gap %d = %q, want it to contain %q", i, v.Gaps[i], g)
				}
			}
			wantFeedback := ""
			if tt.wantFeedback {
				wantFeedback = strings.TrimSpace(tt.payload)
			}
			if v.Feedback != wantFeedback {
				t.Errorf("Feedback = %q, want %q", v.Feedback, wantFeedback)
			}
		})
	}
}
