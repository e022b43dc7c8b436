package vault

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

// maxOutcomePayload bounds each final artefact's payload copied into a
// finished task file.
const maxOutcomePayload = 64 << 10

// rejectedGrace is how long a rejected workflow's task file waits for its
// learning before it moves to Done/ anyway (a learning is always
// recorded, from the learner or from the reason; this only bounds a
// wait on something gone wrong).
const rejectedGrace = 2 * time.Minute

// runningTask is an In_Progress task for the dashboard.
type runningTask struct {
	File, WorkflowID, State string
}

// workflows keeps each In_Progress task file's state in step with its
// workflow and moves finished ones to Done/ or Failed/.
func (b *Bridge) workflows(ctx context.Context, pending []blackboard.ApprovalRequest, learned map[string]blackboard.Learning) ([]runningTask, error) {
	awaiting := map[string]bool{}
	for _, r := range pending {
		awaiting[r.WorkflowID] = true
	}
	paused := false
	if ps, err := b.bb.GetPauseState(ctx); err == nil {
		paused = ps.Paused
	}
	files, err := b.filesNaming(InProgress, "workflow_id", "no workflow_id in the frontmatter: put new tasks in Needs_Action/")
	if err != nil {
		return nil, err
	}
	var running []runningTask
	var errs []error
	for _, f := range files {
		p, name, wfID := f.Path, f.Name, f.Doc.Get("workflow_id")
		b.noticeEdit(p, f)
		wf, err := b.bb.GetWorkflow(ctx, wfID)
		if errors.Is(err, blackboard.ErrNotFound) {
			b.refuse(p, "its workflow "+blackboard.ShortID(wfID)+" is not on the blackboard (was Redis reset?): move the file back to Needs_Action/ to start it again")
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		state := stateOf(wf.Status, awaiting[wfID], paused)
		if wf.Status == blackboard.WorkflowRunning {
			rt, err := b.retryOf(ctx, wfID)
			if err != nil {
				errs = append(errs, err)
			}
			label := state
			if rt != nil && state == StateRunning {
				state = StateRetrying
				label = fmt.Sprintf("retrying (attempt %d, next at %s): %s", rt.attempt, msTime(rt.dueMs), rt.lastError)
			}
			running = append(running, runningTask{File: name, WorkflowID: wfID, State: label})
			setRetry(f.Doc, rt)
			if f.Doc.Get("state") != state {
				f.Doc.Set("state", state)
			}
			if f.Doc.Changed() {
				merged, err := mergeDoc(p, f.Doc)
				if err != nil {
					errs = append(errs, err)
				} else {
					if merged != (stamp{}) && merged != stampOf(f.Info) {
						// Saved between this pass's read and its write:
						// the merge kept the edit; say so, as for one
						// seen at the read.
						b.noteEdit(p)
					}
					b.wrote(p)
				}
			}
			continue
		}
		if err := b.finishTask(ctx, f, wf, state, learned); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return running, errors.Join(errs...)
}

// stateOf is a task file's state for a workflow status.
func stateOf(s blackboard.WorkflowStatus, awaiting, paused bool) string {
	switch s {
	case blackboard.WorkflowCompleted:
		return StateDone
	case blackboard.WorkflowFailed:
		return StateFailed
	case blackboard.WorkflowRejected:
		return StateRejected
	case blackboard.WorkflowCancelled:
		return StateCancelled
	}
	switch {
	case awaiting:
		return StateAwaitingApproval
	case paused:
		return StateQueued
	}
	return StateRunning
}

// finishTask moves the task file of a finished workflow to Done/ (done,
// rejected) or Failed/ (failed, cancelled) with its outcome and the
// payloads of its final artefacts.
func (b *Bridge) finishTask(ctx context.Context, f *vaultFile, wf *blackboard.Workflow, state string, learned map[string]blackboard.Learning) error {
	d := f.Doc
	l, hasLearning := learned["wf:"+wf.ID]
	if wf.Status == blackboard.WorkflowRejected && !hasLearning &&
		b.NowFunc().Sub(time.UnixMilli(wf.EndedAtMs)) < rejectedGrace {
		return nil // the learning is on its way
	}
	d.Set("state", state)
	d.Set("outcome", string(wf.Status))
	setRetry(d, nil)
	if wf.Outcome != "" {
		d.Set("reason", oneLine(wf.Outcome, 1000))
	}
	if wf.EndedAtMs > 0 {
		d.Set("finished_at", msTime(wf.EndedAtMs))
	}
	if wf.Status == blackboard.WorkflowRejected {
		d.Set("status", StatusRejectedReviewed)
		if hasLearning {
			d.Set("learning", l.Text)
		}
	}
	finals, err := b.finalArtefacts(ctx, wf.ID)
	if err != nil {
		return err
	}
	if wf.Status == blackboard.WorkflowCompleted {
		// The failures of attempts a retry made good are not its outcome
		// (they stay in the audit trail: `sett hoard`).
		kept := finals[:0]
		for _, a := range finals {
			if a.StructuralType != blackboard.StructuralFailure {
				kept = append(kept, a)
			}
		}
		finals = kept
	}
	outcome := renderOutcome(wf, finals)
	d.EditBody(func(body string) string { return withOutcome(body, outcome) })
	target := Done
	if wf.Status == blackboard.WorkflowFailed || wf.Status == blackboard.WorkflowCancelled {
		target = Failed
	}
	if _, err := moveDoc(f.Path, filepath.Join(b.opt.Path, target), f.Name, d, "workflow_id"); err != nil {
		return err
	}
	b.log.Info().Str("file", f.Name).Str("workflow_id", wf.ID).Str("outcome", string(wf.Status)).Str("folder", target).Msg("finished task moved")
	b.note(fmt.Sprintf("task %s ended %s → %s/", mdText(f.Name), mdText(string(wf.Status)), target))
	delete(b.ours, f.Path)
	return nil
}

// finalArtefacts are the workflow's final artefacts
// (blackboard.FinalArtefacts) but its goal, which the task file holds.
func (b *Bridge) finalArtefacts(ctx context.Context, workflowID string) ([]*blackboard.Artefact, error) {
	var all []*blackboard.Artefact
	q := blackboard.PageQuery{WorkflowID: workflowID, Limit: 1000}
	for {
		page, err := b.bb.ListArtefacts(ctx, q)
		if err != nil {
			return nil, err
		}
		arts, err := b.bb.GetArtefacts(ctx, page.IDs)
		if err != nil {
			return nil, err
		}
		for _, a := range arts {
			if a != nil {
				all = append(all, a)
			}
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	// The task file holds the goal already: its outcome lists the work.
	var out []*blackboard.Artefact
	for _, a := range blackboard.FinalArtefacts(all) {
		if !a.IsGoal() {
			out = append(out, a)
		}
	}
	return out, nil
}

// outcomeHeading starts the section Sett writes into a finished task
// file; a retried task's section is replaced, never appended twice.
const outcomeHeading = "## Outcome"

// renderOutcome is the Outcome section of a finished workflow.
func renderOutcome(wf *blackboard.Workflow, finals []*blackboard.Artefact) string {
	var s strings.Builder
	fmt.Fprintf(&s, "%s\n\n%s", outcomeHeading, string(wf.Status))
	if wf.Outcome != "" {
		fmt.Fprintf(&s, ": %s", mdText(wf.Outcome))
	}
	s.WriteString("\n")
	for _, a := range finals {
		fmt.Fprintf(&s, "\n### %s v%d (%s)\n\n", mdText(a.Type), a.Version, blackboard.ShortID(a.ID))
		p := a.Payload
		if len(p) > maxOutcomePayload {
			p = oneLine(p[:maxOutcomePayload], maxOutcomePayload) + " (cut; see `sett hoard --show " + blackboard.ShortID(a.ID) + "`)"
		}
		s.WriteString(fence(p))
	}
	return s.String()
}

// withOutcome returns body with its Outcome section (Sett's, the last
// "## Outcome" heading to the end) replaced by outcome.
func withOutcome(body, outcome string) string {
	return strings.TrimRight(withoutOutcome(body), "\n") + "\n\n" + outcome
}

// withoutOutcome returns body without Sett's Outcome section: the task
// as the person wrote it.
func withoutOutcome(body string) string {
	if i := strings.LastIndex(body, "\n"+outcomeHeading+"\n"); i >= 0 {
		return body[:i+1]
	}
	if strings.HasPrefix(body, outcomeHeading+"\n") {
		return ""
	}
	return body
}

// wrote remembers the stamp of a task file Sett just wrote, so that a
// later change is known to be the person's.
func (b *Bridge) wrote(path string) {
	if st, err := statStamp(path); err == nil {
		b.ours[path] = st
	}
}

// noticeEdit notes on the dashboard, once per save, that a person edited
// an in-flight task file: their text is kept (Sett's updates merge into
// it), and the running workflow keeps the text it started with.
func (b *Bridge) noticeEdit(path string, f *vaultFile) {
	st := stampOf(f.Info)
	prev, ok := b.ours[path]
	b.ours[path] = st
	if !ok || prev == st {
		return
	}
	b.noteEdit(path)
}

// noteEdit puts on the dashboard that a person's edit of the in-flight
// task file at path is kept.
func (b *Bridge) noteEdit(path string) {
	b.log.Info().Str("file", b.rel(path)).Msg("in-flight task file edited by a person; kept")
	b.note("your edit of " + mdText(b.rel(path)) + " is kept; the running workflow goes on with the text it started with (a new task file starts a new one)")
}

// retrying is a workflow waiting for a retry of a failed tool run.
type retrying struct {
	attempt   int
	dueMs     int64
	lastError string
}

// retryOf returns where the workflow's retries stand when one of its
// claims waits for a retry (nil otherwise).
func (b *Bridge) retryOf(ctx context.Context, workflowID string) (*retrying, error) {
	ids, err := b.bb.WorkflowClaims(ctx, workflowID)
	if err != nil || len(ids) == 0 {
		return nil, err
	}
	cls, err := b.bb.GetClaims(ctx, ids)
	if err != nil {
		return nil, err
	}
	var out *retrying
	for _, cl := range cls {
		if cl == nil {
			continue
		}
		for _, r := range cl.Retries {
			if r.DueMs <= 0 || r.Final || (out != nil && out.dueMs <= r.DueMs) {
				continue
			}
			out = &retrying{attempt: r.Failed + 1, dueMs: r.DueMs}
			if r.FailureID != "" {
				if a, err := b.bb.GetArtefact(ctx, r.FailureID); err == nil {
					out.lastError = oneLine(firstOf(a.Summary, a.Payload), 300)
				}
			}
		}
	}
	return out, nil
}

// setRetry writes (or, with nil, clears) the retry keys of a task file:
// attempt, next_retry_at, last_error. A finished task keeps attempt and
// last_error as its history.
func setRetry(d *Doc, r *retrying) {
	if r == nil {
		if d.Has("next_retry_at") {
			d.Delete("next_retry_at")
		}
		return
	}
	if d.Get("attempt") != strconv.Itoa(r.attempt) {
		d.Set("attempt", strconv.Itoa(r.attempt))
	}
	if next := msTime(r.dueMs); d.Get("next_retry_at") != next {
		d.Set("next_retry_at", next)
	}
	if r.lastError != "" && d.Get("last_error") != r.lastError {
		d.Set("last_error", r.lastError)
	}
}
