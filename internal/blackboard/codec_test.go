package blackboard_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
)

const (
	idA = "0b4e7c1a-2f3d-4e5f-8a9b-0c1d2e3f4a5b"
	idB = "1c5f8d2b-3a4e-4f60-9b0c-1d2e3f4a5b6c"
	idC = "2d6a9e3c-4b5f-4071-8c1d-2e3f4a5b6c7d"
	idD = "3e7b0f4d-5c60-4182-9d2e-3f4a5b6c7d8e"
)

// fullArtefact sets every field to a non-zero value.
func fullArtefact() *blackboard.Artefact {
	return &blackboard.Artefact{
		ID: idB, LogicalID: idA, Version: 2, StructuralType: blackboard.StructuralReview,
		Type: "CodeReview", Payload: "## Review\nLooks good: {\"ok\": true}\n",
		SourceArtefacts: []string{idA, idC}, ProducedByRole: "reviewer",
		ProducedByAgent: "reviewer-1", WorkflowID: idC, ClaimID: idD,
		Summary: "approved with one nit", Depth: 3, CreatedAtMs: 1732237000123,
		Metadata: map[string]string{"priority": "5", "attempt": "2", "vault": "secret/x"},
		Priority: 41,
	}
}

// minimalArtefact sets only what a record needs: empty lists and maps are
// nil (the canonical form).
func minimalArtefact() *blackboard.Artefact {
	return &blackboard.Artefact{
		ID: idA, LogicalID: idA, Version: 1, StructuralType: blackboard.StructuralStandard,
		Type: "GoalDefined", ProducedByRole: "user", WorkflowID: idA,
	}
}

func fullClaim() *blackboard.Claim {
	return &blackboard.Claim{
		ID: idA, ArtefactID: idB, WorkflowID: idC, Status: blackboard.ClaimTerminated,
		ExpectedBidders: []string{"coder", "reviewer-1"}, BidDeadlineMs: 1732237005000,
		GrantedReviewAgents: []string{"reviewer-1"}, GrantedParallelAgents: []string{"tester", "linter"},
		GrantedExclusiveAgent: "coder", AdditionalContextIDs: []string{idD},
		ParentClaimID: idD, FeedbackClaimID: idB, TerminationReason: "max iterations (3) reached",
		CompletionReason: "approved", Iteration: 2, Priority: -7, Attempts: 1, Rev: 9,
		CreatedAtMs: 1732237000123, UpdatedAtMs: 1732237009999,
	}
}

func minimalClaim() *blackboard.Claim {
	return &blackboard.Claim{ID: idA, ArtefactID: idB, WorkflowID: idC, Status: blackboard.ClaimPendingConsensus}
}

func fullWorkflow() *blackboard.Workflow {
	return &blackboard.Workflow{
		ID: idA, Goal: "build a calculator\nwith tests", Status: blackboard.WorkflowFailed, Priority: -3,
		ArtefactCount: 17, OpenItems: 2, StartedAtMs: 1732237000123, EndedAtMs: 1732237999999,
		Outcome: "max_workflow_artefacts (16) exceeded",
		Types:   []string{"GoalDefined", "Plan"}, Agents: []string{"planner", "reviewer-1"},
	}
}

func minimalWorkflow() *blackboard.Workflow {
	return &blackboard.Workflow{ID: idA, Status: blackboard.WorkflowRunning}
}

// jsonRoundTrip marshals v with encoding/json and unmarshals into a new T.
func jsonRoundTrip[T any](t *testing.T, v *T) *T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("unmarshal %s: %v", b, err)
	}
	return out
}

func TestArtefactRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		a    *blackboard.Artefact
	}{
		{"full", fullArtefact()},
		{"minimal", minimalArtefact()},
		{"empty payload and zero depth", func() *blackboard.Artefact { a := fullArtefact(); a.Payload, a.Depth = "", 0; return a }()},
		{"control characters and unicode", func() *blackboard.Artefact {
			a := minimalArtefact()
			a.Payload = "\x00ü€😀\n\t\u2028<&>"
			return a
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := blackboard.DecodeArtefact(blackboard.EncodeArtefact(tc.a))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.a) {
				t.Errorf("hash round trip:\n got %#v\nwant %#v", got, tc.a)
			}
			if j := jsonRoundTrip(t, tc.a); !reflect.DeepEqual(j, tc.a) {
				t.Errorf("JSON round trip:\n got %#v\nwant %#v", j, tc.a)
			}
		})
	}
}

func TestClaimRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		c    *blackboard.Claim
	}{
		{"full", fullClaim()},
		{"minimal", minimalClaim()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := blackboard.DecodeClaim(blackboard.EncodeClaim(tc.c))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.c) {
				t.Errorf("hash round trip:\n got %#v\nwant %#v", got, tc.c)
			}
			if j := jsonRoundTrip(t, tc.c); !reflect.DeepEqual(j, tc.c) {
				t.Errorf("JSON round trip:\n got %#v\nwant %#v", j, tc.c)
			}
		})
	}
}

func TestWorkflowRoundTrip(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		w    *blackboard.Workflow
	}{
		{"full", fullWorkflow()},
		{"minimal", minimalWorkflow()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := blackboard.DecodeWorkflow(blackboard.EncodeWorkflow(tc.w))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.w) {
				t.Errorf("hash round trip:\n got %#v\nwant %#v", got, tc.w)
			}
			if j := jsonRoundTrip(t, tc.w); !reflect.DeepEqual(j, tc.w) {
				t.Errorf("JSON round trip:\n got %#v\nwant %#v", j, tc.w)
			}
		})
	}
}

// TestEncodeIsReadable pins the stored form: plain text for scalars, JSON
// only for lists and the metadata object, and no field for empty optional
// values.
func TestEncodeIsReadable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		fields map[string]string
		want   map[string]string // field → exact stored value
		absent []string
	}{
		{
			name:   "artefact",
			fields: blackboard.EncodeArtefact(fullArtefact()),
			want: map[string]string{
				"id": idB, "logical_id": idA, "version": "2", "structural_type": "Review",
				"type": "CodeReview", "payload": fullArtefact().Payload,
				"source_artefacts": `["` + idA + `","` + idC + `"]`,
				"produced_by_role": "reviewer", "produced_by_agent": "reviewer-1",
				"workflow_id": idC, "claim_id": idD, "summary": "approved with one nit",
				"depth": "3", "created_at_ms": "1732237000123",
				"metadata": `{"attempt":"2","priority":"5","vault":"secret/x"}`,
				"priority": "41",
			},
		},
		{
			name:   "minimal artefact",
			fields: blackboard.EncodeArtefact(minimalArtefact()),
			want:   map[string]string{"version": "1", "depth": "0", "payload": ""},
			absent: []string{"source_artefacts", "metadata", "claim_id", "summary", "produced_by_agent"},
		},
		{
			name:   "claim",
			fields: blackboard.EncodeClaim(fullClaim()),
			want: map[string]string{
				"status": "terminated", "expected_bidders": `["coder","reviewer-1"]`,
				"granted_parallel_agents": `["tester","linter"]`, "granted_exclusive_agent": "coder",
				"additional_context_ids": `["` + idD + `"]`, "priority": "-7", "rev": "9",
				"bid_deadline_ms": "1732237005000", "termination_reason": "max iterations (3) reached",
			},
		},
		{
			name:   "minimal claim",
			fields: blackboard.EncodeClaim(minimalClaim()),
			want:   map[string]string{"status": "pending_consensus", "rev": "0", "iteration": "0", "attempts": "0"},
			absent: []string{"expected_bidders", "bid_deadline_ms", "granted_review_agents", "granted_exclusive_agent", "parent_claim_id"},
		},
		{
			name:   "workflow",
			fields: blackboard.EncodeWorkflow(fullWorkflow()),
			want:   map[string]string{"status": "failed", "open_items": "2", "artefact_count": "17", "goal": fullWorkflow().Goal},
		},
		{
			name:   "minimal workflow",
			fields: blackboard.EncodeWorkflow(minimalWorkflow()),
			want:   map[string]string{"status": "running", "open_items": "0"},
			absent: []string{"ended_at_ms", "outcome"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for f, want := range tc.want {
				if got, ok := tc.fields[f]; !ok || got != want {
					t.Errorf("field %s = %q (present %v), want %q", f, got, ok, want)
				}
			}
			for _, f := range tc.absent {
				if v, ok := tc.fields[f]; ok {
					t.Errorf("field %s = %q, want it absent", f, v)
				}
			}
		})
	}
}

