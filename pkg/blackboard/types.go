package blackboard

import "github.com/settdev/sett/internal/blackboard"

// The records a client reads. They are the engine's types: their fields
// and JSON forms are documented there (internal/blackboard/records.go).
type (
	// Artefact is one immutable version of a piece of work (a goal, a
	// plan, code, a review, a failure).
	Artefact = blackboard.Artefact
	// Workflow is everything descending from one goal; its id is the
	// goal's id.
	Workflow = blackboard.Workflow
	// Claim is the coordination record of one artefact: who was asked,
	// who was granted what, how it ended.
	Claim = blackboard.Claim
	// Event is one entry of the instance's event stream (the audit log).
	Event = blackboard.Event
	// ApprovalRequest is an artefact version that waits for a human
	// decision.
	ApprovalRequest = blackboard.ApprovalRequest
	// PageQuery selects a page of artefact ids; Page is one such page.
	PageQuery = blackboard.PageQuery
	Page      = blackboard.Page
	// WorkflowQuery selects a page of workflows; WorkflowPage is one.
	WorkflowQuery = blackboard.WorkflowQuery
	WorkflowPage  = blackboard.WorkflowPage
	// SupersededError is returned by a decision on an artefact version
	// that a newer one replaced; it names the current version.
	SupersededError = blackboard.SupersededError
)

// WorkflowStatus is a workflow's state: running until it ends.
type WorkflowStatus = blackboard.WorkflowStatus

// Workflow statuses; all but WorkflowRunning are final
// (WorkflowStatus.Final).
const (
	WorkflowRunning   = blackboard.WorkflowRunning
	WorkflowCompleted = blackboard.WorkflowCompleted
	WorkflowFailed    = blackboard.WorkflowFailed
	WorkflowRejected  = blackboard.WorkflowRejected
	WorkflowCancelled = blackboard.WorkflowCancelled
)

// StructuralType says what role an artefact plays, whatever its type.
type StructuralType = blackboard.StructuralType

// Structural types.
const (
	StructuralStandard = blackboard.StructuralStandard
	StructuralReview   = blackboard.StructuralReview
	StructuralQuestion = blackboard.StructuralQuestion
	StructuralAnswer   = blackboard.StructuralAnswer
	StructuralFailure  = blackboard.StructuralFailure
	StructuralTerminal = blackboard.StructuralTerminal
)

// ClaimStatus is where a claim stands.
type ClaimStatus = blackboard.ClaimStatus

// Claim statuses.
const (
	ClaimPendingConsensus  = blackboard.ClaimPendingConsensus
	ClaimPendingApproval   = blackboard.ClaimPendingApproval
	ClaimPendingReview     = blackboard.ClaimPendingReview
	ClaimPendingParallel   = blackboard.ClaimPendingParallel
	ClaimPendingExclusive  = blackboard.ClaimPendingExclusive
	ClaimPendingAssignment = blackboard.ClaimPendingAssignment
	ClaimComplete          = blackboard.ClaimComplete
	ClaimTerminated        = blackboard.ClaimTerminated
)

// EventType names an event. The stream holds more types than those
// below (internal/blackboard/events.go lists them all); these are the
// ones a client usually acts on.
type EventType = blackboard.EventType

// Event types a watcher usually acts on.
const (
	EventWorkflowStarted   = blackboard.EventWorkflowStarted
	EventWorkflowCompleted = blackboard.EventWorkflowCompleted // fields "status" and "reason"
	EventWorkflowReopened  = blackboard.EventWorkflowReopened
	EventArtefactCreated   = blackboard.EventArtefactCreated
	EventClaimCreated      = blackboard.EventClaimCreated
	EventClaimGranted      = blackboard.EventClaimGranted
	EventClaimCompleted    = blackboard.EventClaimCompleted
	EventReviewApproved    = blackboard.EventReviewApproved
	EventReviewRejected    = blackboard.EventReviewRejected
	EventRetryScheduled    = blackboard.EventRetryScheduled
	EventApprovalRequested = blackboard.EventApprovalRequested
	EventApprovalDecided   = blackboard.EventApprovalDecided
	EventApprovalExpired   = blackboard.EventApprovalExpired
)

// Errors a client sees; errors.Is matches them through the wrapping.
var (
	// ErrNotFound: no such artefact, workflow or claim (or no approval
	// waiting for that artefact).
	ErrNotFound = blackboard.ErrNotFound
	// ErrInvalid: an argument or setting failed validation; nothing was
	// written.
	ErrInvalid = blackboard.ErrInvalid
	// ErrExists: the artefact id is taken.
	ErrExists = blackboard.ErrExists
	// ErrWorkflowEnded: the workflow is no longer running.
	ErrWorkflowEnded = blackboard.ErrWorkflowEnded
	// ErrSuperseded: a decision on a version a newer one replaced (the
	// error is a *SupersededError naming the current version).
	ErrSuperseded = blackboard.ErrSuperseded
	// ErrStaleStatus: the artefact's claim does not wait for a decision
	// (and did not time out waiting for one).
	ErrStaleStatus = blackboard.ErrStaleStatus
	// ErrAlreadyDecided: someone decided the approval first.
	ErrAlreadyDecided = blackboard.ErrAlreadyDecided
	// ErrApprovalExpired: the decision came after the approval timeout.
	ErrApprovalExpired = blackboard.ErrApprovalExpired
	// ErrNotReplicated: with Options.WaitReplicas, a write applied on the
	// master that too few replicas acknowledged in time.
	ErrNotReplicated = blackboard.ErrNotReplicated
)

// ShortID is the short form of an id that the sett command shows and
// accepts.
func ShortID(id string) string { return blackboard.ShortID(id) }
