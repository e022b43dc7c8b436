package cli

import (
	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/termsafe"
)

func newLogsCommand(app *App) *cobra.Command {
	var follow bool
	var tail int
	cmd := &cobra.Command{
		Use:   "logs AGENT|orchestrator|redis [-f | --tail N]",
		Short: "Print the logs of a component of an instance",
		Long: `Print the logs of one component of the instance of this workspace (or
--name): an agent's cub, the orchestrator or Redis. With -f, keep printing
new lines until interrupted; with --tail N, print only the last N lines.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if tail < 0 {
				return usageError("--tail %d: give how many of the last lines to print (at least 1)", tail)
			}
			if tail > 0 && follow {
				return usageError("--tail prints the last lines of the log and -f follows all of it: use one of them")
			}
			if len(args) != 1 {
				return usageError("name one component: an agent, orchestrator or redis (got %d arguments)", len(args))
			}
			rec, err := instance.Find(app.Workspace(), app.InstanceName())
			if err != nil {
				return explainNoInstance(cmd.Context(), app, err)
			}
			rt, err := app.runtimeOfRecord(rec.Name, rec.Runtime)
			if err != nil {
				return err
			}
			// Logs carry tool output and payload text: escape it for the
			// terminal like every other human output.
			out := termsafe.NewWriter(cmd.OutOrStdout())
			if tail == 0 {
				err = rt.Logs(cmd.Context(), rec, args[0], follow, out)
			} else {
				tw := newTailWriter(tail)
				if err = rt.Logs(cmd.Context(), rec, args[0], false, tw); err == nil {
					err = tw.Flush(out)
				}
			}
			if ferr := out.Flush(); err == nil {
				err = ferr
			}
			return err
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new lines until interrupted")
	cmd.Flags().IntVar(&tail, "tail", 0, "print only the last N lines (0: all)")
	return cmd
}
