package cub

import (
	"encoding/json"

	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/readchannel"
	"github.com/settdev/sett/internal/tool"
	"github.com/settdev/sett/pkg/blackboard"
)

// Memory-first input (the memory and review design). A tool receives the workflow's
// shared memory and the compact memories of the agents upstream of its
// work (the authors of what its context chain and feedback hold); the
// reviews whose authors left a memory are passed without their payload,
// so a rework reads four compact memories instead of four full reviews.

// upstreamMemories renders the latest memory of every agent that worked
// in the workflow before this grant (all the memories stored so far: an
// agent's memory is stored with its result).
func upstreamMemories(stored map[string]blackboard.StoredMemory) map[string]string {
	if len(stored) == 0 {
		return nil
	}
	out := make(map[string]string, len(stored))
	for agent, sm := range stored {
		var m memory.AgentMemory
		if err := json.Unmarshal([]byte(sm.Memory), &m); err != nil {
			continue // stored validated; a bad one is simply not passed on
		}
		out[agent] = memory.RenderAgentMemory(agent, m)
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
			// What was left out, and how to fetch it (sett-read).
			a.PayloadBytes, a.Sections = len(a.Payload), readchannel.Sections(a.Payload)
			a.Payload, a.PayloadOmitted = "", true
		}
	}
}

// OmitReviewPayloads is what the cub does to a tool input's reviews
// (context chain and feedback) when their authors' memories are in
// upstream: the bench measures input sizes with it.
func OmitReviewPayloads(arts []tool.Artefact, upstream map[string]string) {
	omitReviewPayloads(arts, upstream)
}
