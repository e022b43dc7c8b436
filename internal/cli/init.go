package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/scaffold"
)

func newInitCommand(app *App) *cobra.Command {
	var force bool
	var vaultPath string
	cmd := &cobra.Command{
		Use:   "init [--force]",
		Short: "Create sett.yml and an example agent in the current directory",
		Long: `Create, in the current directory, a sett.yml with two example agents (a writer
and a reviewer) that 'sett up' runs as it is, and agents/hello/: a tiny tool
and a guide to writing your own agent. Adds .sett/ to .gitignore.

Existing files are never overwritten unless --force is given.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			written, err := scaffold.Write(app.Dir, force)
			if err != nil {
				return err
			}
			ignored, err := scaffold.EnsureGitignore(app.Dir)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if vaultPath != "" {
				if err := initVault(out, app.Dir, vaultPath, written); err != nil {
					return err
				}
			}
			fmt.Fprintf(out, "Created %s", strings.Join(written, ", "))
			if ignored {
				fmt.Fprintf(out, "; added %s to .gitignore", scaffold.GitignoreEntry)
			}
			fmt.Fprint(out, `.

Next:
  sett up --runtime local    run it as processes here (needs redis-server, and
                             sett-writer and sett-reviewer next to sett or on PATH:
                             make build puts them all in bin/)
  sett up                    or run it in containers (needs Docker and the images:
                             make images)
  sett forage --goal "Add a /health endpoint" --wait
                             post a goal and wait for its outcome (in a Git
                             repository the files init wrote may stay uncommitted)

Write your own agent: see agents/hello/README.md.
`)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "overwrite existing files")
	cmd.Flags().StringVar(&vaultPath, "vault", "", "also create a vault (SPEC §9) at this path and set vault.path in a new sett.yml")
	return cmd
}
