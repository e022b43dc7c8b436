package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"time"

	"github.com/settdev/sett/internal/instance"
)

// An instance is a name and a workspace. Sett remembers it with its
// runtime whether it runs or not (the record stays after `sett down`, and
// the Docker runtime keeps its labelled volume), so that `sett up` in the
// workspace starts the same instance again — same name, same runtime,
// same data — and refuses to start a second, empty instance of that name
// on another runtime by accident.

// knownInstance is an instance of the workspace that a record remembers
// or a runtime reports, with its status (running, degraded or stopped).
type knownInstance struct {
	Name, Runtime, Workspace, Status string
}

// upIdentityRequest is what `sett up` was asked for.
type upIdentityRequest struct {
	Workspace string
	// Name is the name given by --name, SETT_INSTANCE or sett.yml; ""
	// when none was, and Derived (from the workspace directory) applies
	// unless the workspace remembers an instance.
	Name, Derived string
	// Runtime is --runtime, or the default when RuntimeExplicit is false.
	Runtime         string
	RuntimeExplicit bool
	Force           bool
}

// upIdentity is what `sett up` starts: the instance's name and runtime,
// and a warning to print ("" for none).
type upIdentity struct {
	Name, Runtime, Warning string
}

// identityConflictError is `sett up` refusing to start a second runtime
// for an instance (name and workspace) another runtime already holds.
type identityConflictError struct{ msg string }

func (e *identityConflictError) Error() string { return e.msg }

// decideUpIdentity picks the name and runtime of `sett up` from what the
// workspace remembers (known; other workspaces' instances are ignored):
//   - the name is the one given; else the workspace's only remembered
//     instance's (reused); else the derived one;
//   - the runtime is the one given; else the one that holds that name in
//     this workspace (the running one when two do); else the default;
//   - a runtime given explicitly that differs from the one holding the
//     name is refused unless Force, and the error names the running (or
//     remembered) instance and the commands to use.
func decideUpIdentity(req upIdentityRequest, known []knownInstance) (upIdentity, error) {
	ws := filepath.Clean(req.Workspace)
	var mine []knownInstance
	names := map[string]bool{}
	for _, k := range known {
		if filepath.Clean(k.Workspace) == ws {
			mine = append(mine, k)
			names[k.Name] = true
		}
	}
	// Running first, then by runtime: the instance to name in messages.
	sort.SliceStable(mine, func(i, j int) bool {
		ri, rj := mine[i].Status != "stopped", mine[j].Status != "stopped"
		if ri != rj {
			return ri
		}
		return mine[i].Runtime < mine[j].Runtime
	})
	id := upIdentity{Name: req.Name, Runtime: req.Runtime}
	if id.Name == "" {
		id.Name = req.Derived
		if len(names) == 1 {
			id.Name = mine[0].Name
		}
	}
	var holders []knownInstance
	sameRuntime := false
	for _, k := range mine {
		if k.Name == id.Name {
			holders = append(holders, k)
			sameRuntime = sameRuntime || k.Runtime == req.Runtime
		}
	}
	if len(holders) == 0 {
		return id, nil
	}
	if !req.RuntimeExplicit {
		id.Runtime = holders[0].Runtime
		return id, nil
	}
	if sameRuntime {
		return id, nil
	}
	other := holders[0]
	if req.Force {
		if other.Status != "stopped" {
			id.Warning = fmt.Sprintf("instance %s also runs in this workspace on the %s runtime, with its own data: the two are separate instances, and Sett now remembers %s on the %s runtime (stop the other with `sett down --name %s` before it)",
				id.Name, other.Runtime, id.Name, req.Runtime, id.Name)
		} else {
			id.Warning = fmt.Sprintf("instance %s of this workspace was a stopped %s instance: its data stays with the %s runtime (`sett down --name %s --purge` deletes it once you start %s there again); the %s instance starts empty",
				id.Name, other.Runtime, other.Runtime, id.Name, id.Name, req.Runtime)
		}
		return id, nil
	}
	if other.Status != "stopped" {
		return id, &identityConflictError{fmt.Sprintf(
			"instance %s already runs in this workspace (%s) on the %s runtime (%s): `--runtime %s` would start a second instance %s with its own, empty data. "+
				"Use the running one (`sett status --name %s`); to move it, stop it with `sett down --name %s` and run `sett up --name %s --runtime %s --force`; --force alone starts both",
			id.Name, ws, other.Runtime, other.Status, req.Runtime, id.Name, id.Name, id.Name, id.Name, req.Runtime)}
	}
	return id, &identityConflictError{fmt.Sprintf(
		"instance %s of this workspace (%s) is a stopped %s instance whose data is kept: `sett up --name %s --runtime %s` starts it again with that data. "+
			"`--runtime %s` would start a new, empty instance %s instead: pass --force for that",
		id.Name, ws, other.Runtime, id.Name, other.Runtime, req.Runtime, id.Name)}
}

// knownInstances gathers the instances of workspace that Sett remembers:
// its records (stopped ones included) and what each runtime lists there
// (a runtime that cannot answer, such as Docker without a daemon, is left
// out), compose stacks excepted. A runtime's status wins over a record's.
func knownInstances(ctx context.Context, app *App, workspace string) []knownInstance {
	byKey := map[string]knownInstance{}
	var order []string
	put := func(k knownInstance) {
		key := k.Name + "\x00" + k.Runtime
		if _, ok := byKey[key]; !ok {
			order = append(order, key)
		}
		byKey[key] = k
	}
	ws := filepath.Clean(workspace)
	if recs, err := instance.InWorkspace(workspace); err == nil {
		for _, r := range recs {
			status := "running"
			if r.Stopped() {
				status = "stopped"
			}
			put(knownInstance{Name: r.Name, Runtime: r.Runtime, Workspace: r.Workspace, Status: status})
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, name := range app.runtimeNames() {
		ls, err := app.Runtimes[name].List(ctx)
		if err != nil {
			continue
		}
		for _, l := range ls {
			// A compose stack on this workspace is Compose's to start:
			// `sett up` neither reuses its name nor restarts it (the
			// Docker runtime refuses to start beside it, and says so).
			if l.ManagedBy != "" {
				continue
			}
			if filepath.Clean(l.Workspace) == ws {
				put(knownInstance{Name: l.Name, Runtime: l.Runtime, Workspace: l.Workspace, Status: l.Status})
			}
		}
	}
	out := make([]knownInstance, 0, len(order))
	for _, key := range order {
		out = append(out, byKey[key])
	}
	return out
}

// now is the App's clock (time.Now when unset).
func (a *App) now() time.Time {
	if a.Now == nil {
		return time.Now()
	}
	return a.Now()
}
