//go:build unix

package docker

import (
	"fmt"
	"os"
	"syscall"
)

// workspaceUser is the user the orchestrator and agents run as by default:
// the owner of the workspace, so that rw workspaces stay writable and new
// files keep the owner, unless that is root; then DefaultUser.
func workspaceUser(workspace string) string {
	st, err := os.Stat(workspace)
	if err != nil {
		return DefaultUser
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok || sys.Uid == 0 {
		return DefaultUser
	}
	return fmt.Sprintf("%d:%d", sys.Uid, sys.Gid)
}
