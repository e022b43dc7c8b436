package tool

import (
	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/tool"
)

// The documents of the contract. They are the cub's own types (the cub
// writes Input and checks what a tool prints against the same
// definitions), so a tool and the cub cannot disagree on a field.
type (
	// Input is the one JSON document the cub writes on the tool's stdin.
	Input = tool.Input
	// Artefact is what a tool sees of an artefact: the claim's target,
	// a link of its context chain, or a review to address.
	Artefact = tool.Artefact
	// Workflow is what a tool sees of the workflow of its claim.
	Workflow = tool.Workflow
	// Memory is the memory handed to a tool: the workflow's shared memory,
	// the learnings, the handbook and the upstream agents' memories.
	Memory = tool.Memory
	// Usage is the token cost of the model calls a tool made on a claim.
	Usage = tool.Usage
	// AgentMemory is the compact memory a tool leaves with its answer
	// (Answer.Memory): what the agents after it read instead of the
	// whole payload.
	AgentMemory = memory.AgentMemory
	// MemoryStatus is an AgentMemory's status.
	MemoryStatus = memory.Status
	// ArtifactEntry is one entry of AgentMemory.ArtifactIndex.
	ArtifactEntry = memory.ArtifactEntry
)

// Memory statuses.
const (
	MemoryDone          = memory.StatusDone
	MemoryNeedsRevision = memory.StatusNeedsRevision
	MemoryError         = memory.StatusError
)

// ClaimType says what the tool is run for (Input.ClaimType).
type ClaimType = tool.ClaimType

// Claim types.
const (
	// ClaimTypeReview: review the target artefact.
	ClaimTypeReview = tool.ClaimTypeReview
	// ClaimTypeClaim: work on the target beside other agents.
	ClaimTypeClaim = tool.ClaimTypeClaim
	// ClaimTypeExclusive: work on the target alone.
	ClaimTypeExclusive = tool.ClaimTypeExclusive
	// ClaimTypeFeedback: rework the target; the reviews are in
	// Input.Feedback. The answer may leave its type out.
	ClaimTypeFeedback = tool.ClaimTypeFeedback
	// ClaimTypeLearn: turn a human rejection (Input.Feedback) of the
	// target into one learning, the answer's payload.
	ClaimTypeLearn = tool.ClaimTypeLearn
)

// AllClaimTypes returns every claim type, in phase order.
func AllClaimTypes() []ClaimType { return tool.AllClaimTypes() }
