package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/moby/moby/client"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/instance"
)

// DownByName is Down for an instance that has no record: one whose
// `sett up` was killed before the record was saved (its containers may
// still run), or one whose data an earlier Down kept. It finds what is
// labelled with name and workspace, stops and removes the containers and
// network as Down does and, with purge, deletes the volume and the saved
// password.
//
// A compose stack of that name (in any workspace: compose's workspace is
// SETT_WORKSPACE_DIR, rarely the directory sett runs in) is left alone;
// when nothing else of the name exists, DownByName returns
// ErrComposeManaged, which names the `docker-compose down` that stops
// it.
//
// It reports whether it stopped anything and whether it deleted data;
// both are false when nothing of the instance exists — also when no Docker
// daemon is reachable, so that `sett down` still serves the other
// runtimes on machines without Docker.
func (r *Runtime) DownByName(ctx context.Context, workspace, name string, purge bool) (stopped, purged bool, err error) {
	if err := blackboard.ValidateInstance(name); err != nil {
		return false, false, fmt.Errorf("%w: %v", ErrInvalidSpec, err)
	}
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return false, false, fmt.Errorf("docker: %w", err)
	}
	cli, err := r.client(ctx)
	if errors.Is(err, ErrDockerUnavailable) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	// Everything of the name, compose stacks included, then sett's own
	// of this workspace.
	f := instanceFilter(name)
	cs, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return false, false, fmt.Errorf("docker: list containers of %s: %w", name, err)
	}
	ns, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: f})
	if err != nil {
		return false, false, fmt.Errorf("docker: list networks of %s: %w", name, err)
	}
	vs, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: f})
	if err != nil {
		return false, false, fmt.Errorf("docker: list volumes of %s: %w", name, err)
	}
	// A compose stack's containers and network stop with
	// `docker-compose down`; its volume matters only to a purge.
	projects, data := composeProjects{}, composeProjects{}
	own := func(labels map[string]string, of composeProjects) bool {
		if p, ok := composeProjectOf(labels); ok {
			of.add(p)
			return false
		}
		return labels[LabelWorkspace] == ws
	}
	var running, volumes int
	for _, c := range cs.Items {
		if own(c.Labels, projects) {
			running++
		}
	}
	for _, n := range ns.Items {
		if own(n.Labels, projects) {
			running++
		}
	}
	for _, v := range vs.Items {
		if own(v.Labels, data) {
			volumes++
		}
	}
	if purge {
		for _, p := range data {
			projects.add(p)
		}
	}
	_, statErr := os.Stat(stateDir(ws, name))
	if statErr != nil {
		_, statErr = os.Stat(legacyStateDir(ws, name))
	}
	stopped = running > 0
	hasData := volumes > 0 || statErr == nil
	if !stopped && !(purge && hasData) {
		return false, false, projects.refuse(name, 0, purge)
	}
	if err := r.Down(ctx, &instance.Record{Name: name, Runtime: instance.RuntimeDocker, Workspace: ws}, purge); err != nil {
		return stopped, false, err
	}
	return stopped, purge && hasData, nil
}
