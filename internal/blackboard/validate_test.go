package blackboard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
)

// manyIDs returns n distinct valid ids.
func manyIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = blackboard.DeriveID("test-source", strings.Repeat("x", i))
	}
	return out
}

func TestValidateArtefact(t *testing.T) {
	t.Parallel()
	const maxPayload = 1000
	valid := func() *blackboard.Artefact {
		return &blackboard.Artefact{
			ID: idB, LogicalID: idB, Version: 1, WorkflowID: idA,
			StructuralType: blackboard.StructuralStandard, Type: "CodeCommit", Payload: "abc",
			SourceArtefacts: []string{idA}, ProducedByRole: "coder", ProducedByAgent: "coder-1",
			ClaimID: idC, Summary: "s", Depth: 1, Metadata: map[string]string{"attempt": "1"},
		}
	}
	cases := []struct {
		name   string
		mutate func(a *blackboard.Artefact)
		// field is what the error must mention; "" means the artefact is valid.
		field string
	}{
		{"valid child", func(a *blackboard.Artefact) {}, ""},
		{"valid goal", func(a *blackboard.Artefact) {
			a.ID, a.LogicalID, a.WorkflowID, a.ClaimID, a.SourceArtefacts = idA, idA, idA, "", nil
		}, ""},
		{"valid v2", func(a *blackboard.Artefact) { a.LogicalID, a.Version = idD, 2 }, ""},
		{"valid without claim", func(a *blackboard.Artefact) { a.ClaimID = "" }, ""},
		{"payload at the limit", func(a *blackboard.Artefact) { a.Payload = strings.Repeat("p", maxPayload) }, ""},
		{"type at 128", func(a *blackboard.Artefact) { a.Type = strings.Repeat("T", 128) }, ""},
		{"role at 128", func(a *blackboard.Artefact) { a.ProducedByRole = strings.Repeat("r", 128) }, ""},
		{"summary at 1024", func(a *blackboard.Artefact) { a.Summary = strings.Repeat("s", 1024) }, ""},
		{"depth 0", func(a *blackboard.Artefact) { a.Depth = 0 }, ""},
		{"bad id", func(a *blackboard.Artefact) { a.ID = "x" }, "id"},
		{"bad logical_id", func(a *blackboard.Artefact) { a.LogicalID = strings.ToUpper(idB) }, "logical_id"},
		{"bad workflow_id", func(a *blackboard.Artefact) { a.WorkflowID = "" }, "workflow_id"},
		{"bad claim_id", func(a *blackboard.Artefact) { a.ClaimID = "c1" }, "claim_id"},
		{"version 0", func(a *blackboard.Artefact) { a.Version = 0 }, "version 0"},
		{"negative version", func(a *blackboard.Artefact) { a.Version = -1 }, "version -1"},
		{"v1 continuing a thread", func(a *blackboard.Artefact) { a.LogicalID = idD }, "version 1"},
		{"v2 starting a thread", func(a *blackboard.Artefact) { a.Version = 2 }, "version 2"},
		{"unknown structural type", func(a *blackboard.Artefact) { a.StructuralType = "Bogus" }, "structural_type"},
		{"empty structural type", func(a *blackboard.Artefact) { a.StructuralType = "" }, "structural_type"},
		{"empty type", func(a *blackboard.Artefact) { a.Type = "" }, "type"},
		{"type over 128", func(a *blackboard.Artefact) { a.Type = strings.Repeat("T", 129) }, "type"},
		{"type with a space", func(a *blackboard.Artefact) { a.Type = "Code Commit" }, "type"},
		{"type with a tab", func(a *blackboard.Artefact) { a.Type = "Code\tCommit" }, "type"},
		{"type with a newline", func(a *blackboard.Artefact) { a.Type = "Code\nCommit" }, "type"},
		{"empty role", func(a *blackboard.Artefact) { a.ProducedByRole = "" }, "produced_by_role"},
		{"role over 128", func(a *blackboard.Artefact) { a.ProducedByRole = strings.Repeat("r", 129) }, "produced_by_role"},
		{"payload over the limit", func(a *blackboard.Artefact) { a.Payload = strings.Repeat("p", maxPayload+1) }, "payload"},
		{"summary over 1024", func(a *blackboard.Artefact) { a.Summary = strings.Repeat("s", 1025) }, "summary"},
		{"too many sources", func(a *blackboard.Artefact) { a.SourceArtefacts = manyIDs(blackboard.MaxListLen + 1) }, "source"},
		{"negative depth", func(a *blackboard.Artefact) { a.Depth = -1 }, "depth"},
		{"goal that is not claimable", func(a *blackboard.Artefact) {
			a.ID, a.LogicalID, a.WorkflowID, a.StructuralType = idA, idA, idA, blackboard.StructuralReview
		}, "goal"},
		{"bad source id", func(a *blackboard.Artefact) { a.SourceArtefacts = []string{idA, "nope"} }, "source_artefacts"},
		{"metadata over the field limit", func(a *blackboard.Artefact) {
			a.Metadata = map[string]string{"big": strings.Repeat("m", blackboard.MaxFieldBytes)}
		}, "metadata"},
		// The stored source list must stay decodable: 2000 ids are under
		// MaxListLen but their JSON is over MaxFieldBytes.
		{"source list over the field limit", func(a *blackboard.Artefact) { a.SourceArtefacts = manyIDs(2000) }, "source_artefacts"},
		{"agent over the field limit", func(a *blackboard.Artefact) {
			a.ProducedByAgent = strings.Repeat("a", blackboard.MaxFieldBytes+1)
		}, "produced_by_agent"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a := valid()
			tc.mutate(a)
			err := blackboard.ValidateArtefact(a, maxPayload)
			if tc.field == "" {
				if err != nil {
					t.Fatalf("got %v, want valid", err)
				}
				// What validation accepts must be readable once stored.
				if _, err := blackboard.DecodeArtefact(blackboard.EncodeArtefact(a)); err != nil {
					t.Fatalf("valid artefact does not decode: %v", err)
				}
				return
			}
			if !errors.Is(err, blackboard.ErrInvalid) {
				t.Fatalf("got %v, want an error wrapping ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("error %q does not mention %q", err, tc.field)
			}
		})
	}
}
