package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/learningsfile"
	"github.com/settdev/sett/internal/termsafe"
)

func newLearningsCmd(app *App) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "learnings [-o text|json]",
		Short: "Print what Sett learned from rejected work",
		Long: `Print every learning recorded from a human rejection, oldest first, in the
form of Agent_Memory.md, then the learnings written into Agent_Memory.md by
hand (with a vault, that file is what tools receive as memory.learnings;
edit it there). In -o json, a hand-written learning has source "hand_written".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(output, "text", "json"); err != nil {
				return err
			}
			return app.withBlackboard(cmd.Context(), func(bb *blackboard.Client) error {
				ls, err := bb.Learnings(cmd.Context())
				if err != nil {
					return err
				}
				// What tools read (Agent_Memory.md with a vault) may hold
				// learnings a person wrote by hand.
				tm, err := bb.GetToolMemory(cmd.Context())
				if err != nil {
					return err
				}
				hand := learningsfile.HandWritten(tm.Learnings, ls)
				out := cmd.OutOrStdout()
				if output == "json" {
					all := append(append([]blackboard.Learning{}, ls...), hand...)
					return writeJSONIndent(out, all)
				}
				if len(ls) == 0 && len(hand) == 0 {
					fmt.Fprintln(out, "No learnings yet: they come from rejections (`sett reject ID --reason TEXT`, or the vault's Rejected/ folder), or write them into the vault's Agent_Memory.md.")
					return nil
				}
				for _, l := range ls {
					fmt.Fprintln(out, oneLine(learningsfile.RenderLine(l)))
				}
				if len(hand) > 0 {
					if len(ls) > 0 {
						fmt.Fprintln(out)
					}
					fmt.Fprintf(out, "Written by hand in %s:\n", learningsfile.FileName)
					for _, l := range hand {
						fmt.Fprintln(out, "- "+oneLine(l.Text))
					}
				}
				if w := learningsfile.Warning(len(ls) + len(hand)); w != "" {
					fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+termsafe.String(w))
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}
