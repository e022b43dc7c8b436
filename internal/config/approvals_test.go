package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestApprovalsDefaults(t *testing.T) {
	cfg, _ := mustParse(t, withLines())
	a := cfg.Approvals
	if a.Enabled() || a.OnReject != OnRejectEnd || a.Timeout != DefaultApprovalTimeout {
		t.Errorf("defaults = %+v, want nothing gated, on_reject end, timeout 24h", a)
	}
}

func TestApprovalsParse(t *testing.T) {
	tests := []struct {
		name        string
		lines       []string
		wantTimeout time.Duration
		gates       map[[2]string]bool // {type, agent} → gated
	}{
		{
			name:        "types and agents",
			lines:       []string{`approvals: {artefact_types: ["Plan", "Code*"], agents: [writer], on_reject: rework, timeout: 2h}`},
			wantTimeout: 2 * time.Hour,
			gates: map[[2]string]bool{
				{"Plan", ""}: true, {"CodeChange", "other"}: true, {"Review", "writer"}: true,
				{"Review", "other"}: false, {"Planning", ""}: false,
			},
		},
		{
			name:        "zero means never",
			lines:       []string{`approvals: {artefact_types: [Plan], timeout: 0s}`},
			wantTimeout: 0,
			gates:       map[[2]string]bool{{"Plan", ""}: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, _ := mustParse(t, withLines(tt.lines...))
			if got := cfg.Approvals.Timeout.Std(); got != tt.wantTimeout {
				t.Errorf("timeout = %s, want %s", got, tt.wantTimeout)
			}
			for in, want := range tt.gates {
				if got := cfg.Approvals.Gates(in[0], in[1]); got != want {
					t.Errorf("Gates(%q, %q) = %v, want %v", in[0], in[1], got, want)
				}
			}
		})
	}
}

func TestApprovalsValidate(t *testing.T) {
	tests := []struct {
		name     string
		lines    []string
		wantPath string
		wantMsg  string
	}{
		{"unknown agent", []string{`approvals: {agents: [ghost]}`}, "approvals.agents[0]", `"ghost" is not an agent of this file`},
		{"bad pattern", []string{`approvals: {artefact_types: ["Pl[an"]}`}, "approvals.artefact_types[0]", "not a valid pattern"},
		{"empty pattern", []string{`approvals: {artefact_types: [""]}`}, "approvals.artefact_types[0]", "gates nothing"},
		{"on_reject unknown", []string{`approvals: {on_reject: retry}`}, "approvals.on_reject", `"retry" is not valid (use end or rework)`},
		{"negative timeout", []string{`approvals: {timeout: -1h}`}, "approvals.timeout", "-1h is not valid"},
		{"learner unknown", []string{`orchestrator: {learner: sage}`}, "orchestrator.learner", `"sage" is not an agent of this file`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Parse(withLines(tt.lines...), "sett.yml")
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Parse error = %v, want ErrInvalid", err)
			}
			fe := findFieldError(t, err, tt.wantPath)
			if !strings.Contains(fe.Error(), tt.wantMsg) {
				t.Errorf("message %q does not contain %q", fe.Error(), tt.wantMsg)
			}
		})
	}
}
