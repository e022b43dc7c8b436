package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Ledger records the process groups of the tools a cub runs, one file per
// group in a directory that outlives the cub (the local runtime's run
// directory). A cub that is killed cannot stop its tools; the next cub of
// the same agent reads the ledger and kills what is left before it runs
// anything, so no tool outlives its cub's successor's start and no claim
// runs twice at once.
//
// The zero value and a nil *Ledger record nothing. Safe for concurrent
// use.
type Ledger struct {
	// Dir holds the entries; created on first use with mode 0700.
	Dir string
}

// ledgerEntry is one running tool.
type ledgerEntry struct {
	PGID int `json:"pgid"`
	// StartTicks is the leader's start time (field 22 of /proc/<pid>/stat),
	// so that a reused pid is not mistaken for the tool.
	StartTicks uint64   `json:"start_ticks"`
	Command    []string `json:"command"`
}

func (l *Ledger) path(pgid int) string {
	return filepath.Join(l.Dir, strconv.Itoa(pgid)+".json")
}

// add records a started tool.
func (l *Ledger) add(pgid int, command []string) error {
	if l == nil || l.Dir == "" {
		return nil
	}
	if err := os.MkdirAll(l.Dir, 0o700); err != nil {
		return fmt.Errorf("tool: ledger: %w", err)
	}
	ticks, _ := processStartTicks(pgid)
	b, err := json.Marshal(ledgerEntry{PGID: pgid, StartTicks: ticks, Command: command})
	if err != nil {
		return fmt.Errorf("tool: ledger: %w", err)
	}
	if err := os.WriteFile(l.path(pgid), b, 0o600); err != nil {
		return fmt.Errorf("tool: ledger: %w", err)
	}
	return nil
}

// remove forgets a tool whose group is gone.
func (l *Ledger) remove(pgid int) {
	if l == nil || l.Dir == "" {
		return
	}
	_ = os.Remove(l.path(pgid))
}

// KillLeftovers kills the process group of every tool the ledger names
// (those a killed cub left running), waits until each group is gone or
// ctx ends, and forgets them. It returns the number of groups it killed.
// A leader whose pid now belongs to another process (its start time
// differs) is left alone.
func (l *Ledger) KillLeftovers(ctx context.Context) (int, error) {
	if l == nil || l.Dir == "" {
		return 0, nil
	}
	entries, err := os.ReadDir(l.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("tool: ledger: %w", err)
	}
	killed := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(l.Dir, e.Name())
		b, err := os.ReadFile(path)
		var ent ledgerEntry
		if err != nil || json.Unmarshal(b, &ent) != nil || ent.PGID <= 1 {
			_ = os.Remove(path)
			continue
		}
		if ticks, ok := processStartTicks(ent.PGID); ok && ent.StartTicks != 0 && ticks != ent.StartTicks {
			_ = os.Remove(path) // the pid was reused: not our tool
			continue
		}
		if groupExists(ent.PGID) {
			killed++
			_ = killGroupID(ent.PGID)
			if err := waitGroupGone(ctx, ent.PGID); err != nil {
				return killed, fmt.Errorf("tool: ledger: process group %d (%s) still exists: %w", ent.PGID, strings.Join(ent.Command, " "), err)
			}
		}
		_ = os.Remove(path)
	}
	return killed, nil
}

// waitGroupGone polls until no process of the group is left. The members
// were sent SIGKILL; they are reaped by their parent (init, once the cub
// that started them is gone).
func waitGroupGone(ctx context.Context, pgid int) error {
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for groupExists(pgid) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
			_ = killGroupID(pgid)
		}
	}
	return nil
}
