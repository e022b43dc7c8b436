package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

// Retries driven from the vault (issue 27, item 3).
//
// The bridge follows workflows, not commands: whatever reopened a
// workflow (`sett retry`, the web console, a late approval decision, a
// script on Redis), the workflow_reopened event brings its task file
// back from Failed/ to In_Progress/, and when the workflow ends again the
// file goes to Done/ or Failed/ with its `## Outcome` rewritten. A person
// retries from the vault by moving a task file back into Needs_Action/ or
// by setting `retry: true` in it (in any folder): that retries the same
// workflow, named by its workflow_id, never a new goal made from the old
// outcome.

// settTaskKeys are the frontmatter keys Sett writes into a task file: a
// file started again as a new task does not carry them into its goal.
var settTaskKeys = []string{"workflow_id", "state", "started_at", "outcome", "reason", "finished_at",
	"attempt", "next_retry_at", "last_error", "retry", "retried_at", "status", "learning", "sett_note"}

// retryBy names the vault as who retried, in the claim's audit.
const retryBy = "vault"

// finishedEntry is what the bridge remembers of a file in Failed/, Done/
// or Needs_Human_Review/, so that it reads each file once per change.
type finishedEntry struct {
	st         stamp
	workflowID string
	artefactID string
	retry      bool
}

// wantsRetry reports whether a file asks to be retried (`retry: true`).
func wantsRetry(d *Doc) bool { return isWord(d.Get("retry"), "true", "yes", "on", "1") }

// revive brings back files of finished work: a task file whose workflow
// runs again (reopened from anywhere) goes back to In_Progress/, and a
// file with `retry: true` retries its workflow (or asks its approval
// again). Failed/, Done/ and Needs_Human_Review/ are looked at on the
// first pass, on file events in Failed/ and Needs_Human_Review/, when a
// workflow was reopened and every rescan, not on every pass.
func (b *Bridge) revive(ctx context.Context) error {
	full := b.scanFinished.Swap(false)
	b.mu.Lock()
	reopened := b.reopened
	b.reopened = map[string]bool{}
	b.mu.Unlock()
	if !full && len(reopened) == 0 {
		return nil
	}
	first := !b.revivedOnce
	var errs []error
	present := map[string]bool{}
	for _, folder := range []string{Failed, NeedsHumanReview, Done} {
		dir := filepath.Join(b.opt.Path, folder)
		// Each file is read once per change (finishedFile); listing the
		// folders is what a look costs.
		names, err := b.listMD(folder)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, name := range names {
			p := filepath.Join(dir, name)
			present[p] = true
			e, ok := b.finishedFile(dir, name)
			if !ok {
				continue
			}
			var err error
			switch {
			case e.retry && e.artefactID != "":
				err = b.reaskFile(ctx, dir, name)
			case e.retry:
				err = b.retryFile(ctx, dir, name)
			case folder == Failed && e.workflowID != "" && (first || reopened[e.workflowID]):
				err = b.backInProgress(ctx, p, e.workflowID)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", b.rel(p), err))
			}
		}
	}
	for p := range b.finished {
		if !present[p] {
			delete(b.finished, p)
		}
	}
	b.revivedOnce = true
	return errors.Join(errs...)
}

// finishedFile returns what dir/name says (read again only when it
// changed); false when it cannot be read or is gone.
func (b *Bridge) finishedFile(dir, name string) (finishedEntry, bool) {
	p := filepath.Join(dir, name)
	st, err := statStamp(p)
	if err != nil {
		delete(b.finished, p)
		return finishedEntry{}, false
	}
	if e, ok := b.finished[p]; ok && e.st == st {
		return e, true
	}
	f, reason := readFile(b.opt.Path, dir, name, b.opt.MaxFileBytes)
	if reason != "" {
		b.refuse(p, reason)
		return finishedEntry{}, false
	}
	if f == nil {
		return finishedEntry{}, false
	}
	e := finishedEntry{st: stampOf(f.Info), workflowID: f.Doc.Get("workflow_id"), artefactID: f.Doc.Get("artefact_id"), retry: wantsRetry(f.Doc)}
	b.finished[p] = e
	return e, true
}

