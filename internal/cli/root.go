package cli

import (
	"time"

	"github.com/spf13/cobra"
)

// Version is set at build time (-ldflags "-X ...cli.Version=...").
var Version = "dev"

// NewRoot builds the `sett` command tree.
func NewRoot(app *App) *cobra.Command {
	root := &cobra.Command{
		Use:   "sett",
		Short: "Sett coordinates teams of containerized AI agents through a Redis blackboard",
		Long: `Sett coordinates teams of containerized AI agents through a Redis blackboard.

Post a goal with 'sett forage', watch the agents bid and work with 'sett watch',
and audit every step with 'sett hoard'. Start an instance with 'sett up'.`,
		Version:       currentVersion().String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(app.In)
	root.SetOut(app.Out)
	root.SetErr(app.Err)
	pf := root.PersistentFlags()
	pf.StringVarP(&app.name, "name", "n", "", "instance name (default: the instance of this workspace; env SETT_INSTANCE)")
	pf.StringVar(&app.redisURL, "redis-url", "", "connect to this Redis directly (env SETT_REDIS_URL)")
	pf.BoolVar(&app.noColor, "no-color", false, "never colour the output (also: NO_COLOR)")
	pf.BoolVar(&app.fullIDs, "full", false, "show ids whole in listings, not their first 8 characters (-o json always has them whole)")
	pf.DurationVar(&app.opTimeout, "timeout-op", 5*time.Second, "bound on each Redis round trip")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError("%v", err) })

	addLifecycleCommands(root, app)
	addObservabilityCommands(root, app)
	addHumanCommands(root, app)
	addControlCommands(root, app)
	root.AddCommand(newACLCmd(app), newVersionCmd(app), newRedisCLICmd(app), newServiceCmd(app))
	// --version prints the same line as `sett version`.
	root.SetVersionTemplate("{{.Version}}\n")
	return root
}
