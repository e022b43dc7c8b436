package cub

import (
	"encoding/json"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/readchannel"
	"github.com/settdev/sett/internal/tool"
)

// Memory-first input (the memory and review design). A tool receives the workflow's
// shared memory and the compact memories of the agents upstream of its
// work (the authors of what its context chain and feedback hold); the
// reviews whose authors left a memory, and long artefacts (plans,
// reports) whose authors did, are passed without their payload, so a
// rework reads four compact memories instead of four full reviews.

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

// LongPayload is the size above which an artefact that is not a review
// is also left out of a tool input when its author left a memory: a long
// plan or report is then read through its memory, and fetched whole or
// by section (sett-read) only if the tool needs it. Shorter ones are
// cheaper to pass than to fetch.
const LongPayload = 8 << 10

// omitPayloads empties, in arts, the payload of every review whose
// author's memory is in upstream, and of every other artefact with such
// an author whose payload is over LongPayload — never the target's (what
// the tool works on) nor the goal's (the person's words). Each omitted
// artefact keeps its size and sections, so the tool knows what it can
// fetch.
func omitPayloads(arts []tool.Artefact, upstream map[string]string, targetID string) {
	for i := range arts {
		a := &arts[i]
		if !omitPayload(*a, upstream, targetID) {
			continue
		}
		// What was left out, and how to fetch it (sett-read).
		a.PayloadBytes, a.Sections = len(a.Payload), readchannel.Sections(a.Payload)
		a.Payload, a.PayloadOmitted = "", true
	}
}

// omitPayload is omitPayloads' rule for one artefact.
func omitPayload(a tool.Artefact, upstream map[string]string, targetID string) bool {
	if a.ProducedByAgent == "" || a.ID == targetID || a.Type == "GoalDefined" || a.PayloadOmitted {
		return false
	}
	if _, ok := upstream[a.ProducedByAgent]; !ok {
		return false
	}
	return a.StructuralType == string(blackboard.StructuralReview) || len(a.Payload) > LongPayload
}

// OmitPayloads is what the cub does to a tool input's context chain and
// feedback when the authors' memories are in upstream: the bench
// measures input sizes with it.
func OmitPayloads(arts []tool.Artefact, upstream map[string]string, targetID string) {
	omitPayloads(arts, upstream, targetID)
}
