package retrypolicy

import "slices"

// FailureKind says how a tool run failed. The values equal the cub's
// (tool.FailureKind plus the failures the cub and the orchestrator see
// around a run), so a tool.FailureKind converts directly.
type FailureKind string

// The failure kinds.
const (
	KindExitNonzero    FailureKind = "exit_nonzero"
	KindSignaled       FailureKind = "signaled"
	KindTimeout        FailureKind = "timeout"
	KindStartFailed    FailureKind = "start_failed"
	KindStdoutTooLarge FailureKind = "stdout_too_large"
	KindCanceled       FailureKind = "canceled"
	// KindInvalidOutput: the tool exited 0 but its output broke the
	// contract (not JSON, a missing field, an invalid memory).
	KindInvalidOutput FailureKind = "invalid_output"
	// KindUnreadableOutput: the tool exited 0 but its stdout is not one
	// JSON object at all (prose, nothing, several values): a tool that
	// answers so is broken, not unlucky.
	KindUnreadableOutput FailureKind = "unreadable_output"
	// KindToolError: the tool answered {"error": ...}.
	KindToolError FailureKind = "tool_error"
	// KindLostLease: the cub lost its lease on the grant (it died or hung).
	KindLostLease FailureKind = "lost_lease"
)

// AllFailureKinds lists every failure kind.
func AllFailureKinds() []FailureKind {
	return []FailureKind{KindExitNonzero, KindSignaled, KindTimeout, KindStartFailed, KindStdoutTooLarge,
		KindCanceled, KindInvalidOutput, KindToolError, KindLostLease, KindUnreadableOutput}
}

// Valid reports whether k is one of AllFailureKinds.
func (k FailureKind) Valid() bool { return slices.Contains(AllFailureKinds(), k) }

// FailureFacts are what Classify reads about one failed run.
type FailureFacts struct {
	Kind FailureKind
	// ExitCode is the tool's exit status; 0 or -1 when it has none (it
	// did not start, was killed, or exited 0 with an error answer).
	ExitCode int
	// Retryable is the tool's own "retryable" answer; nil when it gave
	// none.
	Retryable *bool
}
