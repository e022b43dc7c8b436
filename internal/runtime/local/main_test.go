package local_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/settdev/sett/internal/stacktest"
)

// TestMain points the user-level instance index at a private directory,
// so that the tests never see or touch the real ~/.local/state/sett, and
// removes the binaries stacktest built.
func TestMain(m *testing.M) {
	state, err := os.MkdirTemp("", "sett-state-*")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := m.Run()
	stacktest.Cleanup()
	os.RemoveAll(state)
	os.Exit(code)
}
