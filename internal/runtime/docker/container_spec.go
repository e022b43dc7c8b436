package docker

import (
	"net/netip"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
)

// containerSpec is one container of an instance as Up creates it. It is
// plain data built by newStackPlan, so the whole shape of an instance is
// tested without a Docker daemon.
type containerSpec struct {
	// Name is the container name; Component and Agent its labels.
	Name      string
	Component string
	Agent     string
	// Image is the image reference; Cmd replaces its CMD and Entrypoint
	// its ENTRYPOINT when not empty.
	Image      string
	Cmd        []string
	Entrypoint []string
	Env        []string
	// User replaces the image's user when not empty ("uid:gid").
	User   string
	Mounts []mount.Mount
	// Port is the container port ("8080/tcp") published on loopback, at
	// HostPort (empty: a port the daemon picks); empty publishes nothing.
	Port     string
	HostPort string
	// NanoCPUs and Memory are the resource limits; zero means none.
	NanoCPUs int64
	Memory   int64
	// DropCaps drops every capability (the daemons need none).
	DropCaps bool
	// PidsLimit caps the container's processes; zero means none.
	PidsLimit int64
	// ReadOnlyRoot makes the root filesystem read-only; Tmpfs then gives
	// the writable places (path → mount options).
	ReadOnlyRoot bool
	Tmpfs        map[string]string
	Labels       map[string]string
	// Aliases are extra DNS names on the instance network.
	Aliases []string
	// GroupAdd are extra groups of the container's user (the Docker
	// socket's group, for a controller agent).
	GroupAdd []string
}

// loopback is where published ports listen: never on other interfaces.
var loopback = netip.MustParseAddr("127.0.0.1")

// createOptions is the ContainerCreate request for the spec on the
// instance network netName.
func (s containerSpec) createOptions(netName string) client.ContainerCreateOptions {
	cfg := &container.Config{
		Image:      s.Image,
		Cmd:        s.Cmd,
		Entrypoint: s.Entrypoint,
		Env:        s.Env,
		User:       s.User,
		Labels:     s.Labels,
	}
	host := &container.HostConfig{
		NetworkMode:    container.NetworkMode(netName),
		RestartPolicy:  container.RestartPolicy{Name: container.RestartPolicyUnlessStopped},
		SecurityOpt:    []string{"no-new-privileges:true"},
		Mounts:         s.Mounts,
		Resources:      container.Resources{NanoCPUs: s.NanoCPUs, Memory: s.Memory},
		ReadonlyRootfs: s.ReadOnlyRoot,
		Tmpfs:          s.Tmpfs,
		GroupAdd:       s.GroupAdd,
	}
	if s.PidsLimit > 0 {
		limit := s.PidsLimit
		host.Resources.PidsLimit = &limit
	}
	if s.DropCaps {
		host.CapDrop = []string{"ALL"}
	}
	if s.Port != "" {
		p := network.MustParsePort(s.Port)
		cfg.ExposedPorts = network.PortSet{p: struct{}{}}
		// HostIP keeps the port on loopback (the password protects Redis,
		// the address keeps it and the unauthenticated /metrics off the
		// network).
		host.PortBindings = network.PortMap{p: {{HostIP: loopback, HostPort: s.HostPort}}}
	}
	return client.ContainerCreateOptions{
		Name:       s.Name,
		Config:     cfg,
		HostConfig: host,
		NetworkingConfig: &network.NetworkingConfig{EndpointsConfig: map[string]*network.EndpointSettings{
			netName: {Aliases: s.Aliases},
		}},
	}
}
