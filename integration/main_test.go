package integration

import (
	"os"
	"testing"

	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/stacktest"
)

func TestMain(m *testing.M) {
	code := redistest.Run(m)
	stacktest.Cleanup()
	os.Exit(code)
}
