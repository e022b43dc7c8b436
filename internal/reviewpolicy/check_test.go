package reviewpolicy

import (
	"strings"
	"testing"
)

func TestCheckStructured(t *testing.T) {
	tests := []struct {
		name    string
		payload string
		wantErr string // "" means accepted
	}{
		{name: "legacy approval", payload: `{}`},
		{name: "free text", payload: `The plan misses tests.`},
		{name: "JSON list", payload: `[1, 2]`},
		{name: "structured approve", payload: `{"verdict": "approve"}`},
		{name: "structured reject with findings", payload: `{"verdict": "reject", "severity": "Major", "findings": ["no tests", {"severity": "Minor", "text": "typo"}]}`},
		{name: "status with summary", payload: `{"status": "NEEDS_REVISION: two gaps", "severity": "High"}`},
		{name: "unknown severity is the policy's business", payload: `{"verdict": "reject", "severity": "Catastrophic"}`},
		{name: "findings as one string", payload: `{"verdict": "reject", "findings": "no tests"}`},
		{name: "verdict unknown", payload: `{"verdict": "maybe"}`, wantErr: `field verdict is "maybe"`},
		{name: "verdict not a string", payload: `{"verdict": true}`, wantErr: "field verdict is true"},
		{name: "status unknown", payload: `{"status": "FINE"}`, wantErr: "field status is \"FINE\""},
		{name: "severity a number", payload: `{"verdict": "reject", "severity": 3}`, wantErr: "field severity is 3"},
		{name: "findings an object", payload: `{"verdict": "reject", "findings": {"a": 1}}`, wantErr: "field findings is"},
		{name: "a finding a number", payload: `{"verdict": "reject", "findings": ["ok", 7]}`, wantErr: "findings[1] is 7"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckStructured(tt.payload)
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("CheckStructured(%s) = %v, want accepted", tt.payload, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("CheckStructured(%s) = %v, want an error containing %q", tt.payload, err, tt.wantErr)
			}
		})
	}
}
