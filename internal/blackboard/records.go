package blackboard

import (
	"strings"
	"unicode/utf8"
)

// Artefact is an immutable record on the blackboard: a goal, a piece of
// work, a review or a failure. Once written it is never modified; a change
// is a new version in the same thread (same LogicalID, Version+1).
//
// Empty lists are nil and empty maps are nil: that is the canonical form the
// hash and JSON encodings round-trip exactly.
type Artefact struct {
	ID              string            `json:"id"`
	LogicalID       string            `json:"logical_id"`
	Version         int               `json:"version"`
	StructuralType  StructuralType    `json:"structural_type"`
	Type            string            `json:"type"`
	Payload         string            `json:"payload"`
	SourceArtefacts []string          `json:"source_artefacts,omitempty"`
	ProducedByRole  string            `json:"produced_by_role"`
	ProducedByAgent string            `json:"produced_by_agent,omitempty"`
	WorkflowID      string            `json:"workflow_id"`
	ClaimID         string            `json:"claim_id,omitempty"`
	Summary         string            `json:"summary,omitempty"`
	Depth           int               `json:"depth"`
	CreatedAtMs     int64             `json:"created_at_ms"`
	Metadata        map[string]string `json:"metadata,omitempty"`
	// Priority is a goal's priority score: its workflow's and its claims'
	// order when grants wait (higher first). Only goals carry one; the
	// goal's Metadata keeps what the person wrote ("priority": "high").
	Priority int `json:"priority,omitempty"`
	// Memory is the producing agent's compact memory for this result
	//, as validated JSON; empty when the tool returned none.
	Memory string `json:"memory,omitempty"`
}

// IsGoal reports whether the artefact starts its own workflow.
func (a *Artefact) IsGoal() bool { return a.ID != "" && a.ID == a.WorkflowID }

// Claim is the unit of coordination for one artefact: who was asked to bid,
// who was granted what, and how it ended. It changes only through
// compare-and-set transitions on Status and Rev.
type Claim struct {
	ID              string      `json:"id"`
	ArtefactID      string      `json:"artefact_id"`
	WorkflowID      string      `json:"workflow_id"`
	Status          ClaimStatus `json:"status"`
	ExpectedBidders []string    `json:"expected_bidders,omitempty"`
	BidDeadlineMs   int64       `json:"bid_deadline_ms,omitempty"`
	// ArtefactType is the claimed artefact's type, recorded at creation
	// so that consensus can word its outcome without reading the
	// artefact ("" on claims stored before it existed).
	ArtefactType string `json:"artefact_type,omitempty"`
	// AbsentConsumers are the configured agents that could take the
	// artefact but were not alive when the claim was created (they were
	// not asked); consensus waits for them when their answer is needed.
	// An absent agent asked later joins ExpectedBidders and stays here.
	AbsentConsumers []string `json:"absent_consumers,omitempty"`
	// BidRounds counts the bid requests sent again because configured
	// consumers had not answered; NoAnswerSinceMs is when the first such
	// round started (zero: consensus never waited past its deadline).
	BidRounds       int   `json:"bid_rounds,omitempty"`
	NoAnswerSinceMs int64 `json:"no_answer_since_ms,omitempty"`
	// AwaitedAgents are the agents the last round asked again for: the
	// configured agents whose answer consensus still needs.
	AwaitedAgents         []string `json:"awaited_agents,omitempty"`
	GrantedReviewAgents   []string `json:"granted_review_agents,omitempty"`
	GrantedParallelAgents []string `json:"granted_parallel_agents,omitempty"`
	GrantedExclusiveAgent string   `json:"granted_exclusive_agent,omitempty"`
	AdditionalContextIDs  []string `json:"additional_context_ids,omitempty"`
	// Kind is "" for a regular claim, "feedback" for a rework and "learn"
	// for a learner's claim; claims stored before kinds existed have ""
	// and a ParentClaimID when they are feedback claims.
	Kind              ClaimKind `json:"kind,omitempty"`
	ParentClaimID     string    `json:"parent_claim_id,omitempty"`
	FeedbackClaimID   string    `json:"feedback_claim_id,omitempty"`
	TerminationReason string    `json:"termination_reason,omitempty"`
	CompletionReason  string    `json:"completion_reason,omitempty"`
	Iteration         int       `json:"iteration"`
	Priority          int       `json:"priority"`
	Attempts          int       `json:"attempts"`
	// HandBacks counts the grants draining cubs gave back unfinished;
	// they are granted again without counting an attempt (bounded, see
	// the orchestrator's lease check).
	HandBacks   int   `json:"handbacks,omitempty"`
	Rev         int   `json:"rev"`
	CreatedAtMs int64 `json:"created_at_ms"`
	UpdatedAtMs int64 `json:"updated_at_ms"`
	// ReviewDecision is the review policy's decision on the claim's review
	// phase, one line (rule and outcome), as `sett hoard -o tree` shows it.
	ReviewDecision string `json:"review_decision,omitempty"`
	// Retries records, per agent of the current phase whose tool failed,
	// where its retry policy stands.
	Retries map[string]RetryState `json:"retries,omitempty"`
	// WaitingSinceMs and WaitingReason ("capacity" or "paused") are set
	// while the claim's next grant waits in the scheduler.
	WaitingSinceMs int64  `json:"waiting_since_ms,omitempty"`
	WaitingReason  string `json:"waiting_reason,omitempty"`
	// Approval is the human gate of a claim that waited (or waits) in
	// pending_approval; zero for claims that were never gated.
	Approval ClaimApproval `json:"approval"`
}

