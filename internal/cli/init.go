package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/scaffold"
)

func newInitCommand(app *App) *cobra.Command {
	var force bool
	var vaultPath string
	var template string
	var compose bool
	var composeWorkspace string
	cmd := &cobra.Command{
		Use:   "init [--template default|coding] [--vault PATH] [--force]",
		Short: "Create sett.yml and an example agent in the current directory",
		Long: `Create, in the current directory, a sett.yml with two example agents (a writer
and a reviewer) that 'sett up' runs as it is, and agents/hello/: a tiny tool
and a guide to writing your own agent. Adds .sett/ to .gitignore.

--vault PATH also creates a vault (a folder of Markdown files) and, with
the default template, writes the vault's flow (seed 000) instead: a planner
whose plans wait for your approval in PATH/Pending_Approval/, and a learner
that turns each rejection into a learning. Its model is chosen from this
environment: LLM_PROVIDER and LLM_MODEL, else ANTHROPIC_API_KEY or
OPENAI_API_KEY / OPENAI_BASE_URL, else the bundled fake model.

--template coding writes a coding pipeline instead: planner (LLM) → your
approval of the plan → reviewer (LLM) → coder (Claude Code, on the branch
sett/<workflow>) → reviewer (LLM), with a learner that turns your rejections
into learnings; fill in the provider settings in sett.yml before 'sett up'.

--compose writes, instead, the .env of the Docker Compose stack in the
directory of docker-compose.yml (the root of the Sett repository): a unique
project name, a generated Redis password, a free Redis port and an explicit
workspace (./workspace, or --workspace). 'docker-compose up' reads it, and the
sett commands run in that directory find the stack from it.

Existing files are never overwritten unless --force is given.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if compose {
				return initCompose(cmd.OutOrStdout(), app.Dir, composeWorkspace, force)
			}
			if composeWorkspace != "" {
				return usageError("--workspace is for --compose")
			}
			written, err := scaffold.WriteTemplate(app.Dir, template, force)
			if errors.Is(err, scaffold.ErrUnknownTemplate) {
				return usageError("--template: %v", err)
			}
			if err != nil {
				return err
			}
			ignored, err := scaffold.EnsureGitignore(app.Dir)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if vaultPath != "" {
				if err := initVault(out, app.Dir, vaultPath, written, template, app.env); err != nil {
					return err
				}
			}
			fmt.Fprintf(out, "Created %s", strings.Join(written, ", "))
			if ignored {
				fmt.Fprintf(out, "; added %s to .gitignore", scaffold.GitignoreEntry)
			}
			if vaultPath != "" && template == scaffold.TemplateDefault {
				fmt.Fprintf(out, `.

Next:
  sett up --runtime local    run it here (needs redis-server and sett-agent-llm,
                             sett-reviewer next to sett or on PATH: make build)
  sett up                    or in containers (make images)
  Then write a task into %[1]s/Needs_Action/ (a Markdown file), wait for its
  plan in %[1]s/Pending_Approval/, and move that file to Approved/ or Rejected/.
  See docs/vault.md.
`, vaultPath)
				return nil
			}
			if template == scaffold.TemplateCoding {
				fmt.Fprint(out, `.

Next:
  1. In sett.yml, set the model and key of the LLM agents (LLM_MODEL,
     OPENAI_BASE_URL / OPENAI_API_KEY, or LLM_PROVIDER: anthropic and
     ANTHROPIC_API_KEY) and the coder's ANTHROPIC_API_KEY.
  2. sett up                 (needs Docker and the images sett-agent-llm:local
                             and sett-agent-coder:local: agents/README.md)
  3. sett forage --goal "Add a /health endpoint" --watch
  4. sett approvals, then sett approve PLAN (or sett reject PLAN --reason "...")

Try it without a provider: make demo-llm (in the Sett repository) runs this
pipeline against a fake model.
`)
				return nil
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
	cmd.Flags().BoolVar(&compose, "compose", false, "write .env for docker-compose.yml here instead (project name, Redis password and port, workspace)")
	cmd.Flags().StringVar(&composeWorkspace, "workspace", "", "with --compose: the directory the agents mount at /workspace (default ./workspace)")
	cmd.Flags().StringVar(&vaultPath, "vault", "", "also create a vault at this path and set vault.path in a new sett.yml")
	cmd.Flags().StringVar(&template, "template", scaffold.TemplateDefault, "what to scaffold: default (writer and reviewer) or coding (planner, reviewer, coder, learner)")
	return cmd
}
