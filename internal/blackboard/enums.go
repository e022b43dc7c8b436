package blackboard

// StructuralType says what role an artefact plays in coordination; the
// free-form Artefact.Type says what it is to the user.
type StructuralType string

// Structural types. Failure, Terminal and Review artefacts never get a claim.
const (
	StructuralStandard StructuralType = "Standard"
	StructuralReview   StructuralType = "Review"
	StructuralQuestion StructuralType = "Question"
	StructuralAnswer   StructuralType = "Answer"
	StructuralFailure  StructuralType = "Failure"
	StructuralTerminal StructuralType = "Terminal"
)

// AllStructuralTypes lists every structural type.
func AllStructuralTypes() []StructuralType {
	return []StructuralType{StructuralStandard, StructuralReview, StructuralQuestion,
		StructuralAnswer, StructuralFailure, StructuralTerminal}
}

// Valid reports whether s is a known structural type.
func (s StructuralType) Valid() bool { return oneOf(s, AllStructuralTypes()) }

// Claimable reports whether an artefact of this structural type gets a claim.
func (s StructuralType) Claimable() bool {
	return s != StructuralFailure && s != StructuralTerminal && s != StructuralReview
}

// ClaimStatus is where a claim is in its lifecycle.
type ClaimStatus string

// Claim statuses. Complete and Terminated are final.
const (
	ClaimPendingConsensus  ClaimStatus = "pending_consensus"
	ClaimPendingApproval   ClaimStatus = "pending_approval"
	ClaimPendingReview     ClaimStatus = "pending_review"
	ClaimPendingParallel   ClaimStatus = "pending_parallel"
	ClaimPendingExclusive  ClaimStatus = "pending_exclusive"
	ClaimPendingAssignment ClaimStatus = "pending_assignment"
	ClaimComplete          ClaimStatus = "complete"
	ClaimTerminated        ClaimStatus = "terminated"
)

// AllClaimStatuses lists every claim status in lifecycle order.
func AllClaimStatuses() []ClaimStatus {
	return []ClaimStatus{ClaimPendingConsensus, ClaimPendingApproval, ClaimPendingReview,
		ClaimPendingParallel, ClaimPendingExclusive, ClaimPendingAssignment, ClaimComplete, ClaimTerminated}
}

// Valid reports whether s is a known claim status.
func (s ClaimStatus) Valid() bool { return oneOf(s, AllClaimStatuses()) }

// Final reports whether no further transition can happen.
func (s ClaimStatus) Final() bool { return s == ClaimComplete || s == ClaimTerminated }

// GrantKind is the kind of work a status grants, or "" when the status
// grants nothing.
func (s ClaimStatus) GrantKind() GrantKind {
	switch s {
	case ClaimPendingReview:
		return GrantReview
	case ClaimPendingParallel:
		return GrantClaim
	case ClaimPendingExclusive:
		return GrantExclusive
	case ClaimPendingAssignment:
		return GrantFeedback
	}
	return ""
}

// Bid is an agent's answer to a claim.
type Bid string

// Bids, in the order their phases run.
const (
	BidReview    Bid = "review"
	BidClaim     Bid = "claim"
	BidExclusive Bid = "exclusive"
	BidIgnore    Bid = "ignore"
)

// AllBids lists every bid.
func AllBids() []Bid { return []Bid{BidReview, BidClaim, BidExclusive, BidIgnore} }

// Valid reports whether b is a known bid.
func (b Bid) Valid() bool { return oneOf(b, AllBids()) }

// GrantKind says what kind of work a grant is; it is the tool's claim_type.
type GrantKind string

// Grant kinds.
const (
	GrantReview    GrantKind = "review"
	GrantClaim     GrantKind = "claim"
	GrantExclusive GrantKind = "exclusive"
	GrantFeedback  GrantKind = "feedback"
	// GrantLearn asks the learner agent to turn a human rejection into one
	// learning.
	GrantLearn GrantKind = "learn"
)

