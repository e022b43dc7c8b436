package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/reviewpolicy"
	"github.com/settdev/sett/internal/tool"
)

// TestReviewerReturnsMemory: every answer carries an agent memory that the
// cub accepts as it is, agreeing with the payload.
func TestReviewerReturnsMemory(t *testing.T) {
	tests := []struct {
		name         string
		opts         options
		payload      string
		wantStatus   memory.Status
		wantSeverity string
		wantFindings int
	}{
		{name: "approval without a severity", opts: options{rejectSeverity: "Major"}, payload: "plan", wantStatus: memory.StatusDone},
		{name: "approval with a severity", opts: options{approveSeverity: "Low", rejectSeverity: "High"}, payload: "plan", wantStatus: memory.StatusDone, wantSeverity: "Low"},
		{name: "rejection", opts: options{require: "auth", rejectSeverity: "FAIL"}, payload: "plan", wantStatus: memory.StatusNeedsRevision, wantSeverity: "FAIL", wantFindings: 1},
		{name: "rejection with a long finding", opts: options{require: strings.Repeat("w", 500), alwaysReject: true, rejectSeverity: "Major"}, payload: "plan",
			wantStatus: memory.StatusNeedsRevision, wantSeverity: "Major", wantFindings: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, _ := json.Marshal(tool.Input{ClaimType: tool.ClaimTypeReview, TargetArtefact: tool.Artefact{ID: "a", Type: "Plan", Version: 1, Payload: tt.payload}})
			var out bytes.Buffer
			if err := run(bytes.NewReader(in), &out, tt.opts); err != nil {
				t.Fatal(err)
			}
			o, err := tool.ParseOutput(out.Bytes(), tool.ClaimTypeReview, 0)
			if err != nil {
				t.Fatalf("output %s: %v", out.Bytes(), err)
			}
			if err := reviewpolicy.CheckStructured(o.ArtefactPayload); err != nil {
				t.Fatal(err)
			}
			m, err := memory.ParseAgentMemory(o.Memory)
			if err != nil {
				t.Fatalf("memory %s: %v", o.Memory, err)
			}
			if m.Status != tt.wantStatus || m.HighestSeverity != tt.wantSeverity || len(m.KeyFindings) != tt.wantFindings {
				t.Fatalf("memory %+v, want %s/%q with %d findings", m, tt.wantStatus, tt.wantSeverity, tt.wantFindings)
			}
			v := reviewpolicy.Judge(o.ArtefactPayload, &m)
			if len(v.Gaps) != 0 || v.Status != tt.wantStatus {
				t.Errorf("payload and memory disagree: %+v", v)
			}
		})
	}
}