var (
	bigPayloadOnce sync.Once
	bigPayload     string
)

// overPayload is one byte over MaxPayloadBytes, built once (64 MiB).
func overPayload() string {
	bigPayloadOnce.Do(func() { bigPayload = strings.Repeat("x", blackboard.MaxPayloadBytes+1) })
	return bigPayload
}

// jsonList renders n copies of s as a JSON array.
func jsonList(s string, n int) string {
	b, _ := json.Marshal(slicesRepeat(s, n))
	return string(b)
}

func slicesRepeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

type decodeCase struct {
	name  string
	field string // the field the error must name
	value *string
	// drop deletes the field instead of setting it.
	drop bool
}

func set(field, v string) decodeCase {
	return decodeCase{name: field + "=" + truncateName(v), field: field, value: &v}
}

func drop(field string) decodeCase {
	return decodeCase{name: "missing " + field, field: field, drop: true}
}

func truncateName(v string) string {
	if len(v) > 24 {
		return v[:12] + "…" + strconv.Itoa(len(v))
	}
	return v
}

// runDecodeErrors applies each case to a valid hash and checks that decode
// fails with ErrCorrupt naming the field.
func runDecodeErrors(t *testing.T, valid func() map[string]string, decode func(map[string]string) (any, error), cases []decodeCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := valid()
			if tc.drop {
				delete(m, tc.field)
			} else {
				m[tc.field] = *tc.value
			}
			got, err := decode(m)
			if !errors.Is(err, blackboard.ErrCorrupt) {
				t.Fatalf("got %v, %v; want an error wrapping ErrCorrupt", got, err)
			}
			if !reflect.ValueOf(got).IsNil() {
				t.Errorf("got a record %v with the error", got)
			}
			if !strings.Contains(err.Error(), strconv.Quote(tc.field)) {
				t.Errorf("error %q does not name field %q", truncateName(err.Error()), tc.field)
			}
		})
	}
}

func TestDecodeArtefactErrors(t *testing.T) {
	t.Parallel()
	cases := []decodeCase{
		drop("id"), drop("logical_id"), drop("version"), drop("structural_type"), drop("type"),
		drop("produced_by_role"), drop("workflow_id"), drop("created_at_ms"),
		set("type", ""), // empty counts as missing
		set("version", "two"), set("version", "1.5"), set("version", " 2"),
		set("version", "0"), set("version", "-1"), set("version", "9007199254740993"),
		set("version", strings.Repeat("1", 33)),
		set("depth", "-1"), set("depth", "x"),
		set("created_at_ms", "-5"), set("created_at_ms", "1e12"),
		set("id", "not-an-id"), set("logical_id", strings.ToUpper(idA)), set("workflow_id", idA+"\n"),
		set("claim_id", "c1"),
		set("source_artefacts", "not json"), set("source_artefacts", "[1,2]"),
		set("source_artefacts", `{"a":"b"}`), set("source_artefacts", `["nope"]`),
		set("source_artefacts", jsonList(idA, blackboard.MaxListLen+1)),
		set("metadata", "[1]"), set("metadata", `{"a":1}`), set("metadata", "nope"),
		set("payload", overPayload()),
		set("summary", strings.Repeat("s", blackboard.MaxFieldBytes+1)),
		set("type", strings.Repeat("t", blackboard.MaxFieldBytes+1)),
		set("metadata", `{"k":"`+strings.Repeat("m", blackboard.MaxFieldBytes)+`"}`),
		set("structural_type", "Bogus"), set("structural_type", "standard"),
	}
	runDecodeErrors(t, func() map[string]string { return blackboard.EncodeArtefact(fullArtefact()) },
		func(m map[string]string) (any, error) { return blackboard.DecodeArtefact(m) }, cases)
}

