package docker

import (
	"fmt"
	"net/url"
)

// containerDockerSocket is where a controller agent's container sees the
// Docker socket, and what its worker launcher dials.
const containerDockerSocket = "/var/run/docker.sock"

// launcherPath is the worker launcher (cmd/sett-worker) and cubPath the
// cub in a controller agent's image; sett-cub:local carries both there.
const (
	launcherPath = "/usr/local/bin/sett-worker"
	cubPath      = "/usr/local/bin/sett-cub"
)

// dockerSocket is the Docker socket of the host as the runtime hands it to
// controller agents: its path on the host and the group that may use it.
type dockerSocket struct {
	// Path is the socket on the host; the controller's container gets it
	// bind-mounted at containerDockerSocket.
	Path string
	// Group is the socket's group id, added to the controller's
	// (non-root) user so that it may connect.
	Group string
}

// hostDockerSocket finds the socket behind the daemon address host (the
// runtime client's, "unix:///var/run/docker.sock"). Controller agents need
// a daemon on a local Unix socket: a TCP or SSH daemon cannot be mounted
// into a container. Errors wrap ErrInvalidSpec and say what to change.
func hostDockerSocket(host string, agents []string) (dockerSocket, error) {
	u, err := url.Parse(host)
	if err != nil || u.Scheme != "unix" || u.Path == "" {
		return dockerSocket{}, fmt.Errorf("%w: agents %v run in mode: controller, which needs the Docker daemon on a local Unix socket to hand to their containers, but the daemon is at %q: point DOCKER_HOST at unix:///var/run/docker.sock (or your daemon's socket), or remove mode: controller",
			ErrInvalidSpec, agents, host)
	}
	gid, err := fileGroup(u.Path)
	if err != nil {
		return dockerSocket{}, fmt.Errorf("%w: agents %v run in mode: controller, but the Docker socket %s cannot be inspected: %v", ErrInvalidSpec, agents, u.Path, err)
	}
	return dockerSocket{Path: u.Path, Group: gid}, nil
}
