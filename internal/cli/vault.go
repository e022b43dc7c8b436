package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/scaffold"
	"github.com/settdev/sett/internal/vault"
)

func newVaultCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "vault",
		Short: "Work with the vault (the Markdown mirror of the instance)",
		Long: `The vault (vault.path in sett.yml) is a folder of Markdown files: tasks dropped
in Needs_Action/, approvals in Pending_Approval/, the learnings in
Agent_Memory.md and Dashboard.md. The leading orchestrator keeps it in step
with the blackboard; it is never the source of truth.`,
		Args: cobra.NoArgs,
	}
	var configFlag string
	rebuild := &cobra.Command{
		Use:   "rebuild",
		Short: "Regenerate every vault file from Redis",
		Long: `Regenerate the vault from the blackboard: the folders, Agent_Memory.md's
learning lines (your other lines are kept), a file for every pending
approval, the state of the tasks in progress, the memory files and
Dashboard.md.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfgPath := resolveConfigPath(configFlag, app.env("SETT_CONFIG"), app.Dir, app.Workspace())
			cfg, _, err := config.Load(cfgPath)
			if errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("no configuration at %s: run `sett init`, or pass --config", cfgPath)
			}
			if err != nil {
				return err
			}
			if !cfg.Vault.Enabled() {
				return usageError("%s has no vault: set vault.path (see sett.yml.example)", cfgPath)
			}
			path := cfg.Vault.ResolvedPath(filepath.Dir(cfgPath))
			return app.withBlackboard(cmd.Context(), func(bb *blackboard.Client) error {
				br := vault.NewBridge(bb, vault.OptionsFrom(cfg, path), zerolog.Nop())
				if err := br.Rebuild(cmd.Context()); err != nil {
					return fmt.Errorf("rebuild the vault %s: %w", path, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "Rebuilt the vault %s from instance %s.\n", path, bb.Instance())
				return nil
			})
		},
	}
	rebuild.Flags().StringVar(&configFlag, "config", "", "path to sett.yml (default: the workspace's; env SETT_CONFIG)")
	cmd.AddCommand(rebuild)
	return cmd
}

// scaffoldVault creates what is missing of the vault at path and says
// what it created.
func scaffoldVault(out io.Writer, path string) error {
	created, err := vault.Scaffold(path)
	if err != nil {
		return err
	}
	if len(created) > 0 {
		fmt.Fprintf(out, "Vault %s: created %d folders and files.\n", path, len(created))
	}
	return nil
}

// addVaultKey appends a vault block naming rel to the sett.yml at
// cfgPath (just written by init, so it has none yet).
func addVaultKey(cfgPath, rel string) error {
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		return err
	}
	if strings.Contains(string(data), "\nvault:") {
		return nil
	}
	block := fmt.Sprintf("\n# The vault: drop tasks in Needs_Action/, decide approvals by moving files.\nvault:\n  path: %q\n", rel)
	return os.WriteFile(cfgPath, append(data, []byte(block)...), 0o644)
}

// initVault scaffolds the vault of `sett init --vault PATH` and, when
// init wrote sett.yml, points vault.path at it.
func initVault(out io.Writer, dir, path string, written []string, template string, getenv func(string) string) error {
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(dir, abs)
	}
	if err := scaffoldVault(out, abs); err != nil {
		return err
	}
	if rel, err := filepath.Rel(dir, abs); err == nil {
		added, err := scaffold.EnsureVaultIgnored(dir, rel)
		if err != nil {
			return err
		}
		if added {
			fmt.Fprintf(out, "Added /%s/ to .gitignore: Sett keeps rewriting the vault, which must not make the workspace dirty.\n", filepath.ToSlash(rel))
		}
	}
	for _, w := range written {
		if filepath.Base(w) == config.DefaultFilename {
			p := w
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			if template == scaffold.TemplateDefault {
				// Seed 000's flow: an approval gate on plans and a learner.
				m := scaffold.ChooseModel(getenv)
				fmt.Fprintf(out, "sett.yml: plans wait for your approval in the vault; the planner and learner use the %s model %s (%s).\n", m.Provider, m.Model, m.Why)
				return os.WriteFile(p, scaffold.VaultConfig(path, m), 0o644)
			}
			return addVaultKey(p, path)
		}
	}
	fmt.Fprintf(out, "Set vault.path: %s in sett.yml to use it.\n", path)
	return nil
}
