package cli

import (
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/runtime/local"
)

// DefaultRuntimes returns the runtimes `sett up --runtime` can choose,
// by name. Each runtime registers one entry here.
func DefaultRuntimes() map[string]runtime.Runtime {
	return map[string]runtime.Runtime{
		"local": local.New(),
	}
}
