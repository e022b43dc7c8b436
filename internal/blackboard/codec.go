package blackboard

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/settdev/sett/internal/textcut"
)

// Size limits enforced when records are written and decoded, so that a
// corrupt or hostile hash can never make a reader allocate without bound.
const (
	// MaxPayloadBytes is the hard ceiling for an artefact payload; the
	// configured limit (orchestrator.max_payload_bytes) is usually lower.
	MaxPayloadBytes = 64 << 20
	// MaxFieldBytes bounds every other string field.
	MaxFieldBytes = 64 << 10
	// MaxListLen bounds every JSON list field (sources, grants, bidders).
	MaxListLen = 4096
)

// hashFields is a Redis hash as field/value pairs in a stable order.
type hashFields [][2]string

func (h *hashFields) str(name, v string) {
	if v != "" {
		*h = append(*h, [2]string{name, v})
	}
}

func (h *hashFields) always(name, v string) { *h = append(*h, [2]string{name, v}) }

func (h *hashFields) int(name string, v int64) {
	if v != 0 {
		*h = append(*h, [2]string{name, strconv.FormatInt(v, 10)})
	}
}

func (h *hashFields) list(name string, v []string) {
	if len(v) > 0 {
		b, _ := json.Marshal(v) // a []string always marshals
		*h = append(*h, [2]string{name, string(b)})
	}
}

func (h *hashFields) object(name string, v map[string]string) {
	if len(v) > 0 {
		b, _ := json.Marshal(v) // a map[string]string always marshals (sorted keys)
		*h = append(*h, [2]string{name, string(b)})
	}
}

func (h *hashFields) retries(name string, v map[string]RetryState) {
	if len(v) > 0 {
		b, _ := json.Marshal(v) // plain values always marshal (sorted keys)
		*h = append(*h, [2]string{name, string(b)})
	}
}

// args flattens the pairs for HSET or a script's ARGV.
func (h hashFields) args() []any {
	out := make([]any, 0, 2*len(h))
	for _, p := range h {
		out = append(out, p[0], p[1])
	}
	return out
}

// artefactFields encodes an artefact as a Redis hash: scalars as readable
// text, lists and the metadata object as JSON. created_at_ms is set by the
// create script from Redis TIME, so it is left out here.
func artefactFields(a *Artefact) hashFields {
	var h hashFields
	h.always("id", a.ID)
	h.always("logical_id", a.LogicalID)
	h.always("version", strconv.Itoa(a.Version))
	h.always("structural_type", string(a.StructuralType))
	h.always("type", a.Type)
	h.always("payload", a.Payload)
	h.list("source_artefacts", a.SourceArtefacts)
	h.always("produced_by_role", a.ProducedByRole)
	h.str("produced_by_agent", a.ProducedByAgent)
	h.always("workflow_id", a.WorkflowID)
	h.str("claim_id", a.ClaimID)
	h.str("summary", a.Summary)
	h.always("depth", strconv.Itoa(a.Depth))
	h.object("metadata", a.Metadata)
	h.int("priority", int64(a.Priority))
	h.str("memory", a.Memory)
	return h
}

// EncodeArtefact returns the hash fields stored for a, including
// created_at_ms. It is the exact inverse of DecodeArtefact.
func EncodeArtefact(a *Artefact) map[string]string {
	m := artefactFields(a).toMap()
	m["created_at_ms"] = strconv.FormatInt(a.CreatedAtMs, 10)
	return m
}

// DecodeArtefact decodes a stored artefact hash. It returns an error
// wrapping ErrCorrupt that names the bad field when a required field is
// missing, malformed or oversized.
func DecodeArtefact(m map[string]string) (*Artefact, error) {
	if len(m) == 0 {
		return nil, ErrNotFound
	}
	d := fieldDecoder{m: m, record: "artefact"}
	a := &Artefact{
		ID:              d.id("id", true),
		LogicalID:       d.id("logical_id", true),
		Version:         int(d.int("version", true, 1)),
		StructuralType:  StructuralType(d.str("structural_type", true)),
		Type:            d.str("type", true),
		Payload:         d.payload("payload"),
		SourceArtefacts: d.idList("source_artefacts"),
		ProducedByRole:  d.str("produced_by_role", true),
		ProducedByAgent: d.str("produced_by_agent", false),
		WorkflowID:      d.id("workflow_id", true),
		ClaimID:         d.id("claim_id", false),
		Summary:         d.str("summary", false),
		Depth:           int(d.int("depth", false, 0)),
		CreatedAtMs:     d.int("created_at_ms", true, 0),
		Metadata:        d.object("metadata"),
		Priority:        int(d.int("priority", false, -1<<31)),
		Memory:          d.str("memory", false),
	}
	if d.err == nil && !a.StructuralType.Valid() {
		d.fail("structural_type", "unknown value %q", a.StructuralType)
	}
	if d.err != nil {
		return nil, d.err
	}
	return a, nil
}

