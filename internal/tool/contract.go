package tool

import "encoding/json"

// ClaimType says which kind of grant a tool is run for. Its values are the
// strings a tool sees in Input.ClaimType.
type ClaimType string

// The claim types, in the order of the phases that grant them.
const (
	// ClaimTypeReview asks the tool to review the target artefact.
	ClaimTypeReview ClaimType = "review"
	// ClaimTypeClaim is a parallel grant: several agents work on the target.
	ClaimTypeClaim ClaimType = "claim"
	// ClaimTypeExclusive is a grant that only this agent holds.
	ClaimTypeExclusive ClaimType = "exclusive"
	// ClaimTypeFeedback asks the author to rework the target after reviews;
	// the reviews are in Input.Feedback.
	ClaimTypeFeedback ClaimType = "feedback"
	// ClaimTypeLearn asks the orchestrator's learner agent to turn a human
	// rejection into one concise learning: the target is the
	// rejected artefact, Input.Feedback holds the human's rejection (its
	// payload is the reason) and Memory.Learnings the current memory. The
	// answer's payload is the learning text.
	ClaimTypeLearn ClaimType = "learn"
)

// AllClaimTypes returns every valid ClaimType in phase order. The slice is
// new on each call.
func AllClaimTypes() []ClaimType {
	return []ClaimType{ClaimTypeReview, ClaimTypeClaim, ClaimTypeExclusive, ClaimTypeFeedback, ClaimTypeLearn}
}

// Valid reports whether t is one of AllClaimTypes. The zero value is not
// valid.
func (t ClaimType) Valid() bool {
	switch t {
	case ClaimTypeReview, ClaimTypeClaim, ClaimTypeExclusive, ClaimTypeFeedback, ClaimTypeLearn:
		return true
	}
	return false
}

// Artefact is what a tool sees of an artefact on the blackboard: the target of
// its claim, a link of its context chain or a review it must address.
//
// A nil SourceArtefacts is encoded as [] so that tools never see null where
// they expect a list.
type Artefact struct {
	ID              string            `json:"id"`
	LogicalID       string            `json:"logical_id"`
	Version         int               `json:"version"`
	StructuralType  string            `json:"structural_type"`
	Type            string            `json:"type"`
	Payload         string            `json:"payload"`
	SourceArtefacts []string          `json:"source_artefacts"`
	ProducedByRole  string            `json:"produced_by_role"`
	WorkflowID      string            `json:"workflow_id"`
	ClaimID         string            `json:"claim_id,omitempty"`
	Summary         string            `json:"summary,omitempty"`
	CreatedAtMs     int64             `json:"created_at_ms"`
	Metadata        map[string]string `json:"metadata,omitempty"`
	// Priority is a goal's priority score (omitted on other artefacts
	// and on goals scored 0); the goal's metadata keeps what was written.
	Priority int `json:"priority,omitempty"`
	// ProducedByAgent is the agent that wrote it ("" for goals and the
	// orchestrator's artefacts); memory.upstream is keyed by it.
	ProducedByAgent string `json:"produced_by_agent,omitempty"`
	// PayloadOmitted is true when the payload was left out because its
	// author's compact memory (memory.upstream[ProducedByAgent]) stands
	// for it: read the memory first, as the memory and review design asks.
	PayloadOmitted bool `json:"payload_omitted,omitempty"`
	// PayloadBytes and Sections, on an artefact whose payload was
	// omitted, are the omitted payload's size and the sections a tool can
	// fetch with `sett-read ID#section` (a JSON object's top-level keys,
	// or Markdown headings); `sett-read ID` fetches the whole payload.
	PayloadBytes int      `json:"payload_bytes,omitempty"`
	Sections     []string `json:"sections,omitempty"`
}

// MarshalJSON encodes a nil SourceArtefacts as [].
func (a Artefact) MarshalJSON() ([]byte, error) {
	type plain Artefact // plain has no methods, so this does not recurse
	p := plain(a)
	if p.SourceArtefacts == nil {
		p.SourceArtefacts = []string{}
	}
	return json.Marshal(p)
}

