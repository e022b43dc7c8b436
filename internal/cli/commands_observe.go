package cli

import "github.com/spf13/cobra"

// addObservabilityCommands adds forage, watch, hoard and status.
func addObservabilityCommands(root *cobra.Command, app *App) {
	root.AddCommand(
		newForageCmd(app),
		newWatchCmd(app),
		newHoardCmd(app),
		newStatusCmd(app),
		newUICmd(app),
	)
}
