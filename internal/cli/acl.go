package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/acl"
	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
)

func newACLCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "acl",
		Short: "Redis ACL users for an instance on an external Redis",
	}
	var file string
	printCmd := &cobra.Command{
		Use:   "print [--config sett.yml]",
		Short: "Print the ACL SETUSER lines of an instance's users, with fresh passwords",
		Long: `Print, for redis-cli, the ACL SETUSER lines that create the instance's Redis
users, each with its rules (docs/security.md says what each may do):
  - the orchestrator;
  - one user per agent's cubs: only the key families and commands a cub
    needs, artefacts write-once, the workflow hash's counters only, the
    event log append-only, no privilege (cannot end a workflow, lead,
    decide, pause, retry or trim);
  - human, for people's commands (forage, approve/reject, pause/resume,
    retry, cancel, sett ui's actions): cannot lead, trim the event log,
    or change a written artefact;
  - reader, read-only: hoard, watch, the console's pages, and
    redis-cli diagnostics.
No user can run FLUSHALL, CONFIG, KEYS, DEBUG or ACL. The rules use ACL
selectors: Redis 7.0 or later.

Each user gets a new random password; a comment above its line says which
component uses it (SETT_REDIS_USERNAME and SETT_REDIS_PASSWORD). Run the
lines as an admin user of the external Redis, then store the passwords as
secrets. The key prefix follows services.redis.hash_tag (on for a cluster).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if file == "" {
				file = configPathIn(app.Workspace())
			}
			cfg, _, err := config.Load(file)
			if err != nil {
				return err
			}
			name := app.InstanceName()
			if name == "" {
				name = cfg.Instance
			}
			if name == "" {
				name = filepath.Base(filepath.Dir(file))
			}
			if err := blackboard.ValidateInstance(name); err != nil {
				return usageError("instance %q: %v (pass --name)", name, err)
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "# Redis ACL users of Sett instance %s (hash_tag %v). Run as an admin, e.g.\n#   redis-cli -u rediss://admin@redis:6380 < acl.txt\n",
				name, cfg.Services.Redis.HashTag)
			for _, u := range acl.Users(name, cfg.Services.Redis.HashTag, cfg.AgentNames()) {
				pw, err := acl.NewPassword()
				if err != nil {
					return err
				}
				who := map[acl.Role]string{
					acl.RoleOrchestrator: "the orchestrator",
					acl.RoleCub:          "the cubs of agent " + u.Agent,
					acl.RoleHuman:        "people's commands (forage, approve, pause, retry, cancel, sett ui)",
					acl.RoleReader:       "sett hoard/watch, a read-only sett ui and redis-cli (read-only)",
				}[u.Role]
				fmt.Fprintf(out, "\n# %s: SETT_REDIS_USERNAME=%s SETT_REDIS_PASSWORD=%s\n%s\n", who, u.Name, pw, u.SetUser(pw))
			}
			return nil
		},
	}
	printCmd.Flags().StringVarP(&file, "config", "f", "", "sett.yml to read agents and hash_tag from (default: the workspace's)")
	cmd.AddCommand(printCmd)
	return cmd
}