func TestDecodeClaimErrors(t *testing.T) {
	t.Parallel()
	cases := []decodeCase{
		drop("id"), drop("artefact_id"), drop("workflow_id"), drop("status"), drop("created_at_ms"),
		set("status", "bogus"), set("status", "Complete"),
		set("rev", "x"), set("rev", "-1"), set("iteration", "-1"), set("attempts", "1.0"),
		set("priority", "-3000000000"), set("bid_deadline_ms", "-1"), set("updated_at_ms", "99999999999999999999"),
		set("expected_bidders", "coder"), set("granted_review_agents", `[1]`),
		set("granted_parallel_agents", jsonList("a", blackboard.MaxListLen+1)),
		set("additional_context_ids", `["x"]`), set("parent_claim_id", "p"), set("feedback_claim_id", "f"),
		set("granted_exclusive_agent", strings.Repeat("a", blackboard.MaxFieldBytes+1)),
		set("termination_reason", strings.Repeat("r", blackboard.MaxFieldBytes+1)),
	}
	runDecodeErrors(t, func() map[string]string { return blackboard.EncodeClaim(fullClaim()) },
		func(m map[string]string) (any, error) { return blackboard.DecodeClaim(m) }, cases)
}

func TestDecodeWorkflowErrors(t *testing.T) {
	t.Parallel()
	cases := []decodeCase{
		drop("id"), drop("status"), drop("started_at_ms"),
		set("status", "done"), set("id", "w"), set("open_items", "x"), set("artefact_count", "-1"),
		set("priority", "-3000000000"), set("ended_at_ms", "soon"),
		set("goal", overPayload()), set("outcome", strings.Repeat("o", blackboard.MaxFieldBytes+1)),
	}
	runDecodeErrors(t, func() map[string]string { return blackboard.EncodeWorkflow(fullWorkflow()) },
		func(m map[string]string) (any, error) { return blackboard.DecodeWorkflow(m) }, cases)
}

// TestDecodeAtLimits accepts fields exactly at their size limits: the
// limits refuse only what is over them.
func TestDecodeAtLimits(t *testing.T) {
	t.Parallel()
	a := fullArtefact()
	a.Payload = strings.Repeat("p", blackboard.MaxPayloadBytes)
	a.Summary = strings.Repeat("s", blackboard.MaxFieldBytes)
	got, err := blackboard.DecodeArtefact(blackboard.EncodeArtefact(a))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, a) {
		t.Error("artefact at the size limits did not round-trip")
	}
	c := fullClaim()
	c.ExpectedBidders = slicesRepeat("a", blackboard.MaxListLen)
	gotC, err := blackboard.DecodeClaim(blackboard.EncodeClaim(c))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotC, c) {
		t.Error("claim with MaxListLen bidders did not round-trip")
	}
}

func TestDecodeEmptyIsNotFound(t *testing.T) {
	t.Parallel()
	decoders := []struct {
		name   string
		decode func(map[string]string) (any, error)
	}{
		{"artefact", func(m map[string]string) (any, error) { return blackboard.DecodeArtefact(m) }},
		{"claim", func(m map[string]string) (any, error) { return blackboard.DecodeClaim(m) }},
		{"workflow", func(m map[string]string) (any, error) { return blackboard.DecodeWorkflow(m) }},
	}
	for _, d := range decoders {
		for _, m := range []map[string]string{nil, {}} {
			got, err := d.decode(m)
			if !errors.Is(err, blackboard.ErrNotFound) || errors.Is(err, blackboard.ErrCorrupt) {
				t.Errorf("%s: decode(%v) error = %v, want ErrNotFound", d.name, m, err)
			}
			if !reflect.ValueOf(got).IsNil() {
				t.Errorf("%s: decode(%v) returned a record", d.name, m)
			}
		}
	}
}
