// Package failpoint lets crash tests stop a daemon at an exact point, the
// way kill -9 would if it landed there. A failpoint is armed only by the
// environment variable SETT_FAILPOINT naming it; production never sets it,
// and an unarmed Hit costs one string comparison.
package failpoint

import (
	"fmt"
	"os"
)

// armed is read once: failpoints are a process-start decision.
var armed = os.Getenv("SETT_FAILPOINT")

// ExitCode is what a process hit by a failpoint exits with (128 + SIGKILL,
// as after kill -9).
const ExitCode = 137

// Hit ends the process immediately — no deferred calls, no cleanup, no
// acknowledgements flushed — when name is the armed failpoint.
func Hit(name string) {
	if armed != "" && armed == name {
		fmt.Fprintf(os.Stderr, "failpoint %s hit: exiting with %d\n", name, ExitCode)
		os.Exit(ExitCode)
	}
}