// Workflow is what a tool sees of the workflow its claim belongs to.
type Workflow struct {
	ID        string `json:"id"`
	Goal      string `json:"goal"`
	Iteration int    `json:"iteration"`
	Priority  int    `json:"priority"`
}

// Memory is the memory handed to a tool (§10 of the spec): the workflow's
// shared memory, the learnings from human rejections (Agent_Memory.md as
// the human left it), the human's rules of engagement
// (Company_Handbook.md), and the compact memories of upstream agents keyed
// by agent name.
//
// A nil Upstream is encoded as {}; empty Learnings and Handbook are left
// out, as the memory contract says ("omitted when missing or empty").
type Memory struct {
	Shared    string            `json:"shared"`
	Learnings string            `json:"learnings,omitempty"`
	Handbook  string            `json:"handbook,omitempty"`
	Upstream  map[string]string `json:"upstream"`
}

// MarshalJSON encodes a nil Upstream as {}.
func (m Memory) MarshalJSON() ([]byte, error) {
	type plain Memory
	p := plain(m)
	if p.Upstream == nil {
		p.Upstream = map[string]string{}
	}
	return json.Marshal(p)
}

// Input is the one JSON document the cub writes on a tool's stdin. Encode it
// with json.Marshal: nil ContextChain and Feedback are encoded as [], so a
// tool can always iterate over them.
type Input struct {
	ClaimID        string     `json:"claim_id"`
	ClaimType      ClaimType  `json:"claim_type"`
	TargetArtefact Artefact   `json:"target_artefact"`
	ContextChain   []Artefact `json:"context_chain"`
	Feedback       []Artefact `json:"feedback"`
	Workflow       Workflow   `json:"workflow"`
	Memory         Memory     `json:"memory"`
	Instance       string     `json:"instance"`
	Agent          string     `json:"agent"`
}

// MarshalJSON encodes nil ContextChain and Feedback as []. It encodes the
// whole document in one pass of encoding/json: the artefacts and the
// memory go in as method-less copies, because json.Marshal re-scans (and
// compacts) every byte a nested MarshalJSON returns, and a tool input
// carries the context chain's payloads.
func (in Input) MarshalJSON() ([]byte, error) {
	w := wireInput{ClaimID: in.ClaimID, ClaimType: in.ClaimType, TargetArtefact: wire(in.TargetArtefact),
		ContextChain: wireAll(in.ContextChain), Feedback: wireAll(in.Feedback), Workflow: in.Workflow,
		Memory: wireMemory(in.Memory), Instance: in.Instance, Agent: in.Agent}
	if w.Memory.Upstream == nil {
		w.Memory.Upstream = map[string]string{}
	}
	return json.Marshal(w)
}

// wireInput is Input with method-less artefacts and memory (see
// Input.MarshalJSON); its fields and tags must stay Input's
// (TestWireInputMatchesInput).
type wireInput struct {
	ClaimID        string         `json:"claim_id"`
	ClaimType      ClaimType      `json:"claim_type"`
	TargetArtefact wireArtefact   `json:"target_artefact"`
	ContextChain   []wireArtefact `json:"context_chain"`
	Feedback       []wireArtefact `json:"feedback"`
	Workflow       Workflow       `json:"workflow"`
	Memory         wireMemory     `json:"memory"`
	Instance       string         `json:"instance"`
	Agent          string         `json:"agent"`
}

// wireArtefact and wireMemory have their originals' fields and tags but
// not their MarshalJSON methods.
type (
	wireArtefact Artefact
	wireMemory   Memory
)

// wire is a's method-less copy, with a nil SourceArtefacts as [].
func wire(a Artefact) wireArtefact {
	if a.SourceArtefacts == nil {
		a.SourceArtefacts = []string{}
	}
	return wireArtefact(a)
}

// wireAll copies arts with wire; nil becomes [].
func wireAll(arts []Artefact) []wireArtefact {
	out := make([]wireArtefact, len(arts))
	for i, a := range arts {
		out[i] = wire(a)
	}
	return out
}