// RetryState is where one agent's retries on a claim stand: how many of
// its runs failed, when the next one is due (0: granted already, or
// none), and the Failure the last decision was about.
type RetryState struct {
	Failed    int    `json:"failed"`
	DueMs     int64  `json:"due_ms,omitempty"`
	FailureID string `json:"failure_id,omitempty"`
	// Failures lists every failed attempt's Failure artefact, oldest
	// first.
	Failures []string `json:"failures,omitempty"`
	// Final is set when no attempt is left for a reviewer: its review
	// counts as failed for the review policy (other agents' exhausted
	// failures end the claim instead).
	Final bool `json:"final,omitempty"`
	// ErrorAnswers lists the reviews the agent answered with status ERROR
	// in this phase and was asked again after (a reviewer's answered ERROR
	// is asked once more before its cluster reads it as failed).
	ErrorAnswers []string `json:"error_answers,omitempty"`
}

// ClaimApproval records a claim's approval gate: when it was requested,
// when it expires, and the human decision once there is one (who, how,
// why). The decision fields stay after the claim moves on, as its audit.
type ClaimApproval struct {
	RequestedAtMs int64            `json:"requested_at_ms,omitempty"`
	ExpiresAtMs   int64            `json:"expires_at_ms,omitempty"`
	Decision      ApprovalDecision `json:"decision,omitempty"`
	By            string           `json:"by,omitempty"`
	Channel       DecisionChannel  `json:"channel,omitempty"`
	Reason        string           `json:"reason,omitempty"`
	DecidedAtMs   int64            `json:"decided_at_ms,omitempty"`
}

// Gated reports whether the claim went through an approval gate.
func (c *Claim) Gated() bool { return c.Approval.RequestedAtMs != 0 }

// IsFeedback reports whether the claim reworks a rejected artefact.
func (c *Claim) IsFeedback() bool {
	return c.Kind == ClaimFeedback || (c.Kind == ClaimRegular && c.ParentClaimID != "")
}

// IsLearn reports whether the claim asks the learner for a learning.
func (c *Claim) IsLearn() bool { return c.Kind == ClaimLearn }

// GrantKind is the kind of work the claim's current status grants, or ""
// when it grants nothing.
func (c *Claim) GrantKind() GrantKind {
	if c.Status == ClaimPendingAssignment && c.IsLearn() {
		return GrantLearn
	}
	return c.Status.GrantKind()
}

// GrantedAgents returns the agents granted in the claim's current phase.
func (c *Claim) GrantedAgents() []string {
	switch c.Status {
	case ClaimPendingReview:
		return c.GrantedReviewAgents
	case ClaimPendingParallel:
		return c.GrantedParallelAgents
	case ClaimPendingExclusive, ClaimPendingAssignment:
		if c.GrantedExclusiveAgent != "" {
			return []string{c.GrantedExclusiveAgent}
		}
	}
	return nil
}

// Workflow is everything that descends from one goal artefact. Its ID is the
// goal artefact's ID.
type Workflow struct {
	ID            string         `json:"id"`
	Goal          string         `json:"goal"`
	Status        WorkflowStatus `json:"status"`
	Priority      int            `json:"priority"`
	ArtefactCount int            `json:"artefact_count"`
	// OpenItems counts claimable artefacts and claims that have not reached
	// a final status; the workflow completes when it drops to zero.
	OpenItems   int    `json:"open_items"`
	StartedAtMs int64  `json:"started_at_ms"`
	EndedAtMs   int64  `json:"ended_at_ms,omitempty"`
	Outcome     string `json:"outcome,omitempty"`
	// Tokens is the model tokens (input plus output) its results reported;
	// AgentTokens splits them by agent (nil when none).
	Tokens      int64            `json:"tokens,omitempty"`
	AgentTokens map[string]int64 `json:"agent_tokens,omitempty"`
	// Types and Agents are the artefact types written in the workflow and
	// the agents that produced them, sorted (stored as "type:T" and
	// "agent:A" fields, set by create_artefact): what the console's list
	// filters on without reading any artefact.
	Types  []string `json:"types,omitempty"`
	Agents []string `json:"agents,omitempty"`
}

// GoalType is the artefact type of a goal posted by a person.
const GoalType = "GoalDefined"

// NewGoal returns a goal artefact that starts its own workflow: the text
// is the payload, priority its Priority, producer is who posted it
// ("user", "vault", ...); metadata is copied as it is. Write it with
// CreateArtefact.
func NewGoal(text string, priority int, producer string, metadata map[string]string) *Artefact {
	id := NewID()
	meta := make(map[string]string, len(metadata))
	for k, v := range metadata {
		meta[k] = v
	}
	summary := strings.TrimSpace(text)
	if i := strings.IndexByte(summary, '\n'); i >= 0 {
		summary = summary[:i]
	}
	if len(summary) > 200 {
		// Cut at a rune boundary: half a rune would be invalid UTF-8 in
		// listings and in JSON (where it turns into U+FFFD).
		cut := 200
		for cut > 0 && !utf8.RuneStart(summary[cut]) {
			cut--
		}
		summary = summary[:cut] + "…"
	}
	return &Artefact{
		ID: id, LogicalID: id, Version: 1,
		StructuralType: StructuralStandard,
		Type:           GoalType,
		Payload:        text,
		ProducedByRole: producer,
		WorkflowID:     id,
		Summary:        summary,
		Metadata:       meta,
		Priority:       priority,
	}
}
