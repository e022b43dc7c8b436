package cli

import "github.com/spf13/cobra"

// addLifecycleCommands adds init, up, down, list and logs.
func addLifecycleCommands(root *cobra.Command, app *App) {}