// AllGrantKinds lists every grant kind.
func AllGrantKinds() []GrantKind {
	return []GrantKind{GrantReview, GrantClaim, GrantExclusive, GrantFeedback, GrantLearn}
}

// Valid reports whether g is a known grant kind.
func (g GrantKind) Valid() bool { return oneOf(g, AllGrantKinds()) }

// ClaimKind says what a claim is for. Regular claims (the empty kind) get
// bids; feedback and learn claims are granted to one agent directly.
type ClaimKind string

// Claim kinds.
const (
	ClaimRegular  ClaimKind = ""
	ClaimFeedback ClaimKind = "feedback"
	ClaimLearn    ClaimKind = "learn"
)

// AllClaimKinds lists every claim kind.
func AllClaimKinds() []ClaimKind { return []ClaimKind{ClaimRegular, ClaimFeedback, ClaimLearn} }

// Valid reports whether k is a known claim kind.
func (k ClaimKind) Valid() bool { return oneOf(k, AllClaimKinds()) }

// ApprovalDecision is a human's answer to a pending approval.
type ApprovalDecision string

// Approval decisions.
const (
	ApprovalApproved ApprovalDecision = "approved"
	ApprovalRejected ApprovalDecision = "rejected"
)

// AllApprovalDecisions lists every decision.
func AllApprovalDecisions() []ApprovalDecision {
	return []ApprovalDecision{ApprovalApproved, ApprovalRejected}
}

// Valid reports whether d is a known decision.
func (d ApprovalDecision) Valid() bool { return oneOf(d, AllApprovalDecisions()) }

// DecisionChannel says how a human decision reached Sett; it is recorded
// with the decision for the audit trail.
type DecisionChannel string

// Decision channels.
const (
	ChannelCLI         DecisionChannel = "cli"
	ChannelVaultMove   DecisionChannel = "vault_move"
	ChannelFrontmatter DecisionChannel = "frontmatter"
	// ChannelConsole is a decision made in the web console (`sett ui`).
	ChannelConsole DecisionChannel = "console"
	// ChannelAPI is a decision a program made through the client API
	// (pkg/blackboard's Approve and Reject).
	ChannelAPI DecisionChannel = "api"
)

// AllDecisionChannels lists every channel.
func AllDecisionChannels() []DecisionChannel {
	return []DecisionChannel{ChannelCLI, ChannelVaultMove, ChannelFrontmatter, ChannelConsole, ChannelAPI}
}

// Valid reports whether c is a known channel.
func (c DecisionChannel) Valid() bool { return oneOf(c, AllDecisionChannels()) }

// WorkflowStatus is the state of everything descending from one goal.
type WorkflowStatus string

// Workflow statuses. All but Running are final. Rejected means a human
// rejected a gated artefact and approvals.on_reject is "end".
const (
	WorkflowRunning   WorkflowStatus = "running"
	WorkflowCompleted WorkflowStatus = "completed"
	WorkflowFailed    WorkflowStatus = "failed"
	WorkflowRejected  WorkflowStatus = "rejected"
	WorkflowCancelled WorkflowStatus = "cancelled"
)

// AllWorkflowStatuses lists every workflow status.
func AllWorkflowStatuses() []WorkflowStatus {
	return []WorkflowStatus{WorkflowRunning, WorkflowCompleted, WorkflowFailed, WorkflowRejected, WorkflowCancelled}
}

// Valid reports whether s is a known workflow status.
func (s WorkflowStatus) Valid() bool { return oneOf(s, AllWorkflowStatuses()) }

// Final reports whether the workflow has ended.
func (s WorkflowStatus) Final() bool { return s != WorkflowRunning && s != "" }

func oneOf[T comparable](v T, all []T) bool {
	for _, a := range all {
		if v == a {
			return true
		}
	}
	return false
}
