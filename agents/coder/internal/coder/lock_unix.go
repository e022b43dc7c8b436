//go:build unix

package coder

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// lock takes an exclusive flock on <worktrees>/<name>.lock without
// waiting. The kernel drops it when the process dies, so a crashed run
// never leaves the workflow locked. busy is true when another run holds
// it.
func (r *Repo) lock(name string) (unlock func(), busy bool, err error) {
	if err := os.MkdirAll(r.worktreesDir(), 0o755); err != nil {
		return nil, false, err
	}
	p := filepath.Join(r.worktreesDir(), name+".lock")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, false, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, true, nil
		}
		return nil, false, fmt.Errorf("lock %s: %w", p, err)
	}
	return func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, false, nil
}
