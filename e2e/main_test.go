package e2e

import (
	"os"
	"testing"

	"github.com/settdev/sett/internal/stacktest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	closeHarness()
	stacktest.Cleanup()
	os.Exit(code)
}