// claimFields encodes a claim's hash (every field, used on creation).
func claimFields(c *Claim) hashFields {
	var h hashFields
	h.always("id", c.ID)
	h.always("artefact_id", c.ArtefactID)
	h.always("workflow_id", c.WorkflowID)
	h.always("status", string(c.Status))
	h.list("expected_bidders", c.ExpectedBidders)
	h.int("bid_deadline_ms", c.BidDeadlineMs)
	h.str("artefact_type", c.ArtefactType)
	h.list("absent_consumers", c.AbsentConsumers)
	h.int("bid_rounds", int64(c.BidRounds))
	h.int("no_answer_since_ms", c.NoAnswerSinceMs)
	h.list("awaited_agents", c.AwaitedAgents)
	h.list("granted_review_agents", c.GrantedReviewAgents)
	h.list("granted_parallel_agents", c.GrantedParallelAgents)
	h.str("granted_exclusive_agent", c.GrantedExclusiveAgent)
	h.list("additional_context_ids", c.AdditionalContextIDs)
	h.str("kind", string(c.Kind))
	h.str("parent_claim_id", c.ParentClaimID)
	h.str("feedback_claim_id", c.FeedbackClaimID)
	h.str("termination_reason", c.TerminationReason)
	h.str("completion_reason", c.CompletionReason)
	h.always("iteration", strconv.Itoa(c.Iteration))
	h.always("priority", strconv.Itoa(c.Priority))
	h.always("attempts", strconv.Itoa(c.Attempts))
	h.int("handbacks", int64(c.HandBacks))
	h.always("rev", strconv.Itoa(c.Rev))
	h.always("created_at_ms", strconv.FormatInt(c.CreatedAtMs, 10))
	h.always("updated_at_ms", strconv.FormatInt(c.UpdatedAtMs, 10))
	h.retries("retries", c.Retries)
	h.str("review_decision", c.ReviewDecision)
	h.int("waiting_since_ms", c.WaitingSinceMs)
	h.str("waiting_reason", c.WaitingReason)
	h.int("approval_requested_at_ms", c.Approval.RequestedAtMs)
	h.int("approval_expires_at_ms", c.Approval.ExpiresAtMs)
	h.str("approval_decision", string(c.Approval.Decision))
	h.str("approval_by", c.Approval.By)
	h.str("approval_channel", string(c.Approval.Channel))
	h.str("approval_reason", c.Approval.Reason)
	h.int("approval_decided_at_ms", c.Approval.DecidedAtMs)
	return h
}

// EncodeClaim returns the hash fields stored for c. It is the exact inverse
// of DecodeClaim.
func EncodeClaim(c *Claim) map[string]string { return claimFields(c).toMap() }

