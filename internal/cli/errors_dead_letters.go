package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/textcut"
)

// DeadLetterView is one dead letter as `sett errors -o json` prints it:
// an orchestrator event whose handling failed too many times.
type DeadLetterView struct {
	ID         string            `json:"id"`
	At         time.Time         `json:"at"`
	Event      string            `json:"event"`
	StreamID   string            `json:"stream_id"`
	WorkflowID string            `json:"workflow_id,omitempty"`
	ClaimID    string            `json:"claim_id,omitempty"`
	ArtefactID string            `json:"artefact_id,omitempty"`
	Agent      string            `json:"agent,omitempty"`
	Fields     map[string]string `json:"fields,omitempty"`
	Error      string            `json:"error"`
	Attempts   int               `json:"attempts"`
}

// CollectDeadLetters reads up to limit dead letters, newest first, as the
// JSON-able views `sett errors` shows.
func CollectDeadLetters(ctx context.Context, bb *blackboard.Client, limit int64) ([]DeadLetterView, error) {
	dls, err := bb.DeadLetters(ctx, limit)
	if err != nil {
		return nil, err
	}
	out := make([]DeadLetterView, 0, len(dls))
	for _, d := range dls {
		out = append(out, DeadLetterView{ID: d.ID, At: time.UnixMilli(d.AtMs).UTC(), Event: string(d.Event.Type),
			StreamID: d.Event.StreamID, WorkflowID: d.Event.WorkflowID, ClaimID: d.Event.ClaimID,
			ArtefactID: d.Event.ArtefactID, Agent: d.Event.Agent, Fields: d.Event.Fields, Error: d.Error, Attempts: d.Attempts})
	}
	return out, nil
}

// writeDeadLetters renders the dead-letter section of `sett errors`: one
// line per event with what it concerned, how often it failed and the last
// error.
func writeDeadLetters(w io.Writer, style outputStyle, r *errorsReport) {
	t := newTable(w, style, "  AT", "EVENT", "CONCERNS", "ATTEMPTS", "ERROR")
	for _, v := range r.DeadLetters {
		concerns := "-"
		switch {
		case v.ClaimID != "":
			concerns = "claim " + style.id(v.ClaimID)
		case v.ArtefactID != "":
			concerns = "artefact " + style.id(v.ArtefactID)
		case v.WorkflowID != "":
			concerns = "workflow " + style.id(v.WorkflowID)
		case v.Agent != "":
			concerns = "agent " + v.Agent
		}
		t.row(cell{text: "  " + stamp(style.Now(), v.At)}, cell{text: oneLine(v.Event)}, cell{text: oneLine(concerns)},
			cell{text: fmt.Sprint(v.Attempts)}, cell{text: textcut.Runes(oneLine(v.Error), 100), colour: colourRed})
	}
	_ = t.flush()
}
