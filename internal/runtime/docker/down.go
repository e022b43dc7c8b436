package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/settdev/sett/internal/instance"
)

// Down stops and removes the instance's containers and network, found by
// their labels: the agents and the orchestrator first (each gets
// Options.StopTimeout after SIGTERM), then any worker container a
// controller agent left, Redis last, so that the daemons
// leave cleanly. The Redis volume and the saved password stay unless
// purge. Down on an instance that has nothing left is not an error.
//
// What Docker Compose manages (composeProjectOf: the stack of
// docker-compose.yml, whose labels name the instance too) is never
// touched: when that is all there is of the instance, Down stops nothing
// and returns ErrComposeManaged, which names the `docker-compose down`
// to run instead.
//
// Errors wrap ErrDockerUnavailable or ErrComposeManaged, or name what
// could not be removed.
func (r *Runtime) Down(ctx context.Context, rec *instance.Record, purge bool) error {
	if rec == nil || rec.Name == "" {
		return fmt.Errorf("%w: no instance record", ErrInvalidSpec)
	}
	cli, err := r.client(ctx)
	if err != nil {
		return err
	}
	list, err := cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: instanceFilter(rec.Name)})
	if err != nil {
		return fmt.Errorf("docker: list containers of %s: %w", rec.Name, err)
	}
	projects := composeProjects{}
	var daemons, workers, redis []string
	for _, c := range list.Items {
		if p, ok := composeProjectOf(c.Labels); ok {
			projects.add(p)
			continue
		}
		switch c.Labels[LabelComponent] {
		case ComponentRedis:
			redis = append(redis, c.ID)
		case ComponentWorker:
			workers = append(workers, c.ID)
		default:
			daemons = append(daemons, c.ID)
		}
	}
	nets, err := cli.NetworkList(ctx, client.NetworkListOptions{Filters: instanceFilter(rec.Name)})
	if err != nil {
		return fmt.Errorf("docker: list networks of %s: %w", rec.Name, err)
	}
	var networks [][2]string // ID, name
	for _, n := range nets.Items {
		if p, ok := composeProjectOf(n.Labels); ok {
			projects.add(p)
			continue
		}
		networks = append(networks, [2]string{n.ID, n.Name})
	}
	var volumes []string
	if purge {
		vols, err := cli.VolumeList(ctx, client.VolumeListOptions{Filters: instanceFilter(rec.Name)})
		if err != nil {
			return fmt.Errorf("docker: list volumes of %s: %w", rec.Name, err)
		}
		for _, v := range vols.Items {
			if p, ok := composeProjectOf(v.Labels); ok {
				projects.add(p)
				continue
			}
			volumes = append(volumes, v.Name)
		}
	}
	if err := projects.refuse(rec.Name, len(daemons)+len(workers)+len(redis)+len(networks)+len(volumes), purge); err != nil {
		return err
	}

	var errs []error
	errs = append(errs, r.stopAll(ctx, cli, daemons)...)
	// Stopping a controller stops its launchers, which remove their own
	// workers; what is left (a killed launcher's) goes now.
	errs = append(errs, removeWorkers(ctx, cli, workers)...)
	errs = append(errs, r.stopAll(ctx, cli, redis)...)
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, n := range networks {
		if _, err := cli.NetworkRemove(ctx, n[0], client.NetworkRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("docker: remove network %s: %w", n[1], err))
		}
	}
	if purge {
		for _, v := range volumes {
			if _, err := cli.VolumeRemove(ctx, v, client.VolumeRemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("docker: remove volume %s: %w", v, err))
			}
		}
		if rec.Workspace != "" {
			for _, dir := range []string{stateDir(rec.Workspace, rec.Name), legacyStateDir(rec.Workspace, rec.Name)} {
				if err := os.RemoveAll(dir); err != nil {
					errs = append(errs, fmt.Errorf("docker: %w", err))
				}
			}
		}
	}
	return errors.Join(errs...)
}

// stopAll stops the containers concurrently, then removes them.
func (r *Runtime) stopAll(ctx context.Context, cli *client.Client, ids []string) []error {
	timeout := int(r.stopTimeout().Seconds())
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A failed stop needs no report: the forced removal below
			// kills what did not stop, and reports if that fails too.
			_, _ = cli.ContainerStop(ctx, id, client.ContainerStopOptions{Timeout: &timeout})
			if err := removeContainer(ctx, cli, id); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("docker: %w", err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errs
}

// removeWorkers force-removes worker containers concurrently. A worker
// that is gone, or whose removal its launcher already started (a
// conflict: the daemon finishes it), is no error.
func removeWorkers(ctx context.Context, cli *client.Client, ids []string) []error {
	var mu sync.Mutex
	var errs []error
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
			if err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
				mu.Lock()
				errs = append(errs, fmt.Errorf("docker: remove worker container %s: %w", id, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errs
}
