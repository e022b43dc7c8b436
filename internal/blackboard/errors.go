package blackboard

import (
	"errors"
	"fmt"
)

var (
	// ErrNotReplicated is returned, with Options.WaitReplicas, when a
	// write was applied on the master but fewer replicas than asked
	// acknowledged it in time. The write stands; every Sett write is
	// idempotent, so the caller may retry it or give up.
	ErrNotReplicated = errors.New("blackboard: write not acknowledged by enough replicas")

	// ErrNotFound is returned when a record (artefact, claim, workflow,
	// thread) does not exist.
	ErrNotFound = errors.New("blackboard: not found")

	// ErrExists is returned when a write-once record already exists: an
	// artefact id, a bid by the same agent, an output of the same agent for
	// the same claim.
	ErrExists = errors.New("blackboard: already exists")

	// ErrVersionConflict is returned when an artefact's version is not the
	// next version of its thread (another writer got there first).
	ErrVersionConflict = errors.New("blackboard: version conflict")

	// ErrStaleStatus is returned by compare-and-set transitions when the
	// claim is no longer in the expected status (or transition counter).
	ErrStaleStatus = errors.New("blackboard: stale claim status")

	// ErrStaleGrant is returned when a cub acts on a grant that was
	// withdrawn or re-granted under a newer token (its lease was lost).
	ErrStaleGrant = errors.New("blackboard: stale grant")

	// ErrFenced is returned when an orchestrator write carries a leader epoch
	// older than the stored one: another orchestrator has taken over.
	ErrFenced = errors.New("blackboard: fenced by a newer leader")

	// ErrNoEpoch is returned when an orchestrator write (claims, timers,
	// workflow ends, learnings, shared memory) carries no leader epoch:
	// fencing is required, never opt-in. An operator's override passes
	// OperatorEpoch instead.
	ErrNoEpoch = errors.New("blackboard: orchestrator write without a leader epoch")

	// ErrNotInvited is returned when an agent bids on a claim it was not
	// asked to bid on.
	ErrNotInvited = errors.New("blackboard: agent was not invited to bid")

	// ErrWorkflowEnded is returned when a claim is requested for a workflow
	// that is no longer running.
	ErrWorkflowEnded = errors.New("blackboard: workflow has ended")

	// ErrBudgetExceeded is returned when creating a claim would exceed a
	// workflow budget (max_workflow_artefacts or max_chain_depth).
	ErrBudgetExceeded = errors.New("blackboard: workflow budget exceeded")

	// ErrNotFailed is returned by RetryClaim for a claim that did not
	// fail: still running, completed, or ended for another reason.
	ErrNotFailed = errors.New("blackboard: claim did not fail")

	// ErrInvalid is returned when a record or argument fails validation
	// before anything is written.
	ErrInvalid = errors.New("blackboard: invalid input")

	// ErrCorrupt is returned when a stored hash cannot be decoded.
	ErrCorrupt = errors.New("blackboard: corrupt record")

	// ErrAmbiguous is returned when a short id prefix matches more than one
	// record.
	ErrAmbiguous = errors.New("blackboard: ambiguous id prefix")

	// ErrLeaseHeld is returned when a cub tries to take the lease of a
	// grant that another replica holds and keeps alive: one grant has one
	// owner.
	ErrLeaseHeld = errors.New("blackboard: lease held by another replica")

	// ErrStaleMemory is returned by a transition that merges a workflow's
	// shared memory when another merge changed it since it was read.
	ErrStaleMemory = errors.New("blackboard: shared memory changed meanwhile")

	// ErrWaiting is returned by a granting transition that did not apply
	// because the claim must wait: for a scheduler slot
	// (max_concurrent_claims, or better-ranked claims first) or for the
	// instance to resume. The claim is queued; a freed slot or a resume
	// wakes it.
	ErrWaiting = errors.New("blackboard: claim waits for the scheduler")

	// ErrSuperseded is returned (inside a *SupersededError) when a human
	// decides on a version of an artefact that a newer version replaced.
	ErrSuperseded = errors.New("blackboard: version superseded")

	// ErrAlreadyDecided is returned when an approval was already decided
	// (by someone else, or through another channel).
	ErrAlreadyDecided = errors.New("blackboard: approval already decided")

	// ErrApprovalExpired is returned when a decision comes after the
	// approval's timeout.
	ErrApprovalExpired = errors.New("blackboard: approval expired")
)

// SupersededError names the current version when a decision concerns an
// older one. It matches ErrSuperseded with errors.Is.
type SupersededError struct {
	ArtefactID     string
	CurrentID      string
	CurrentVersion int
}

func (e *SupersededError) Error() string {
	return fmt.Sprintf("blackboard: artefact %s is superseded: version %d (%s) is current; decide on that one",
		e.ArtefactID, e.CurrentVersion, e.CurrentID)
}

// Unwrap lets errors.Is match ErrSuperseded.
func (e *SupersededError) Unwrap() error { return ErrSuperseded }

// Retention errors, returned by PurgeWorkflow.
var (
	// ErrRetained is returned by PurgeWorkflow while the workflow's
	// retention period lasts.
	ErrRetained = errors.New("blackboard: workflow still retained")

	// ErrRunning is returned by PurgeWorkflow for a workflow that has not
	// ended: running workflows are never deleted.
	ErrRunning = errors.New("blackboard: workflow still running")

	// ErrChanged is returned by PurgeWorkflow when the workflow gained an
	// artefact or claim between the read and the delete; the next pass
	// reads it again.
	ErrChanged = errors.New("blackboard: workflow changed during purge")
)
