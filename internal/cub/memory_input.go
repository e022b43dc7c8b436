package cub

import (
	"encoding/json"

	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/tool"
	"github.com/settdev/sett/pkg/blackboard"
)

// Memory-first input (SPEC §10, seed 003). A tool receives the workflow's
// shared memory and the compact memories of the agents upstream of its
// work (the authors of what its context chain and feedback hold); the
// reviews whose authors left a memory are passed without their payload,
// so a rework reads four compact memories instead of four full reviews.

// upstreamMemories renders, per agent, the latest memory carried by the
// given artefacts (newest first, as the chain orders them).
func upstreamMemories(arts []*blackboard.Artefact) map[string]string {
	out := map[string]string{}
	for _, a := range arts {
		if a == nil || a.Memory == "" || a.ProducedByAgent == "" {
			continue
		}
		if _, seen := out[a.ProducedByAgent]; seen {
			continue
		}
		var m memory.AgentMemory
		if err := json.Unmarshal([]byte(a.Memory), &m); err != nil {
			continue // stored validated; a bad one is simply not passed on
		}
		out[a.ProducedByAgent] = memory.RenderAgentMemory(a.ProducedByAgent, m)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// sharedMemory renders the workflow's shared memory document, "" when
// there is none (or it does not decode: a merge problem never blocks
// work).
func sharedMemory(doc string) string {
	if doc == "" {
		return ""
	}
	s, err := memory.DecodeShared([]byte(doc))
	if err != nil {
		return ""
	}
	return memory.RenderShared(s)
}

// omitReviewPayloads empties the payload of the reviews whose author's
// memory is in upstream.
func omitReviewPayloads(arts []tool.Artefact, upstream map[string]string) {
	for i := range arts {
		a := &arts[i]
		if a.StructuralType != string(blackboard.StructuralReview) || a.ProducedByAgent == "" {
			continue
		}
		if _, ok := upstream[a.ProducedByAgent]; ok {
			a.Payload, a.PayloadOmitted = "", true
		}
	}
}
