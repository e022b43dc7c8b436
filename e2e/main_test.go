package e2e

import (
	"os"
	"testing"

	"github.com/settdev/sett/internal/stacktest"
)

func TestMain(m *testing.M) {
	// Instance state (saved Redis passwords) goes to a private state home,
	// never the real ~/.local/state/sett.
	state, err := os.MkdirTemp("", "sett-e2e-state-*")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_STATE_HOME", state)
	code := m.Run()
	closeHarness()
	stacktest.Cleanup()
	os.RemoveAll(state)
	os.Exit(code)
}
