package cli

import (
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/runtime/docker"
	"github.com/settdev/sett/internal/runtime/local"
)

// DefaultRuntimes returns the runtimes `sett up --runtime` can choose,
// by name. Each runtime registers one entry here. The Docker runtime
// connects to the daemon on first use, so commands that do not need
// Docker work on machines without it.
func DefaultRuntimes() map[string]runtime.Runtime {
	m := map[string]runtime.Runtime{
		"local": local.New(),
	}
	if rt, err := docker.New(docker.Options{}); err == nil {
		m[rt.Name()] = rt
	}
	return m
}
