package vault

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/learningsfile"
	"github.com/settdev/sett/internal/memory"
)

// vaultState is what the bridge remembers between runs about its own
// writes: which learnings it appended to Agent_Memory.md, so that one a
// person pruned stays pruned. It lives in a hidden file of the vault;
// losing it only means the learnings are appended again.
type vaultState struct {
	Appended map[string]bool `json:"appended"`
}

func (b *Bridge) loadState() *vaultState {
	if b.state != nil {
		return b.state
	}
	st := &vaultState{Appended: map[string]bool{}}
	if data, err := os.ReadFile(filepath.Join(b.opt.Path, stateFile)); err == nil {
		_ = json.Unmarshal(data, st)
		if st.Appended == nil {
			st.Appended = map[string]bool{}
		}
	}
	b.state = st
	return st
}

func (b *Bridge) saveState() error {
	data, _ := json.Marshal(b.state)
	return writeAtomic(filepath.Join(b.opt.Path, stateFile), data)
}

// learnings appends every learning not yet appended to Agent_Memory.md
// (in the learning loop's line format; the rest of the file is kept as the person
// left it) and returns the learnings by rejected artefact id and by
// "wf:" + workflow id.
func (b *Bridge) learnings(ctx context.Context) (map[string]blackboard.Learning, error) {
	ls, err := b.bb.Learnings(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]blackboard.Learning, 2*len(ls))
	st := b.loadState()
	path := filepath.Join(b.opt.Path, AgentMemoryFile)
	changed := false
	for _, l := range ls {
		if l.ArtefactID != "" {
			out[l.ArtefactID] = l
		}
		if l.WorkflowID != "" {
			out["wf:"+l.WorkflowID] = l
		}
		if st.Appended[l.ID] {
			continue
		}
		if err := learningsfile.Append(path, learningsfile.RenderLine(l)); err != nil {
			return out, err
		}
		st.Appended[l.ID] = true
		changed = true
		b.note("learning appended to " + AgentMemoryFile)
	}
	if changed {
		if err := b.saveState(); err != nil {
			return out, err
		}
	}
	return out, nil
}

// toolMemory publishes Agent_Memory.md and Company_Handbook.md, as the
// person left them, as memory.learnings and memory.handbook; files are
// re-read only when their size or modification time changed.
func (b *Bridge) toolMemory(ctx context.Context) error {
	learn, lstamp, err := b.readRoot(AgentMemoryFile)
	if err != nil {
		return err
	}
	hand, hstamp, err := b.readRoot(HandbookFile)
	if err != nil {
		return err
	}
	stamp := lstamp + "|" + hstamp
	if b.memStamp["tool"] == stamp {
		return nil
	}
	if learningsfile.IsTemplate(learn) {
		learn = ""
	}
	if n := learningsfile.Count(learn); n != b.warned {
		if w := learningsfile.Warning(n); w != "" {
			b.log.Warn().Int("learnings", n).Msg(w)
		}
		b.warned = n
	}
	if err := b.bb.PublishToolMemory(ctx, learn, hand); err != nil {
		return err
	}
	b.memStamp["tool"] = stamp
	return nil
}

// readRoot reads a file of the vault root that is not a link; a missing
// file reads as "".
func (b *Bridge) readRoot(name string) (text, stamp string, err error) {
	p := filepath.Join(b.opt.Path, name)
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "missing", nil
	}
	if err != nil {
		return "", "", err
	}
	if !fi.Mode().IsRegular() {
		b.refuse(p, "not a regular file (a link?): Sett does not read it")
		return "", "irregular", nil
	}
	stamp = fmt.Sprintf("%d/%d", fi.Size(), fi.ModTime().UnixNano())
	if fi.Size() > b.opt.MaxFileBytes {
		b.refuse(p, fmt.Sprintf("too large: %d bytes, over vault.max_file_bytes", fi.Size()))
		return "", stamp, nil
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", "", err
	}
	delete(b.refused, p)
	return string(data), stamp, nil
}

// memories mirrors the shared memory of each workflow whose memory was
// merged since the last pass to memory.md, and its agents' memories to
// memory/<agent>.mem.md (the memory and review design's format). With all set, the newest
// workflow that has a shared memory is mirrored (rebuild).
func (b *Bridge) memories(ctx context.Context, all bool) error {
	b.mu.Lock()
	var wfs []string
	for wf := range b.merged {
		wfs = append(wfs, wf)
	}
	b.merged = map[string]bool{}
	b.mu.Unlock()
	if all {
		ids, err := b.bb.ListWorkflows(ctx, 20)
		if err != nil {
			return err
		}
		for _, id := range ids {
			doc, _, err := b.bb.GetSharedMemory(ctx, id)
			if err != nil {
				return err
			}
			if doc != "" {
				wfs = []string{id}
				break
			}
		}
	}
	for _, wf := range wfs {
		if err := b.mirrorMemory(ctx, wf); err != nil {
			b.mu.Lock()
			b.merged[wf] = true // try again next pass
			b.mu.Unlock()
			return err
		}
	}
	return nil
}

func (b *Bridge) mirrorMemory(ctx context.Context, wf string) error {
	doc, _, err := b.bb.GetSharedMemory(ctx, wf)
	if err != nil {
		return err
	}
	if doc != "" {
		s, err := memory.DecodeShared([]byte(doc))
		if err != nil {
			return fmt.Errorf("shared memory of workflow %s: %w", blackboard.ShortID(wf), err)
		}
		text := fmt.Sprintf("<!-- Shared memory of workflow %s, written by Sett; edits are overwritten. -->\n%s", wf, memory.RenderShared(s))
		if err := writeIfChanged(filepath.Join(b.opt.Path, SharedMemory), []byte(text)); err != nil {
			return err
		}
	}
	stored, err := b.bb.AgentMemories(ctx, wf)
	if err != nil {
		return err
	}
	for agent, sm := range stored {
		var m memory.AgentMemory
		if err := json.Unmarshal([]byte(sm.Memory), &m); err != nil {
			continue
		}
		name := strings.ReplaceAll(agent, string(filepath.Separator), "_") + ".mem.md"
		if err := writeIfChanged(filepath.Join(b.opt.Path, MemoryDir, name), []byte(memory.RenderAgentMemory(agent, m))); err != nil {
			return err
		}
	}
	return nil
}
