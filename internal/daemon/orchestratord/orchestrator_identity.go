package orchestratord

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// identitySlots bounds how many orchestrators of one instance a host can
// give a stable identity to; more start without one (and wait for leases
// to expire like any process without one).
const identitySlots = 16

// orchestratorIdentity returns a stable identity for an orchestrator of
// instance that no other live process on this host has: "<host>/<slot>",
// where the slot is the first of a set of lock files this process can
// flock. The kernel drops the lock when the process dies, however it dies,
// so a process that gets slot n knows every earlier holder of n is dead —
// which is what lets the leader lease hand a restarted orchestrator its
// predecessor's lease at once (orchestrator.LeaderLease). A container
// keeps its hostname across restarts; a standby gets a slot of its own, or
// lives on another host. release gives the slot up (on exit); with no
// lock to be had the identity is "" and the orchestrator runs without one.
func orchestratorIdentity(dir, instance string) (identity string, release func()) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		return "", func() {}
	}
	safe := strings.Map(func(r rune) rune {
		if r == '/' || r == os.PathSeparator || r < ' ' {
			return '_'
		}
		return r
	}, instance)
	for slot := 0; slot < identitySlots; slot++ {
		path := filepath.Join(dir, fmt.Sprintf("sett-orchestrator-%s.%d.lock", safe, slot))
		f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, 0o600)
		if err != nil {
			continue // another user's file, or no tmp dir: try the next
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			f.Close()
			continue // held by a live process
		}
		return fmt.Sprintf("%s/%d", host, slot), func() { f.Close() }
	}
	return "", func() {}
}
