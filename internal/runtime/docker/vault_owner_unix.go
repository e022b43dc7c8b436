//go:build unix

package docker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// vaultOwnerFacts stats the vault: its owner and what user cannot do in
// it (the folder and every entry, up to a bound). ok is false when the
// vault does not exist yet (the orchestrator creates it).
func vaultOwnerFacts(path, user string) (uid, gid int, problem string, ok bool) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, 0, "", false
	}
	sys, isUnix := st.Sys().(*syscall.Stat_t)
	if !isUnix {
		return 0, 0, "", false
	}
	n := 0
	errStop := errors.New("stop")
	_ = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || n > 10000 {
			return errStop
		}
		n++
		if msg := checkAccess(user, p, true); msg != "" {
			problem = msg
			return errStop
		}
		return nil
	})
	return int(sys.Uid), int(sys.Gid), problem, true
}

// chownVault gives every entry of the vault to user ("uid:gid").
func chownVault(path, user string) error {
	u, g, _ := strings.Cut(user, ":")
	uid, err := strconv.Atoi(u)
	if err != nil {
		return fmt.Errorf("user %q is not uid:gid", user)
	}
	gid := uid
	if g != "" {
		if gid, err = strconv.Atoi(g); err != nil {
			return fmt.Errorf("user %q is not uid:gid", user)
		}
	}
	return filepath.WalkDir(path, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}