// backInProgress moves the task file of a workflow that runs again (it
// was reopened, by `sett retry`, the console or a late decision) from
// Failed/ to In_Progress/, where it follows the workflow to its new end
// (at once, when it ended again already).
func (b *Bridge) backInProgress(ctx context.Context, p, workflowID string) error {
	wf, err := b.bb.GetWorkflow(ctx, workflowID)
	if errors.Is(err, blackboard.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if wf.Status == blackboard.WorkflowFailed || wf.Status == blackboard.WorkflowCancelled {
		return nil // as the file says (a cancelled one is in Failed/ too)
	}
	// Running again, or already ended again (a quick retry ends before
	// this pass): In_Progress/ follows it to its end and rewrites the
	// outcome.
	d, _, err := readCurrent(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	if d.Get("workflow_id") != workflowID {
		return nil // changed since it was read
	}
	to, err := b.toInProgress(p, d)
	if err == nil {
		b.log.Info().Str("file", b.rel(p)).Str("workflow_id", workflowID).Msg("workflow runs again; task file back in In_Progress/")
		b.note("workflow " + blackboard.ShortID(workflowID) + " runs again: " + mdText(filepath.Base(to)) + " → In_Progress/")
	}
	return err
}

// toInProgress moves a task file to In_Progress/ as running again: Sett's
// keys of the earlier end go (its `## Outcome` stays until the new end
// rewrites it).
func (b *Bridge) toInProgress(p string, d *Doc) (string, error) {
	for _, k := range []string{"retry", "outcome", "finished_at", "reason", "sett_note", "next_retry_at"} {
		if d.Has(k) {
			d.Delete(k)
		}
	}
	d.Set("state", StateRunning)
	d.Set("retried_at", b.NowFunc().UTC().Format(time.RFC3339))
	to, err := moveDoc(p, filepath.Join(b.opt.Path, InProgress), filepath.Base(p), d, "workflow_id")
	if err == nil {
		delete(b.finished, p)
		b.wrote(to)
	}
	return to, err
}

// retryFile retries the workflow of the task file dir/name (moved back
// into Needs_Action/, or marked `retry: true`) and moves the file to
// In_Progress/. When nothing can be retried the file stays where it is
// and the Dashboard lists why.
func (b *Bridge) retryFile(ctx context.Context, dir, name string) error {
	p := filepath.Join(dir, name)
	d, _, err := readCurrent(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	wfID := d.Get("workflow_id")
	if wfID == "" {
		b.refuse(p, "retry: true, but no workflow_id: move the file to Needs_Action/ to start it as a new task")
		return nil
	}
	what, err := b.retryWorkflow(ctx, wfID)
	var nr *notRetriable
	if errors.As(err, &nr) {
		b.refuse(p, nr.why)
		return nil
	}
	if err != nil {
		return err
	}
	delete(b.refused, p)
	to, err := b.toInProgress(p, d)
	if err != nil {
		return err
	}
	b.log.Info().Str("file", b.rel(p)).Str("workflow_id", wfID).Str("retried", what).Msg("task retried from the vault")
	b.note("retried " + mdText(name) + " (workflow " + blackboard.ShortID(wfID) + ", " + mdText(what) + ") → In_Progress/")
	_ = to
	return nil
}

// notRetriable says why a workflow cannot be retried, for the person.
type notRetriable struct{ why string }

func (e *notRetriable) Error() string { return e.why }

// retryWorkflow re-runs the workflow: every claim whose agents' failures
// were final is retried with a fresh attempt budget (as `sett retry`),
// and an approval that timed out is asked again. A running workflow needs
// nothing. It returns what it did, or *notRetriable.
func (b *Bridge) retryWorkflow(ctx context.Context, workflowID string) (string, error) {
	wf, err := b.bb.GetWorkflow(ctx, workflowID)
	if errors.Is(err, blackboard.ErrNotFound) {
		return "", &notRetriable{"its workflow " + blackboard.ShortID(workflowID) + " is not on the blackboard (was Redis reset?): delete the workflow_id line and move the file to Needs_Action/ to start it as a new task"}
	}
	if err != nil {
		return "", err
	}
	switch wf.Status {
	case blackboard.WorkflowRunning:
		return "already running", nil
	case blackboard.WorkflowFailed:
	default:
		return "", &notRetriable{fmt.Sprintf("its workflow %s ended %s; only a failed one can be retried: to run the task again as a new workflow, delete the workflow_id line and move the file to Needs_Action/", blackboard.ShortID(workflowID), wf.Status)}
	}
	ids, err := b.bb.WorkflowClaims(ctx, workflowID)
	if err != nil {
		return "", err
	}
	cls, err := b.bb.GetClaims(ctx, ids)
	if err != nil {
		return "", err
	}
	var did []string
	for _, cl := range cls {
		if cl == nil || cl.Status != blackboard.ClaimTerminated {
			continue
		}
		_, err := b.bb.RetryClaim(ctx, cl.ID, retryBy)
		if err == nil {
			did = append(did, "claim "+blackboard.ShortID(cl.ID)+" re-run")
			continue
		}
		if !errors.Is(err, blackboard.ErrNotFailed) && !errors.Is(err, blackboard.ErrWorkflowEnded) {
			return "", err
		}
		if cl.Gated() && cl.Approval.Decision == "" {
			if _, err := b.bb.ReaskApproval(ctx, cl.ArtefactID, retryBy); err == nil {
				did = append(did, "approval of "+blackboard.ShortID(cl.ArtefactID)+" asked again")
			} else if !blackboard.IsDecisionRefusal(err) {
				return "", err
			}
		}
	}
	if len(did) == 0 {
		return "", &notRetriable{fmt.Sprintf("workflow %s failed (%s) with nothing Sett can re-run; to run the task again as a new workflow, delete the workflow_id line and move the file to Needs_Action/", blackboard.ShortID(workflowID), oneLine(wf.Outcome, 200))}
	}
	return strings.Join(did, ", "), nil
}

// reaskFile asks again for the approval of dir/name (an approval file
// that timed out, moved back into Needs_Action/ or marked `retry: true`):
// the claim waits for a decision again, with no timeout, and the file
// goes back to Pending_Approval/.
func (b *Bridge) reaskFile(ctx context.Context, dir, name string) error {
	p := filepath.Join(dir, name)
	d, _, err := readCurrent(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	art := d.Get("artefact_id")
	if _, err := b.bb.ReaskApproval(ctx, art, retryBy); err != nil {
		if blackboard.IsDecisionRefusal(err) {
			b.refuse(p, "cannot ask for this approval again: "+oneLine(strings.TrimPrefix(err.Error(), "blackboard: "), 300))
			return nil
		}
		return err
	}
	delete(b.refused, p)
	for _, k := range []string{"retry", "sett_note", "expires_at"} {
		if d.Has(k) {
			d.Delete(k)
		}
	}
	d.Set("approval_status", StatusPending)
	if _, err := moveDoc(p, filepath.Join(b.opt.Path, PendingApproval), name, d, "artefact_id"); err != nil {
		return err
	}
	delete(b.finished, p)
	b.note("asked again for the approval in " + mdText(name) + " → Pending_Approval/")
	return nil
}

// stripSett returns a task body without what Sett wrote into it (its
// `## Outcome` section and its notes): what a goal made from an old task
// file must not take for instructions.
func stripSett(body string) string {
	for {
		cut := withoutOutcome(body)
		if cut == body {
			break
		}
		body = cut
	}
	var kept []string
	for _, l := range strings.Split(body, "\n") {
		if !strings.HasPrefix(l, "> **Sett:** ") {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "\n")
}
