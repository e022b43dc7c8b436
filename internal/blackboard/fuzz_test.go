package blackboard_test

import (
	"errors"
	"reflect"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
)

// fuzzHash builds a hash from fuzzed values; bit i of drop removes field i,
// so the fuzzer also explores missing fields.
func fuzzHash(names []string, drop uint32, values ...string) map[string]string {
	m := make(map[string]string, len(names))
	for i, name := range names {
		if drop&(1<<i) == 0 {
			m[name] = values[i]
		}
	}
	return m
}

// checkDecoded asserts the decode contract for any input: an error wraps
// ErrCorrupt or ErrNotFound and comes without a record; a record encodes
// and decodes back to itself.
func checkDecoded[T any](t *testing.T, in map[string]string, got *T, err error,
	encode func(*T) map[string]string, decode func(map[string]string) (*T, error), valid func(*T) error) {
	t.Helper()
	if err != nil {
		if !errors.Is(err, blackboard.ErrCorrupt) && !errors.Is(err, blackboard.ErrNotFound) {
			t.Fatalf("decode(%q): error %v wraps neither ErrCorrupt nor ErrNotFound", in, err)
		}
		if got != nil {
			t.Fatalf("decode(%q): record %+v returned with error %v", in, got, err)
		}
		return
	}
	if got == nil {
		t.Fatalf("decode(%q): nil record without an error", in)
	}
	if err := valid(got); err != nil {
		t.Fatalf("decode(%q) accepted an invalid record: %v", in, err)
	}
	again, err := decode(encode(got))
	if err != nil {
		t.Fatalf("re-decode of %+v: %v", got, err)
	}
	if !reflect.DeepEqual(again, got) {
		t.Fatalf("re-encode changed the record:\n got %+v\nwant %+v", again, got)
	}
}

var artefactFuzzFields = []string{
	"id", "logical_id", "version", "structural_type", "type", "payload", "source_artefacts",
	"produced_by_role", "produced_by_agent", "workflow_id", "claim_id", "summary", "depth",
	"created_at_ms", "metadata",
}

func FuzzDecodeArtefact(f *testing.F) {
	// A method value: vet checks direct f.Add calls against the fuzz
	// target's arity and cannot count a spread slice.
	seed := f.Add
	add := func(drop uint32, a *blackboard.Artefact) {
		m := blackboard.EncodeArtefact(a)
		v := make([]any, 0, 1+len(artefactFuzzFields))
		v = append(v, drop)
		for _, name := range artefactFuzzFields {
			v = append(v, m[name])
		}
		seed(v...)
	}
	add(0, fullArtefact())
	add(0, minimalArtefact())
	add(1<<2, fullArtefact())          // no version
	add(1<<0|1<<13, minimalArtefact()) // no id, no created_at_ms
	add(1<<15-1, fullArtefact())       // nothing at all
	f.Add(uint32(0), idA, idA, "+1", "Standard", "T", "", "null", "r", "", idA, "", "", "-0", "007", "{}")
	f.Add(uint32(0), idA, idA, "1", "Answer", "T", "p", "[]", "r", "a", idA, idB, "s", "0", "1", `{"a":"\ud800"}`)
	f.Add(uint32(0), idA, idA, "9007199254740992", "Failure", "T", "p", `["`+idB+`",`, "r", "", idA, "", "", "1", "1", `{"a":null}`)

	f.Fuzz(func(t *testing.T, drop uint32, id, logicalID, version, structural, typ, payload, sources,
		role, agent, workflow, claim, summary, depth, created, metadata string) {
		in := fuzzHash(artefactFuzzFields, drop, id, logicalID, version, structural, typ, payload, sources,
			role, agent, workflow, claim, summary, depth, created, metadata)
		a, err := blackboard.DecodeArtefact(in)
		checkDecoded(t, in, a, err, blackboard.EncodeArtefact, blackboard.DecodeArtefact, func(a *blackboard.Artefact) error {
			for _, id := range append([]string{a.ID, a.LogicalID, a.WorkflowID}, a.SourceArtefacts...) {
				if err := blackboard.ValidateID(id); err != nil {
					return err
				}
			}
			switch {
			case !a.StructuralType.Valid():
				return errors.New("unknown structural type")
			case a.Version < 1 || a.Depth < 0 || a.CreatedAtMs < 0:
				return errors.New("negative number")
			case a.Type == "" || a.ProducedByRole == "":
				return errors.New("empty required field")
			case a.SourceArtefacts != nil && len(a.SourceArtefacts) == 0, a.Metadata != nil && len(a.Metadata) == 0:
				return errors.New("empty list or map is not nil")
			}
			return nil
		})
	})
}

var claimFuzzFields = []string{
	"id", "artefact_id", "workflow_id", "status", "expected_bidders", "bid_deadline_ms",
	"granted_review_agents", "granted_parallel_agents", "granted_exclusive_agent",
	"additional_context_ids", "parent_claim_id", "feedback_claim_id", "termination_reason",
	"completion_reason", "iteration", "priority", "attempts", "rev", "created_at_ms", "updated_at_ms",
}

func FuzzDecodeClaim(f *testing.F) {
	seed := f.Add // see FuzzDecodeArtefact
	add := func(drop uint32, c *blackboard.Claim) {
		m := blackboard.EncodeClaim(c)
		v := make([]any, 0, 1+len(claimFuzzFields))
		v = append(v, drop)
		for _, name := range claimFuzzFields {
			v = append(v, m[name])
		}
		seed(v...)
	}
	add(0, fullClaim())
	add(0, minimalClaim())
	add(1<<3, fullClaim())       // no status
	add(1<<20-1, minimalClaim()) // nothing at all
	f.Add(uint32(0), idA, idB, idC, "complete", "[]", "0", "null", `["a","a"]`, "", `[]`, "", "", "", "", "+3", "-2147483648", "0", "00", "1", "")
	f.Add(uint32(0), idA, idB, idC, "pending_review", `["\u00e9"]`, "1", `[""]`, "[", "x", `["`+idA+`"]`, idB, idC, "r", "c", "1", "1", "1", "1", "1", "1")

	f.Fuzz(func(t *testing.T, drop uint32, id, artefact, workflow, status, bidders, deadline, review, parallel,
		exclusive, context, parent, feedback, termination, completion, iteration, priority, attempts, rev,
		created, updated string) {
		in := fuzzHash(claimFuzzFields, drop, id, artefact, workflow, status, bidders, deadline, review, parallel,
			exclusive, context, parent, feedback, termination, completion, iteration, priority, attempts, rev,
			created, updated)
		c, err := blackboard.DecodeClaim(in)
		checkDecoded(t, in, c, err, blackboard.EncodeClaim, blackboard.DecodeClaim, func(c *blackboard.Claim) error {
			for _, id := range append([]string{c.ID, c.ArtefactID, c.WorkflowID}, c.AdditionalContextIDs...) {
				if err := blackboard.ValidateID(id); err != nil {
					return err
				}
			}
			switch {
			case !c.Status.Valid():
				return errors.New("unknown status")
			case c.Rev < 0 || c.Iteration < 0 || c.Attempts < 0 || c.CreatedAtMs < 0:
				return errors.New("negative number")
			case c.ExpectedBidders != nil && len(c.ExpectedBidders) == 0:
				return errors.New("empty list is not nil")
			}
			return nil
		})
	})
}
