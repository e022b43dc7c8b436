package vault

import (
	"testing"

	"github.com/settdev/sett/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }
