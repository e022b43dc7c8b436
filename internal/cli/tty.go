package cli

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && isatty.IsTerminal(f.Fd())
}
