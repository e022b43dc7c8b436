//go:build unix

package docker

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// invokingUser is the user the orchestrator and agents run as by default:
// the user who runs `sett up`, so that files tools write in an rw
// workspace belong to that user, unless that is root; then DefaultUser.
func invokingUser() string {
	uid, gid := os.Getuid(), os.Getgid()
	if uid <= 0 {
		return DefaultUser
	}
	return fmt.Sprintf("%d:%d", uid, gid)
}

// checkAccess reports, for a container user "uid[:gid]", what it cannot do
// with path ("" when it can): read and enter a directory (and write it
// when write is set), read a file. It applies the owner, group and other
// permission bits the way the kernel does for a process with that uid and
// only that gid (a container user has no supplementary groups).
func checkAccess(user, path string, write bool) string {
	st, err := os.Stat(path)
	if err != nil {
		return err.Error()
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	uidS, gidS, hasGid := strings.Cut(user, ":")
	uid, err := strconv.Atoi(uidS)
	if err != nil {
		return ""
	}
	if uid == 0 {
		return ""
	}
	gid := -1
	if hasGid {
		gid, _ = strconv.Atoi(gidS)
	}
	perm := uint32(st.Mode().Perm())
	var bits uint32
	switch {
	case uint32(uid) == sys.Uid:
		bits = perm >> 6 & 7
	case gid >= 0 && uint32(gid) == sys.Gid:
		bits = perm >> 3 & 7
	default:
		bits = perm & 7
	}
	want, what := uint32(4), "read"
	if st.IsDir() {
		want, what = 5, "read and enter"
	}
	if write {
		want, what = want|2, what+" and write"
	}
	if bits&want == want {
		return ""
	}
	return fmt.Sprintf("user %s cannot %s %s (mode %s, owner %d:%d)", user, what, path, st.Mode().Perm(), sys.Uid, sys.Gid)
}

// fileGroup returns the group id (as a string) that owns path.
func fileGroup(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return "", fmt.Errorf("no owner information for %s", path)
	}
	return strconv.FormatUint(uint64(sys.Gid), 10), nil
}
