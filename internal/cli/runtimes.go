package cli

import "github.com/settdev/sett/internal/runtime"

// DefaultRuntimes returns the runtimes `sett up --runtime` can choose.
func DefaultRuntimes() map[string]runtime.Runtime {
	return map[string]runtime.Runtime{}
}
