package reviewpolicy

import "slices"

// Review is what Decide reads about one reviewer of the phase.
type Review struct {
	// Agent is the reviewer's agent name.
	Agent string
	// Role is how its review counts.
	Role Role
	// State says whether a review was delivered.
	State State
	// Verdict is Judge's reading of the delivered review; ignored unless
	// State is StateDelivered.
	Verdict Verdict
}

// State says whether a reviewer delivered its review.
type State string

// The states.
const (
	// StateDelivered: a Review artefact exists.
	StateDelivered State = "delivered"
	// StateFailed: the reviewer's tool failed (after its retries).
	StateFailed State = "failed"
	// StateMissing: no review came (the reviewer vanished, or the phase
	// ended without it).
	StateMissing State = "missing"
	// StateSkipped: the reviewer was not asked, or its grant withdrawn:
	// a gate reviewer decided the phase first, or an advisory reviewer's
	// deadline passed. Read as missing by the rules after the gate.
	StateSkipped State = "skipped"
)

// AllStates lists every state.
func AllStates() []State { return []State{StateDelivered, StateFailed, StateMissing, StateSkipped} }

// Valid reports whether s is one of AllStates.
func (s State) Valid() bool { return slices.Contains(AllStates(), s) }