// DecodeClaim decodes a stored claim hash; errors wrap ErrCorrupt and name
// the field.
func DecodeClaim(m map[string]string) (*Claim, error) {
	if len(m) == 0 {
		return nil, ErrNotFound
	}
	d := fieldDecoder{m: m, record: "claim"}
	c := &Claim{
		ID:                    d.id("id", true),
		ArtefactID:            d.id("artefact_id", true),
		WorkflowID:            d.id("workflow_id", true),
		Status:                ClaimStatus(d.str("status", true)),
		ExpectedBidders:       d.list("expected_bidders"),
		BidDeadlineMs:         d.int("bid_deadline_ms", false, 0),
		ArtefactType:          d.str("artefact_type", false),
		AbsentConsumers:       d.list("absent_consumers"),
		BidRounds:             int(d.int("bid_rounds", false, 0)),
		NoAnswerSinceMs:       d.int("no_answer_since_ms", false, 0),
		AwaitedAgents:         d.list("awaited_agents"),
		GrantedReviewAgents:   d.list("granted_review_agents"),
		GrantedParallelAgents: d.list("granted_parallel_agents"),
		GrantedExclusiveAgent: d.str("granted_exclusive_agent", false),
		AdditionalContextIDs:  d.idList("additional_context_ids"),
		Kind:                  ClaimKind(d.str("kind", false)),
		ParentClaimID:         d.id("parent_claim_id", false),
		FeedbackClaimID:       d.id("feedback_claim_id", false),
		TerminationReason:     d.str("termination_reason", false),
		CompletionReason:      d.str("completion_reason", false),
		Iteration:             int(d.int("iteration", false, 0)),
		Priority:              int(d.int("priority", false, -1<<31)),
		Attempts:              int(d.int("attempts", false, 0)),
		HandBacks:             int(d.int("handbacks", false, 0)),
		Rev:                   int(d.int("rev", false, 0)),
		CreatedAtMs:           d.int("created_at_ms", true, 0),
		UpdatedAtMs:           d.int("updated_at_ms", false, 0),
		Retries:               d.retries("retries"),
		ReviewDecision:        d.str("review_decision", false),
		WaitingSinceMs:        d.int("waiting_since_ms", false, 0),
		WaitingReason:         d.str("waiting_reason", false),
		Approval: ClaimApproval{
			RequestedAtMs: d.int("approval_requested_at_ms", false, 0),
			ExpiresAtMs:   d.int("approval_expires_at_ms", false, 0),
			Decision:      ApprovalDecision(d.str("approval_decision", false)),
			By:            d.str("approval_by", false),
			Channel:       DecisionChannel(d.str("approval_channel", false)),
			Reason:        d.str("approval_reason", false),
			DecidedAtMs:   d.int("approval_decided_at_ms", false, 0),
		},
	}
	if d.err == nil && !c.Status.Valid() {
		d.fail("status", "unknown value %q", c.Status)
	}
	if d.err == nil && !c.Kind.Valid() {
		d.fail("kind", "unknown value %q", c.Kind)
	}
	if d.err == nil && c.Approval.Decision != "" && !c.Approval.Decision.Valid() {
		d.fail("approval_decision", "unknown value %q", c.Approval.Decision)
	}
	if d.err == nil && c.Approval.Channel != "" && !c.Approval.Channel.Valid() {
		d.fail("approval_channel", "unknown value %q", c.Approval.Channel)
	}
	if d.err != nil {
		return nil, d.err
	}
	return c, nil
}

// EncodeWorkflow returns the hash fields stored for w; the exact inverse of
// DecodeWorkflow.
func EncodeWorkflow(w *Workflow) map[string]string {
	var h hashFields
	h.always("id", w.ID)
	h.always("goal", w.Goal)
	h.always("status", string(w.Status))
	h.always("priority", strconv.Itoa(w.Priority))
	h.always("artefact_count", strconv.Itoa(w.ArtefactCount))
	h.always("open_items", strconv.Itoa(w.OpenItems))
	h.always("started_at_ms", strconv.FormatInt(w.StartedAtMs, 10))
	h.int("ended_at_ms", w.EndedAtMs)
	h.str("outcome", w.Outcome)
	h.int("tokens", w.Tokens)
	for agent, n := range w.AgentTokens {
		h.int("tokens:"+agent, n)
	}
	for _, t := range w.Types {
		h.always("type:"+t, "1")
	}
	for _, a := range w.Agents {
		h.always("agent:"+a, "1")
	}
	return h.toMap()
}

// DecodeWorkflow decodes a stored workflow hash; errors wrap ErrCorrupt.
func DecodeWorkflow(m map[string]string) (*Workflow, error) {
	if len(m) == 0 {
		return nil, ErrNotFound
	}
	d := fieldDecoder{m: m, record: "workflow"}
	w := &Workflow{
		ID:            d.id("id", true),
		Goal:          d.payload("goal"),
		Status:        WorkflowStatus(d.str("status", true)),
		Priority:      int(d.int("priority", false, -1<<31)),
		ArtefactCount: int(d.int("artefact_count", false, 0)),
		OpenItems:     int(d.int("open_items", false, -1<<31)),
		StartedAtMs:   d.int("started_at_ms", true, 0),
		EndedAtMs:     d.int("ended_at_ms", false, 0),
		Outcome:       d.str("outcome", false),
		Tokens:        d.int("tokens", false, 0),
	}
	for k, v := range m {
		if agent, ok := strings.CutPrefix(k, "tokens:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				d.fail(k, "not a token count: %q", textcut.Bytes(v, 64))
				continue
			}
			if w.AgentTokens == nil {
				w.AgentTokens = map[string]int64{}
			}
			w.AgentTokens[agent] = n
		} else if t, ok := strings.CutPrefix(k, "type:"); ok {
			w.Types = append(w.Types, t)
		} else if a, ok := strings.CutPrefix(k, "agent:"); ok {
			w.Agents = append(w.Agents, a)
		}
	}
	sort.Strings(w.Types)
	sort.Strings(w.Agents)
	if d.err == nil && !w.Status.Valid() {
		d.fail("status", "unknown value %q", w.Status)
	}
	if d.err != nil {
		return nil, d.err
	}
	return w, nil
}

