package cli

import (
	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/runtime/local"
)

// newSuperviseCommand is the hidden `sett supervise --plan FILE` that the
// local runtime starts, detached, to run and restart an instance's
// processes. It logs to stderr (the supervisor's log file) and stops
// everything on SIGTERM, which cancels the command's context.
func newSuperviseCommand() *cobra.Command {
	var plan string
	cmd := &cobra.Command{
		Use:    "supervise --plan FILE",
		Short:  "Run and restart the processes of a local instance (started by `sett up --runtime local`)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if plan == "" {
				return usageError("--plan is required")
			}
			return local.Supervise(cmd.Context(), plan, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&plan, "plan", "", "the plan file written by `sett up`")
	return cmd
}
