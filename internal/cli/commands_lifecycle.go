package cli

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/runtime"
)

// addLifecycleCommands adds init, up, down, list and logs, and the hidden
// supervise that the local runtime starts.
func addLifecycleCommands(root *cobra.Command, app *App) {
	root.AddCommand(
		newInitCommand(app),
		newUpCommand(app),
		newDownCommand(app),
		newListCommand(app),
		newLogsCommand(app),
		newSuperviseCommand(),
	)
}

// runtimeNames lists the runtimes of the app, sorted.
func (a *App) runtimeNames() []string {
	names := make([]string, 0, len(a.Runtimes))
	for name := range a.Runtimes {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// runtimeFor returns the runtime that `sett up --runtime name` asks for,
// or a usage error that lists the available ones.
func (a *App) runtimeFor(name string) (runtime.Runtime, error) {
	if rt, ok := a.Runtimes[name]; ok {
		return rt, nil
	}
	names := a.runtimeNames()
	if len(names) == 0 {
		return nil, usageError("runtime %q is not available: this build of sett has no runtimes", name)
	}
	return nil, usageError("runtime %q is not available in this build of sett (available: %s): pass --runtime %s",
		name, strings.Join(names, ", "), names[0])
}

// runtimeOfRecord returns the runtime that started an instance.
func (a *App) runtimeOfRecord(instanceName, runtimeName string) (runtime.Runtime, error) {
	if rt, ok := a.Runtimes[runtimeName]; ok {
		return rt, nil
	}
	return nil, fmt.Errorf("instance %s was started with the %q runtime, which this build of sett does not have (available: %s)",
		instanceName, runtimeName, strings.Join(a.runtimeNames(), ", "))
}
