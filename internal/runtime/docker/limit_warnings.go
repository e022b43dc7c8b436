package docker

import (
	"context"
	"fmt"
	"strings"

	"github.com/moby/moby/api/types/system"
	"github.com/moby/moby/client"
)

// warnUnenforcedLimits tells the user, once per Up, which configured
// limits the daemon says it cannot enforce (cgroup controllers missing, as
// on some rootless or WSL setups): the daemon accepts them silently.
func warnUnenforcedLimits(ctx context.Context, cli *client.Client, p *stackPlan, warn func(string)) {
	if warn == nil {
		return
	}
	res, err := cli.Info(ctx, client.InfoOptions{})
	if err != nil {
		return // Up fails on its own if the daemon is gone
	}
	for _, w := range unenforcedLimits(res.Info, p) {
		warn(w)
	}
}

// unenforcedLimits lists the limits of p that a daemon with info cannot
// apply.
func unenforcedLimits(info system.Info, p *stackPlan) []string {
	var cpus, mem, pids []string
	for _, c := range append(append([]containerSpec{}, p.Agents...), p.Orchestrator) {
		name := c.Agent
		if name == "" {
			name = c.Component
		}
		if c.NanoCPUs > 0 && !info.CPUCfsQuota {
			cpus = append(cpus, name)
		}
		if c.Memory > 0 && !info.MemoryLimit {
			mem = append(mem, name)
		}
		if c.PidsLimit > 0 && !info.PidsLimit {
			pids = append(pids, name)
		}
	}
	var out []string
	for _, l := range []struct {
		what  string
		names []string
	}{{"CPU limits (resources.cpus)", cpus}, {"memory limits (resources.memory)", mem}, {"the pids limit (services.containers.pids_limit)", pids}} {
		if len(l.names) > 0 {
			out = append(out, fmt.Sprintf("the Docker daemon cannot enforce %s here (its cgroup controller is missing): not applied to %s", l.what, strings.Join(l.names, ", ")))
		}
	}
	return out
}
