package docker

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/client"

	"github.com/settdev/sett/internal/instance"
)

// Logs writes the log of a component's container — "redis",
// "orchestrator" or an agent name — to w, stdout and stderr demultiplexed
// into w in order. With follow it keeps writing until ctx ends, which is
// not an error. The container is found by its labels, so the record only
// needs the instance name. Errors wrap ErrUnknownComponent (listing the
// components) or ErrDockerUnavailable.
func (r *Runtime) Logs(ctx context.Context, rec *instance.Record, component string, follow bool, w io.Writer) error {
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
	var id string
	var names []string
	for _, c := range list.Items {
		name := componentName(c.Labels)
		names = append(names, name)
		if name == component {
			id = c.ID
		}
	}
	if id == "" {
		sort.Strings(names)
		if len(names) == 0 {
			return fmt.Errorf("%w: instance %s has no containers (is it running? try `sett up --name %s --runtime docker`)", ErrUnknownComponent, rec.Name, rec.Name)
		}
		return fmt.Errorf("%w: instance %s has no component %q (it has: %s)", ErrUnknownComponent, rec.Name, component, strings.Join(names, ", "))
	}
	rc, err := cli.ContainerLogs(ctx, id, client.ContainerLogsOptions{ShowStdout: true, ShowStderr: true,
		Follow: follow, Tail: "all"})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("docker: logs of %s: %w", component, err)
	}
	defer rc.Close()
	// The daemons run without a TTY, so the stream is multiplexed.
	if _, err := stdcopy.StdCopy(w, w, rc); err != nil && ctx.Err() == nil {
		return fmt.Errorf("docker: logs of %s: %w", component, err)
	}
	return nil
}
