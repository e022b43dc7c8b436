package tool

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestClaimTypeValid(t *testing.T) {
	all := AllClaimTypes()
	want := []ClaimType{"review", "claim", "exclusive", "feedback", "learn"}
	if len(all) != len(want) {
		t.Fatalf("AllClaimTypes() = %v, want %v", all, want)
	}
	for i, ct := range all {
		if ct != want[i] || !ct.Valid() {
			t.Errorf("AllClaimTypes()[%d] = %q (Valid %v), want valid %q", i, ct, ct.Valid(), want[i])
		}
	}
	for _, bad := range []ClaimType{"", "Review", "ignore", "parallel"} {
		if bad.Valid() {
			t.Errorf("ClaimType(%q).Valid() = true", bad)
		}
	}
}

func TestInputJSON(t *testing.T) {
	tests := []struct {
		name  string
		input Input
		want  string
	}{
		{
			name:  "empty lists and maps are never null",
			input: Input{ClaimID: "c1", ClaimType: ClaimTypeClaim, Instance: "dev", Agent: "coder"},
			want: `{"claim_id":"c1","claim_type":"claim",` +
				`"target_artefact":{"id":"","logical_id":"","version":0,"structural_type":"","type":"","payload":"",` +
				`"source_artefacts":[],"produced_by_role":"","workflow_id":"","created_at_ms":0},` +
				`"context_chain":[],"feedback":[],` +
				`"workflow":{"id":"","goal":"","iteration":0,"priority":0},` +
				`"memory":{"shared":"","upstream":{}},"instance":"dev","agent":"coder"}`,
		},
		{
			name: "every field",
			input: Input{
				ClaimID:   "c2",
				ClaimType: ClaimTypeFeedback,
				TargetArtefact: Artefact{
					ID: "a2", LogicalID: "a1", Version: 2, StructuralType: "Standard", Type: "CodeCommit",
					Payload: "abc", SourceArtefacts: []string{"g"}, ProducedByRole: "coder", WorkflowID: "g",
					ClaimID: "c1", Summary: "first try", CreatedAtMs: 1700000000000, Metadata: map[string]string{"attempt": "1"},
				},
				ContextChain: []Artefact{{ID: "g", LogicalID: "g", Version: 1, Type: "GoalDefined", WorkflowID: "g"}},
				Feedback:     []Artefact{{ID: "r", LogicalID: "r", Version: 1, StructuralType: "Review", Type: "CodeReview"}},
				Workflow:     Workflow{ID: "g", Goal: "Add /health", Iteration: 2, Priority: 5},
				Memory:       Memory{Shared: "s", Learnings: "l", Handbook: "h", Upstream: map[string]string{"planner": "p"}},
				Instance:     "dev",
				Agent:        "coder",
			},
			want: `{"claim_id":"c2","claim_type":"feedback",` +
				`"target_artefact":{"id":"a2","logical_id":"a1","version":2,"structural_type":"Standard","type":"CodeCommit",` +
				`"payload":"abc","source_artefacts":["g"],"produced_by_role":"coder","workflow_id":"g","claim_id":"c1",` +
				`"summary":"first try","created_at_ms":1700000000000,"metadata":{"attempt":"1"}},` +
				`"context_chain":[{"id":"g","logical_id":"g","version":1,"structural_type":"","type":"GoalDefined","payload":"",` +
				`"source_artefacts":[],"produced_by_role":"","workflow_id":"g","created_at_ms":0}],` +
				`"feedback":[{"id":"r","logical_id":"r","version":1,"structural_type":"Review","type":"CodeReview","payload":"",` +
				`"source_artefacts":[],"produced_by_role":"","workflow_id":"","created_at_ms":0}],` +
				`"workflow":{"id":"g","goal":"Add /health","iteration":2,"priority":5},` +
				`"memory":{"shared":"s","learnings":"l","handbook":"h","upstream":{"planner":"p"}},"instance":"dev","agent":"coder"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, v := range []any{tt.input, &tt.input} {
				got, err := json.Marshal(v)
				if err != nil {
					t.Fatalf("json.Marshal(%T) error = %v", v, err)
				}
				if string(got) != tt.want {
					t.Errorf("json.Marshal(%T) =\n%s\nwant\n%s", v, got, tt.want)
				}
			}
		})
	}
}

func TestInputRoundTrip(t *testing.T) {
	in := Input{ClaimID: "c", ClaimType: ClaimTypeReview, ContextChain: []Artefact{{ID: "x", SourceArtefacts: []string{"y"}}}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var back Input
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&back); err != nil {
		t.Fatalf("decoding %s: %v", b, err)
	}
	if back.ClaimID != "c" || back.ClaimType != ClaimTypeReview || len(back.ContextChain) != 1 ||
		back.ContextChain[0].SourceArtefacts[0] != "y" || back.Memory.Upstream == nil {
		t.Errorf("round trip gave %+v", back)
	}
}

// TestWireInputMatchesInput: the one-pass encoding's struct has Input's
// fields, in order, with the same JSON names, so that nothing a tool reads
// can go missing from it.
func TestWireInputMatchesInput(t *testing.T) {
	in, w := reflect.TypeOf(Input{}), reflect.TypeOf(wireInput{})
	if in.NumField() != w.NumField() {
		t.Fatalf("Input has %d fields, wireInput %d", in.NumField(), w.NumField())
	}
	for i := range in.NumField() {
		a, b := in.Field(i), w.Field(i)
		if a.Name != b.Name || a.Tag != b.Tag {
			t.Errorf("field %d: Input has %s %q, wireInput %s %q", i, a.Name, a.Tag, b.Name, b.Tag)
		}
	}
}
