package charttest

import (
	"os"
	"testing"

	"github.com/settdev/sett/internal/stacktest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	stacktest.Cleanup()
	os.Exit(code)
}
