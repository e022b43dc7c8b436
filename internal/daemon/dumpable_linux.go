package daemon

import "golang.org/x/sys/unix"

// HideEnvironment makes this process non-dumpable, which turns its /proc
// files (environ among them) root-owned: a tool running as the same user
// cannot read the Redis credentials from the cub's /proc/<pid>/environ.
// Children get the flag reset on exec, so tools are unaffected.
func HideEnvironment() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
