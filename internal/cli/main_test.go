package cli

import (
	"os"
	"testing"

	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/stacktest"
)

// TestMain stops the package's redis-server and removes the stack
// binaries that the real-stack tests build.
func TestMain(m *testing.M) {
	code := redistest.Run(m)
	stacktest.Cleanup()
	os.Exit(code)
}
