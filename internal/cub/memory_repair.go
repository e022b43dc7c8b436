package cub

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/textcut"
)

// Metadata keys a result carries when the memory its tool returned broke
// the contract (memory problems never halt the pipeline).
const (
	// metaMemoryAction is "repaired" (cut to fit, stored with truncated
	// set) or "dropped" (beyond repair, stored without a memory).
	metaMemoryAction = "memory_action"
	// metaMemoryProblem is what was wrong, as the strict reader said.
	metaMemoryProblem = "memory_problem"
	// metaMemoryCuts lists what the repair changed, "; "-separated.
	metaMemoryCuts = "memory_cuts"
)

// readMemory reads the memory a tool returned (raw, nil when none). A
// memory that breaks the contract never fails the work: it is repaired
// (memory.RepairAgentMemory) or, beyond repair, dropped. mem is the JSON
// to store ("" for none); warning holds the metadata that records a
// repair or drop, nil when the memory was valid or absent.
func readMemory(raw json.RawMessage) (mem string, warning map[string]string) {
	if raw == nil {
		return "", nil
	}
	m, strictErr := memory.ParseAgentMemory(raw)
	if strictErr == nil {
		b, _ := json.Marshal(m) // plain data always marshals
		return string(b), nil
	}
	m, cuts, err := memory.RepairAgentMemory(raw)
	if err != nil {
		return "", map[string]string{metaMemoryAction: "dropped", metaMemoryProblem: textcut.Bytes(strictErr.Error(), 2000)}
	}
	b, _ := json.Marshal(m)
	return string(b), map[string]string{metaMemoryAction: "repaired", metaMemoryProblem: textcut.Bytes(strictErr.Error(), 2000),
		metaMemoryCuts: textcut.Bytes(strings.Join(cuts, "; "), 2000)}
}

// warnMemory records a repaired or dropped memory of stored result art as
// a memory_warning event, for the tool's author to see. The result is
// already stored, so a failure here is logged and the work goes on.
func (w *WorkRunner) warnMemory(ctx context.Context, log zerolog.Logger, art *blackboard.Artefact) {
	action := art.Metadata[metaMemoryAction]
	fields := map[string]string{"action": action, "problem": art.Metadata[metaMemoryProblem]}
	if c := art.Metadata[metaMemoryCuts]; c != "" {
		fields["cuts"] = c
	}
	log.Warn().Str("artefact_id", art.ID).Str("action", action).Str("problem", fields["problem"]).Str("cuts", fields["cuts"]).
		Msg("the tool's memory broke the contract; the work goes on")
	if _, err := w.bb.AppendEvent(ctx, blackboard.Event{Type: blackboard.EventMemoryWarning, WorkflowID: art.WorkflowID,
		ClaimID: art.ClaimID, ArtefactID: art.ID, Agent: art.ProducedByAgent, Fields: fields}); err != nil {
		log.Warn().Err(err).Msg("recording the memory_warning event failed")
	}
}
