package cli

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/orchestrator"
)

// gcView is `sett gc -o json`.
type gcView struct {
	DryRun    bool     `json:"dry_run"`
	Workflows []string `json:"workflows"`
	Keys      int      `json:"keys"`
	Events    int64    `json:"events"`
	Consumers []string `json:"consumers"`
	Skipped   int      `json:"skipped"`
}

func newGCCmd(app *App) *cobra.Command {
	var dryRun bool
	var output string
	cmd := &cobra.Command{
		Use:   "gc [--dry-run] [-o text|json]",
		Short: "Apply the retention settings now (--dry-run: show what they would remove)",
		Long: `Run one pass of the janitor that the leading orchestrator runs every
retention.interval (sett.yml retention: finished workflows older than
retention.workflows, events beyond events_max_len or older than
events_max_age, consumers idle longer than consumer_idle). With --dry-run
nothing is deleted; the output lists what a pass would remove. A pass
deletes at most retention.batch workflows; run it again for more.
Learnings are never deleted. 'sett down' never deletes data.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(output, "text", "json"); err != nil {
				return err
			}
			ret := config.Default().Retention
			cfg, _, err := config.Load(configPathIn(app.Workspace()))
			switch {
			case err == nil:
				ret = cfg.Retention
			case errors.Is(err, fs.ErrNotExist):
				fmt.Fprintln(cmd.ErrOrStderr(), "note: no sett.yml here; using the default retention settings")
			default:
				return err
			}
			return app.withBlackboardAs(cmd.Context(), instance.AccessAdmin, func(bb *blackboard.Client) error {
				j := orchestrator.NewJanitor(bb, orchestrator.RetentionFrom(ret), zerolog.Nop())
				rep, err := j.Pass(cmd.Context(), dryRun)
				v := gcView{DryRun: dryRun, Workflows: rep.Workflows, Keys: rep.Keys, Events: rep.Events,
					Consumers: rep.Consumers, Skipped: rep.Skipped}
				if v.Workflows == nil {
					v.Workflows = []string{}
				}
				if v.Consumers == nil {
					v.Consumers = []string{}
				}
				out := cmd.OutOrStdout()
				if output == "json" {
					if werr := writeJSONIndent(out, v); werr != nil {
						return werr
					}
					return err
				}
				verb := "removed"
				if dryRun {
					verb = "would remove"
				}
				fmt.Fprintf(out, "%s %d finished workflows (%d keys), %d events, %d idle consumers\n",
					verb, len(v.Workflows), v.Keys, v.Events, len(v.Consumers))
				for _, id := range v.Workflows {
					fmt.Fprintln(out, "  workflow "+id)
				}
				for _, c := range v.Consumers {
					fmt.Fprintln(out, "  consumer "+c)
				}
				if v.Skipped > 0 {
					fmt.Fprintf(out, "%d workflows changed during the pass; the next pass looks again\n", v.Skipped)
				}
				return err
			})
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "show what retention would remove; delete nothing")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}
