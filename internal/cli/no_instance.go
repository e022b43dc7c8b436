package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
)

// noInstanceError says precisely why a command found no instance: the
// named instance does not exist, or is stopped (what `sett list` shows),
// or this workspace has none. It still matches instance.ErrNoInstance.
type noInstanceError struct{ msg string }

func (e *noInstanceError) Error() string { return e.msg }
func (e *noInstanceError) Unwrap() error { return instance.ErrNoInstance }

// explainNoInstance replaces a bare instance.ErrNoInstance with what the
// runtimes know: `sett status` must not say "no instance here" while
// `sett list` shows the instance stopped, nor suggest --name to someone
// who passed it. Other errors pass through.
func explainNoInstance(ctx context.Context, app *App, err error) error {
	if err == nil || !isNoInstance(err) {
		return err
	}
	ws := filepath.Clean(app.Workspace())
	name := app.InstanceName()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	for _, rtName := range app.runtimeNames() {
		ls, lerr := app.Runtimes[rtName].List(ctx)
		if lerr != nil {
			continue
		}
		for _, l := range ls {
			mine := l.Name == name || (name == "" && filepath.Clean(l.Workspace) == ws)
			if !mine {
				continue
			}
			if l.ManagedBy == runtime.ManagedByCompose {
				return &noInstanceError{composeHint(l)}
			}
			if l.Status == "stopped" {
				// The hint names the instance and its runtime: a bare
				// `sett up` could start another, empty one on the default
				// runtime.
				return &noInstanceError{fmt.Sprintf("instance %s (%s runtime, workspace %s) is stopped: `sett up --name %s --runtime %s` starts it again with its data",
					l.Name, l.Runtime, l.Workspace, l.Name, l.Runtime)}
			}
			return &noInstanceError{fmt.Sprintf("instance %s (%s runtime) is %s but has no record in %s: run the command in its workspace %s",
				l.Name, l.Runtime, l.Status, ws, l.Workspace)}
		}
	}
	if name != "" {
		return &noInstanceError{fmt.Sprintf("no instance named %s: `sett list` shows the instances; `sett up --name %s` starts one here", name, name)}
	}
	return &noInstanceError{fmt.Sprintf("no instance in this workspace (%s): start one with `sett up`, or pass --name for another (`sett list` shows them)", ws)}
}

// composeHint is explainNoInstance for a compose stack: the sett commands
// find it from the .env of its directory (not from its workspace), and
// Compose, not `sett up`, starts it again.
func composeHint(l runtime.Listing) string {
	dir := "the directory of its docker-compose.yml"
	if l.ComposeDir != "" {
		dir = l.ComposeDir
	}
	if l.Status == "stopped" {
		return fmt.Sprintf("instance %s is a Docker Compose stack (project %s) and is stopped: `docker-compose up -d` in %s starts it again with its data",
			l.Name, l.ComposeProject, dir)
	}
	return fmt.Sprintf("instance %s is a Docker Compose stack (project %s, %s): run the command in %s, whose .env names it",
		l.Name, l.ComposeProject, l.Status, dir)
}

// isNoInstance reports whether err is, or wraps, instance.ErrNoInstance.
func isNoInstance(err error) bool {
	for e := err; e != nil; {
		if e == instance.ErrNoInstance {
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

func nameFlag(name string) string {
	if name == "" {
		return ""
	}
	return " --name " + name
}
