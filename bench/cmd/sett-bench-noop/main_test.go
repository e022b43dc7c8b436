package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/tool"
)

func TestModes(t *testing.T) {
	input := func(version int) string {
		b, _ := json.Marshal(map[string]any{"claim_id": "c", "target_artefact": map[string]any{"version": version}})
		return string(b)
	}
	for _, tc := range []struct {
		name, mode, stdin string
		claim             tool.ClaimType
		wantStructural    string
		wantPayload       string
	}{
		{"terminal carries the start time", "terminal", input(1), tool.ClaimTypeExclusive, "Terminal", "1234567890"},
		{"standard carries the start time", "standard", input(1), tool.ClaimTypeExclusive, "", "1234567890"},
		{"approval is {}", "review-approve", input(1), tool.ClaimTypeReview, "", "{}"},
		{"version 1 is rejected", "review-reject-v1", input(1), tool.ClaimTypeReview, "", `"verdict":"reject"`},
		{"version 2 is approved", "review-reject-v1", input(2), tool.ClaimTypeReview, "", "{}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			if code := run(1234567890, tc.mode, "BenchNoop", strings.NewReader(tc.stdin), &out); code != 0 {
				t.Fatalf("exit %d", code)
			}
			// The cub must accept it: the tool contract's own parser.
			o, err := tool.ParseOutput(out.Bytes(), tc.claim, 1<<20)
			if err != nil {
				t.Fatalf("output %s: %v", out.String(), err)
			}
			if o.StructuralType != tc.wantStructural || !strings.Contains(o.ArtefactPayload, tc.wantPayload) || o.ArtefactType != "BenchNoop" {
				t.Fatalf("output %+v", o)
			}
			if tc.wantPayload == "{}" && o.ArtefactPayload != "{}" {
				t.Fatalf("approval payload %q, want exactly {}", o.ArtefactPayload)
			}
		})
	}
	var out bytes.Buffer
	if code := run(1, "bogus", "T", strings.NewReader(""), &out); code != 2 {
		t.Fatalf("unknown mode: exit %d, want 2", code)
	}
	if code := run(1, "review-reject-v1", "T", strings.NewReader("not json"), &out); code != 1 {
		t.Fatalf("bad input: exit %d, want 1", code)
	}
}
