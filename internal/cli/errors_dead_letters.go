package cli

import (
	"context"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/pkg/blackboard"
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

// WriteDeadLetters renders dead letters as a section of `sett errors`: a
// heading, then one line per event with what it concerned, how often it
// failed and the last error; "none" when the stream is empty.
func WriteDeadLetters(w io.Writer, views []DeadLetterView) error {
	if _, err := fmt.Fprintf(w, "Dead letters (events that failed too many times): %d\n", len(views)); err != nil {
		return err
	}
	if len(views) == 0 {
		_, err := fmt.Fprintln(w, "  none")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  AT\tEVENT\tCONCERNS\tATTEMPTS\tERROR")
	for _, v := range views {
		concerns := "-"
		switch {
		case v.ClaimID != "":
			concerns = "claim " + v.ClaimID
		case v.ArtefactID != "":
			concerns = "artefact " + v.ArtefactID
		case v.WorkflowID != "":
			concerns = "workflow " + v.WorkflowID
		case v.Agent != "":
			concerns = "agent " + v.Agent
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\t%s\n", v.At.Format(time.RFC3339), v.Event, concerns, v.Attempts, v.Error)
	}
	return tw.Flush()
}

// newDeadLettersCmd is a hidden command printing the dead letters until
// `sett errors` shows them as one of its sections.
func newDeadLettersCmd(app *App) *cobra.Command {
	var output string
	var limit int64
	cmd := &cobra.Command{
		Use:    "dead-letters [-o text|json]",
		Short:  "Print the orchestrator events that failed too many times",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(output, "text", "json"); err != nil {
				return err
			}
			bb, _, err := app.Connect(cmd.Context())
			if err != nil {
				return err
			}
			defer bb.Close()
			views, err := CollectDeadLetters(cmd.Context(), bb, limit)
			if err != nil {
				return err
			}
			if output == "json" {
				return writeJSONIndent(cmd.OutOrStdout(), views)
			}
			return WriteDeadLetters(cmd.OutOrStdout(), views)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	cmd.Flags().Int64Var(&limit, "limit", 100, "at most this many, newest first")
	return cmd
}
