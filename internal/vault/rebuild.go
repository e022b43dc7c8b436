package vault

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/settdev/sett/internal/learningsfile"
)

// Rebuild regenerates every projection from Redis (the vault is
// never the source of truth): the layout, Agent_Memory.md's learning
// lines (the person's other lines kept), the approval files of pending
// approvals, the task files' states, the memory files of the newest
// workflow with a shared memory, and Dashboard.md.
func (b *Bridge) Rebuild(ctx context.Context) error {
	if _, err := Scaffold(b.opt.Path); err != nil {
		return err
	}
	if err := b.rebuildAgentMemory(ctx); err != nil {
		return err
	}
	b.memStamp = map[string]string{}
	b.lastDash = ""
	if err := b.memories(ctx, true); err != nil {
		return err
	}
	return b.Sync(ctx)
}

// rebuildAgentMemory rewrites Agent_Memory.md as the person's lines
// (everything that is not a learning line) followed by every learning in
// Redis.
func (b *Bridge) rebuildAgentMemory(ctx context.Context) error {
	ls, err := b.bb.Learnings(ctx)
	if err != nil {
		return err
	}
	path := filepath.Join(b.opt.Path, AgentMemoryFile)
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		old, err = []byte(learningsfile.Template), nil
	}
	if err != nil {
		return err
	}
	var kept []string
	for _, l := range strings.Split(strings.TrimRight(string(old), "\n"), "\n") {
		if learningsfile.Count(l) == 0 {
			kept = append(kept, l)
		}
	}
	st := b.loadState()
	st.Appended = map[string]bool{}
	for _, l := range ls {
		kept = append(kept, learningsfile.RenderLine(l))
		st.Appended[l.ID] = true
	}
	if err := writeIfChanged(path, []byte(strings.Join(kept, "\n")+"\n")); err != nil {
		return err
	}
	return b.saveState()
}
