package cli

import (
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/termsafe"
)

func newLogsCommand(app *App) *cobra.Command {
	var follow bool
	var tail int
	var since, workflow, level, output string
	cmd := &cobra.Command{
		Use:   "logs AGENT|orchestrator|redis [-f | --tail N] [--since T] [--workflow ID] [--level L] [-o text|json]",
		Short: "Print the logs of a component of an instance",
		Long: `Print the logs of one component of the instance of this workspace (or
--name): an agent's cub, the orchestrator or Redis. With -f, keep printing
new lines until interrupted; with --tail N, print only the last N lines (of
those the filters keep).

On a terminal the daemons' JSON lines are rendered for reading (time, level,
message, fields); in a pipe, or with -o json, they stay JSON, one a line.
--since keeps lines from a duration ago (10m, 2h, 1d) or a time; --workflow
keeps one workflow's lines (an id or prefix); --level keeps lines at that
level or above (debug, info, warn, error).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if output == "" {
				output = "json"
				if app.IsTTY {
					output = "text"
				}
			}
			if err := checkFormat(output, "text", "json"); err != nil {
				return err
			}
			minLevel := zerolog.TraceLevel
			if level != "" {
				l, err := zerolog.ParseLevel(strings.ToLower(level))
				if err != nil || l == zerolog.NoLevel {
					return usageError("--level %q: use debug, info, warn or error", level)
				}
				minLevel = l
			}
			sinceMs, err := parseTimeBound("since", since, app.Now())
			if err != nil {
				return err
			}
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
				lf := newLogFilter(out, output == "text", sinceMs, workflow, minLevel)
				err = rt.Logs(cmd.Context(), rec, args[0], follow, lf)
				if ferr := lf.Flush(); err == nil {
					err = ferr
				}
			} else {
				tw := newTailWriter(tail)
				lf := newLogFilter(tw, output == "text", sinceMs, workflow, minLevel)
				if err = rt.Logs(cmd.Context(), rec, args[0], false, lf); err == nil {
					if err = lf.Flush(); err == nil {
						err = tw.Flush(out)
					}
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
	cmd.Flags().StringVar(&since, "since", "", "only lines since a duration ago (10m, 2h, 1d) or a time (2024-05-01T14:00:00Z)")
	cmd.Flags().StringVar(&workflow, "workflow", "", "only the lines of this workflow (id or prefix)")
	cmd.Flags().StringVar(&level, "level", "", "only lines at this level or above: debug, info, warn, error")
	cmd.Flags().StringVarP(&output, "output", "o", "", "output format: text (rendered) or json (as logged); default text on a terminal, json in a pipe")
	return cmd
}
