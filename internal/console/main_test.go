package console_test

import (
	"os"
	"testing"

	"github.com/settdev/sett/internal/redistest"
)

func TestMain(m *testing.M) { os.Exit(redistest.Run(m)) }
