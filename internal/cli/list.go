package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/runtime"
)

func newListCommand(app *App) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "list [-o table|json]",
		Short: "List the instances of every runtime with their status",
		Long: `List every instance Sett started on this machine, in any workspace, with its
status: running (everything healthy), degraded (something is down or
restarting) or stopped.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(output, "table", "json"); err != nil {
				return err
			}
			return runList(cmd, app, output)
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table or json")
	return cmd
}

func runList(cmd *cobra.Command, app *App, output string) error {
	var all []runtime.Listing
	var failures []error
	names := app.runtimeNames()
	for _, name := range names {
		ls, err := app.Runtimes[name].List(cmd.Context())
		if err != nil {
			// One runtime that cannot answer (no Docker daemon) must not
			// hide the instances of the others.
			failures = append(failures, fmt.Errorf("runtime %s: %w", name, err))
			fmt.Fprintf(cmd.ErrOrStderr(), "warning: cannot list the instances of the %s runtime: %v\n", name, err)
			continue
		}
		all = append(all, ls...)
	}
	if len(names) > 0 && len(failures) == len(names) {
		return fmt.Errorf("no runtime could list its instances: %w", failures[0])
	}
	sort.Slice(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		if a.Runtime != b.Runtime {
			return a.Runtime < b.Runtime
		}
		if a.Workspace != b.Workspace {
			return a.Workspace < b.Workspace
		}
		return a.ComposeProject < b.ComposeProject
	})
	if output == "json" {
		if all == nil {
			all = []runtime.Listing{}
		}
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		return enc.Encode(all)
	}
	return writeListTable(cmd.OutOrStdout(), styleFor(app), all)
}

// writeListTable renders listings as an aligned table.
func writeListTable(w io.Writer, style outputStyle, ls []runtime.Listing) error {
	if len(ls) == 0 {
		fmt.Fprintln(w, "No instances. Start one with `sett up`.")
		return nil
	}
	t := newTable(w, style, "NAME", "RUNTIME", "STATUS", "COMPONENTS", "WORKSPACE")
	var notes []string
	for _, l := range ls {
		t.row(cell{text: l.Name}, cell{text: runtimeCell(l)}, cell{text: l.Status, colour: statusColour(l.Status)},
			cell{text: componentsCell(l.Components)}, cell{text: l.Workspace})
		if n := manageNote(l); n != "" {
			notes = append(notes, n)
		}
	}
	if err := t.flush(); err != nil {
		return err
	}
	if len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintln(w, n)
		}
	}
	return nil
}

// runtimeCell is the RUNTIME of a listing: the runtime, and for a stack
// that another tool manages that tool too — "docker (compose)": Docker
// runs it, Compose stops it. (The JSON keeps runtime "docker" and says
// managed_by "compose": see runtime.Listing.)
func runtimeCell(l runtime.Listing) string {
	if l.ManagedBy == "" {
		return l.Runtime
	}
	return l.Runtime + " (" + l.ManagedBy + ")"
}

// manageNote says how to stop a listing that `sett down` leaves alone (a
// compose stack); "" for the others.
func manageNote(l runtime.Listing) string {
	if l.ManagedBy != runtime.ManagedByCompose {
		return ""
	}
	dir := "the directory of its docker-compose.yml"
	if l.ComposeDir != "" {
		dir = l.ComposeDir
	}
	project := ""
	if l.ComposeProject != "" {
		project = " project " + l.ComposeProject
	}
	return fmt.Sprintf("%s is the Docker Compose%s: stop it with `docker-compose down` in %s, not `sett down`.", l.Name, project, dir)
}

// componentsCell is "4/4 healthy", or that followed by the components
// that are not, such as "3/4 healthy (writer restarting)".
func componentsCell(components map[string]string) string {
	healthy := 0
	var others []string
	for name, state := range components {
		if state == "healthy" {
			healthy++
		} else {
			others = append(others, name+" "+state)
		}
	}
	sort.Strings(others)
	cell := fmt.Sprintf("%d/%d healthy", healthy, len(components))
	if len(others) > 0 {
		cell += " (" + strings.Join(others, ", ") + ")"
	}
	return cell
}

// statusColour is green for running, red for stopped and yellow for
// anything else (degraded).
func statusColour(status string) colour {
	switch status {
	case "running":
		return colourGreen
	case "stopped":
		return colourRed
	}
	return colourYellow
}
