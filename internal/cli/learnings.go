package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/agentmemory"
	"github.com/settdev/sett/internal/termsafe"
	"github.com/settdev/sett/pkg/blackboard"
)

func newLearningsCmd(app *App) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "learnings [-o text|json]",
		Short: "Print what Sett learned from rejected work",
		Long: `Print every learning recorded from a human rejection, oldest first, in the
form of Agent_Memory.md (the learning loop). Every tool receives them as
memory.learnings. With a vault, Agent_Memory.md in the vault is what tools
read — edit it there; this command prints the record Sett keeps in Redis.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(output, "text", "json"); err != nil {
				return err
			}
			bb, _, err := app.Connect(cmd.Context())
			if err != nil {
				return err
			}
			defer bb.Close()
			ls, err := bb.Learnings(cmd.Context())
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if output == "json" {
				if ls == nil {
					ls = []blackboard.Learning{}
				}
				return writeJSONIndent(out, ls)
			}
			if len(ls) == 0 {
				fmt.Fprintln(out, "No learnings yet: they come from rejections (`sett reject ID --reason TEXT`, or the vault's Rejected/ folder).")
				return nil
			}
			for _, l := range ls {
				fmt.Fprintln(out, oneLine(agentmemory.RenderLine(l)))
			}
			if w := agentmemory.Warning(len(ls)); w != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "warning: "+termsafe.String(w))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}
