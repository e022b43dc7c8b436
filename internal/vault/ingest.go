package vault

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/failpoint"
)

// Task states written to a task file's `state`.
const (
	StateQueued           = "queued"
	StateRunning          = "running"
	StateAwaitingApproval = "awaiting approval"
	StateDone             = "done"
	StateFailed           = "failed"
	StateRejected         = "rejected"
	StateCancelled        = "cancelled"
	StateRetrying         = "retrying"
)

// ingest turns the task files of Needs_Action/ into goals, highest
// priority first (ties: oldest first), as far as max_concurrent_tasks
// and vault.cooldown allow, and moves each to In_Progress/ with
// workflow_id, state and started_at added. A file is read only once
// its writer is done (settler); while the instance is paused nothing is
// admitted, so that on resume the waiting tasks start in score order
// rather than in the order they arrived.
func (b *Bridge) ingest(ctx context.Context) error {
	dir := filepath.Join(b.opt.Path, NeedsAction)
	names, err := b.listAll(NeedsAction)
	if err != nil {
		return err
	}
	now := b.NowFunc()
	present := map[string]bool{}
	var tasks []*task
	settling := 0
	for _, name := range names {
		p := filepath.Join(dir, name)
		present[p] = true
		fi, err := os.Lstat(p)
		if err != nil {
			continue // gone since the listing
		}
		if ok, at := b.settle.observe(p, fi, now); !ok {
			settling++
			b.wakeAt(at)
			continue
		}
		f, reason := readFile(b.opt.Path, dir, name, b.opt.MaxFileBytes)
		if reason != "" {
			b.refuse(p, reason)
			continue
		}
		if f == nil || stampOf(f.Info) != stampOf(fi) {
			// Changed since it looked settled: wait again.
			b.settle.restart(p)
			settling++
			b.wakeAt(now.Add(b.opt.Settle))
			continue
		}
		// A file of earlier work put back: the same work again, not a
		// new goal made from it.
		if f.Doc.Get("artefact_id") != "" {
			if err := b.reaskFile(ctx, dir, name); err != nil {
				return err
			}
			continue
		}
		if wf := f.Doc.Get("workflow_id"); wf != "" {
			_, err := b.bb.GetWorkflow(ctx, wf)
			switch {
			case err == nil:
				if err := b.retryFile(ctx, dir, name); err != nil {
					return err
				}
				continue
			case !errors.Is(err, blackboard.ErrNotFound):
				return err
			}
			// Unknown workflow (Redis reset): a new task, without Sett's
			// sections (parseTask strips them).
		}
		t, err := parseTask(f, b.opt.Weights, now)
		if err != nil {
			b.refuse(p, err.Error())
			continue
		}
		delete(b.refused, p)
		tasks = append(tasks, t)
	}
	// Subfolders are not read (a note in one would otherwise wait
	// silently forever): each is listed on the dashboard with what to do.
	if ents, err := os.ReadDir(dir); err == nil {
		for _, e := range ents {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				p := filepath.Join(dir, e.Name())
				present[p] = true
				b.refuse(p, "a folder: Sett reads only task files placed directly in Needs_Action/, not in subfolders; move the notes out of it to start them")
			}
		}
	}
	b.settle.keepOnly(present)
	b.waiting = waitingTasks{Ready: len(tasks), Settling: settling}
	for p := range b.refused {
		if filepath.Dir(p) == dir && !present[p] {
			delete(b.refused, p)
		}
	}
	if len(tasks) == 0 {
		return nil
	}
	if ps, err := b.bb.GetPauseState(ctx); err != nil {
		return err
	} else if ps.Paused {
		b.waiting.Paused = true
		return nil
	}
	slots := len(tasks)
	if b.opt.MaxConcurrentTasks > 0 {
		busy, err := b.listMD(InProgress)
		if err != nil {
			return err
		}
		slots = b.opt.MaxConcurrentTasks - len(busy)
		if slots <= 0 {
			return nil
		}
	}
	sortTasks(tasks)
	var errs []error
	for _, t := range tasks {
		if slots == 0 {
			break
		}
		if b.opt.Cooldown > 0 && !b.lastStart.IsZero() {
			if next := b.lastStart.Add(b.opt.Cooldown); now.Before(next) {
				b.wakeAt(next)
				break
			}
		}
		if err := b.admit(ctx, t, now); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			errs = append(errs, err)
			continue
		}
		b.lastStart = now
		slots--
	}
	return errors.Join(errs...)
}

// sortTasks orders tasks for admission: highest score first, then the
// oldest file (modification time), then the name.
func sortTasks(tasks []*task) {
	sort.SliceStable(tasks, func(i, j int) bool {
		a, c := tasks[i], tasks[j]
		if a.Score != c.Score {
			return a.Score > c.Score
		}
		if !a.File.Info.ModTime().Equal(c.File.Info.ModTime()) {
			return a.File.Info.ModTime().Before(c.File.Info.ModTime())
		}
		return a.File.Name < c.File.Name
	})
}

// waitingTasks counts Needs_Action/ for the dashboard.
type waitingTasks struct {
	Ready, Settling int
	Paused          bool
}

// admit creates the goal of t (or finds it created by an earlier pass
// that crashed before the move) and moves the file to In_Progress/.
func (b *Bridge) admit(ctx context.Context, t *task, now time.Time) error {
	if st, err := statStamp(t.File.Path); err != nil || st != stampOf(t.File.Info) {
		// Its writer came back after the read: wait for it again.
		b.settle.restart(t.File.Path)
		b.wakeAt(now.Add(b.opt.Settle))
		return nil
	}
	err := b.bb.CreateArtefact(ctx, t.Goal, blackboard.WriteAuth{})
	switch {
	case err == nil:
		failpoint.Hit("vault-goal-created")
		b.log.Info().Str("file", t.File.Name).Str("workflow_id", t.Goal.ID).Int("priority", t.Score).Msg("task file became a goal")
		b.note("task " + mdText(t.File.Name) + " started workflow " + blackboard.ShortID(t.Goal.ID))
	case errors.Is(err, blackboard.ErrExists):
		// Created by a pass that did not get to move the file.
	case errors.Is(err, blackboard.ErrInvalid):
		b.refuse(t.File.Path, strings.TrimPrefix(err.Error(), "blackboard: "))
		return nil
	default:
		return err
	}
	// The file looked settled when it was read; if its writer came back
	// since, the move below still keeps their text (it merges into the
	// current content), and the dashboard says the goal has the earlier
	// text.
	if st, err := statStamp(t.File.Path); err == nil && st != stampOf(t.File.Info) {
		b.note("task " + mdText(t.File.Name) + " changed while it started; the file keeps the new text, the workflow has the earlier one")
	}
	doc := t.File.Doc
	for _, k := range settTaskKeys {
		if doc.Has(k) {
			doc.Delete(k) // of an earlier run whose workflow is gone
		}
	}
	doc.Set("workflow_id", t.Goal.ID)
	doc.Set("state", StateRunning)
	if !doc.Has("started_at") {
		doc.Set("started_at", now.UTC().Format(time.RFC3339))
	}
	to, err := moveDoc(t.File.Path, filepath.Join(b.opt.Path, InProgress), t.File.Name, doc, "workflow_id")
	if err == nil {
		b.wrote(to)
	}
	return err
}

// listAll lists the Markdown entries of a folder that are not ignored,
// links included (they are refused, not ignored).
func (b *Bridge) listAll(dir string) ([]string, error) { return b.listMD(dir) }