func (h hashFields) toMap() map[string]string {
	m := make(map[string]string, len(h))
	for _, p := range h {
		m[p[0]] = p[1]
	}
	return m
}

// fieldDecoder reads typed fields from a hash and keeps the first error.
type fieldDecoder struct {
	m      map[string]string
	record string
	err    error
}

func (d *fieldDecoder) fail(field, format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s field %q: %s", ErrCorrupt, d.record, field, fmt.Sprintf(format, args...))
	}
}

func (d *fieldDecoder) raw(field string, required bool, limit int) (string, bool) {
	v, ok := d.m[field]
	if !ok || v == "" {
		if required {
			d.fail(field, "missing")
		}
		return "", false
	}
	if len(v) > limit {
		d.fail(field, "%d bytes exceeds the limit of %d", len(v), limit)
		return "", false
	}
	return v, true
}

func (d *fieldDecoder) str(field string, required bool) string {
	v, _ := d.raw(field, required, MaxFieldBytes)
	return v
}

func (d *fieldDecoder) payload(field string) string {
	v, _ := d.raw(field, false, MaxPayloadBytes)
	return v
}

func (d *fieldDecoder) id(field string, required bool) string {
	v, ok := d.raw(field, required, MaxFieldBytes)
	if ok {
		if err := ValidateID(v); err != nil {
			d.fail(field, "%q is not a valid id", textcut.Bytes(v, 64))
			return ""
		}
	}
	return v
}

// int parses a decimal integer no smaller than min.
func (d *fieldDecoder) int(field string, required bool, min int64) int64 {
	v, ok := d.raw(field, required, 32)
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		d.fail(field, "%q is not an integer", textcut.Bytes(v, 32))
		return 0
	}
	if n < min || n > 1<<53 {
		d.fail(field, "%d is out of range", n)
		return 0
	}
	return n
}

func (d *fieldDecoder) list(field string) []string {
	v, ok := d.raw(field, false, MaxFieldBytes)
	if !ok {
		return nil
	}
	var out []string
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		d.fail(field, "not a JSON array of strings: %v", err)
		return nil
	}
	if len(out) > MaxListLen {
		d.fail(field, "%d entries exceed the limit of %d", len(out), MaxListLen)
		return nil
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (d *fieldDecoder) idList(field string) []string {
	out := d.list(field)
	for _, id := range out {
		if ValidateID(id) != nil {
			d.fail(field, "entry %q is not a valid id", textcut.Bytes(id, 64))
			return nil
		}
	}
	return out
}

func (d *fieldDecoder) retries(field string) map[string]RetryState {
	v, ok := d.raw(field, false, MaxFieldBytes)
	if !ok {
		return nil
	}
	var out map[string]RetryState
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		d.fail(field, "not a JSON object of retry states: %v", err)
		return nil
	}
	for agent, r := range out {
		if ValidateAgentName(agent) != nil || r.Failed < 0 || r.DueMs < 0 || (r.FailureID != "" && ValidateID(r.FailureID) != nil) {
			d.fail(field, "bad retry state of %q", textcut.Bytes(agent, 64))
			return nil
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (d *fieldDecoder) object(field string) map[string]string {
	v, ok := d.raw(field, false, MaxFieldBytes)
	if !ok {
		return nil
	}
	var out map[string]string
	if err := json.Unmarshal([]byte(v), &out); err != nil {
		d.fail(field, "not a JSON object of strings: %v", err)
		return nil
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// sortedKeys returns a map's keys in order, for deterministic output.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
