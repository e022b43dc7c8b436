package vault

import (
	"context"
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/settdev/sett/internal/failpoint"
	"github.com/settdev/sett/pkg/blackboard"
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
)

// ingest turns the task files of Needs_Action/ into goals, highest
// priority first, as far as max_concurrent_tasks allows, and moves each
// to In_Progress/ with workflow_id, state and started_at added.
func (b *Bridge) ingest(ctx context.Context) error {
	dir := filepath.Join(b.opt.Path, NeedsAction)
	names, err := b.listAll(NeedsAction)
	if err != nil {
		return err
	}
	now := b.NowFunc()
	present := map[string]bool{}
	var tasks []*task
	for _, name := range names {
		p := filepath.Join(dir, name)
		present[p] = true
		f, reason := readFile(b.opt.Path, dir, name, b.opt.MaxFileBytes)
		if reason != "" {
			b.refuse(p, reason)
			continue
		}
		if f == nil {
			continue
		}
		t, err := parseTask(f, b.opt.Weights, now)
		if err != nil {
			b.refuse(p, err.Error())
			continue
		}
		delete(b.refused, p)
		tasks = append(tasks, t)
	}
	for p := range b.refused {
		if filepath.Dir(p) == dir && !present[p] {
			delete(b.refused, p)
		}
	}
	if len(tasks) == 0 {
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
	var errs []error
	for _, t := range tasks {
		if slots == 0 {
			break
		}
		if err := b.admit(ctx, t, now); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			errs = append(errs, err)
			continue
		}
		slots--
	}
	return errors.Join(errs...)
}

// admit creates the goal of t (or finds it created by an earlier pass
// that crashed before the move) and moves the file to In_Progress/.
func (b *Bridge) admit(ctx context.Context, t *task, now time.Time) error {
	err := b.bb.CreateArtefact(ctx, t.Goal, blackboard.WriteAuth{})
	switch {
	case err == nil:
		failpoint.Hit("vault-goal-created")
		b.log.Info().Str("file", t.File.Name).Str("workflow_id", t.Goal.ID).Int("priority", t.Score).Msg("task file became a goal")
		b.note("task " + t.File.Name + " started workflow " + short(t.Goal.ID))
	case errors.Is(err, blackboard.ErrExists):
		// Created by a pass that did not get to move the file.
	case errors.Is(err, blackboard.ErrInvalid):
		b.refuse(t.File.Path, strings.TrimPrefix(err.Error(), "blackboard: "))
		return nil
	default:
		return err
	}
	doc := t.File.Doc
	doc.Set("workflow_id", t.Goal.ID)
	doc.Set("state", StateRunning)
	if !doc.Has("started_at") {
		doc.Set("started_at", now.UTC().Format(time.RFC3339))
	}
	_, err = moveDoc(t.File.Path, filepath.Join(b.opt.Path, InProgress), t.File.Name, doc, "workflow_id")
	return err
}

// listAll lists the Markdown entries of a folder that are not ignored,
// links included (they are refused, not ignored).
func (b *Bridge) listAll(dir string) ([]string, error) { return b.listMD(dir) }
