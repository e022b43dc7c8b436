package vault

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

// Approval file values of approval_status.
const (
	StatusPending  = "pending"
	StatusApproved = "approved"
	StatusRejected = "rejected"
	StatusRefused  = "refused"
	// StatusRejectedReviewed is the `status` of a rejected item once its
	// learning is recorded (the learning loop).
	StatusRejectedReviewed = "rejected_reviewed"
)

// approvalFolders are the folders an approval file lives in while it
// waits or is being decided; one in Needs_Human_Review/ timed out, and
// can still be decided late (moved to Approved/ or Rejected/, its
// approval_status set, or from the CLI or console).
var approvalFolders = []string{PendingApproval, Approved, Rejected, NeedsHumanReview}

// approvals writes a file for every pending approval, applies the
// decisions people made in the vault, and moves decided files on. It
// returns the pending approvals (for the dashboard).
func (b *Bridge) approvals(ctx context.Context, learned map[string]blackboard.Learning) ([]blackboard.ApprovalRequest, error) {
	pending, err := b.bb.PendingApprovals(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var errs []error
	for _, folder := range approvalFolders {
		files, err := b.filesNaming(folder, "artefact_id",
			"no artefact_id in the frontmatter: only files Sett wrote to Pending_Approval/ can be decided (delete a broken one and Sett writes it again)")
		if err != nil {
			return pending, err
		}
		arts := make([]string, len(files))
		for i, f := range files {
			art := f.Doc.Get("artefact_id")
			seen[art] = true
			arts[i] = blackboard.DeriveID("claim", art)
		}
		// The claims of the folder's files in one pipelined read, for the
		// files nobody decided (most of them, every pass): one GetClaim
		// each was a round trip per pending approval per pass.
		claims, err := b.bb.GetClaims(ctx, arts)
		if err != nil {
			return pending, err
		}
		for i, f := range files {
			p := f.Path
			if err := b.decideFile(ctx, folder, f, claims[i], learned); err != nil {
				if ctx.Err() != nil {
					return pending, ctx.Err()
				}
				errs = append(errs, fmt.Errorf("%s: %w", b.rel(p), err))
			}
		}
	}
	for _, r := range pending {
		if seen[r.ArtefactID] {
			continue
		}
		if err := b.writeApproval(ctx, r); err != nil {
			errs = append(errs, err)
		}
	}
	return pending, errors.Join(errs...)
}

// approvalName is Pending_Approval/<slug>-<shortid>.md.
func approvalName(r blackboard.ApprovalRequest, title string) string {
	s := slug(r.ArtefactType + " " + title)
	return s + "-" + blackboard.ShortID(r.ArtefactID) + ".md"
}

var nonSlug = regexp.MustCompile(`[^a-z0-9]+`)

func slug(s string) string {
	s = strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(s), "-"), "-")
	if len(s) > 48 {
		s = strings.TrimRight(s[:48], "-")
	}
	if s == "" {
		s = "approval"
	}
	return s
}

// writeApproval writes the file a person decides r with.
func (b *Bridge) writeApproval(ctx context.Context, r blackboard.ApprovalRequest) error {
	a, err := b.bb.GetArtefact(ctx, r.ArtefactID)
	if err != nil {
		return err
	}
	title := b.goalTitle(ctx, r.WorkflowID)
	d := &Doc{}
	d.Set("artefact_id", r.ArtefactID)
	d.Set("version", strconv.Itoa(r.Version))
	d.Set("type", r.ArtefactType)
	d.Set("producer", orDash(r.ProducedByAgent))
	d.Set("workflow_id", r.WorkflowID)
	d.Set("claim_id", r.ClaimID)
	d.Set("task", title)
	d.Set("approval_status", StatusPending)
	d.Set("requested_at", msTime(r.RequestedAtMs))
	if r.ExpiresAtMs > 0 {
		d.Set("expires_at", msTime(r.ExpiresAtMs))
	}
	d.Set("reason", "")
	d.Body = renderApprovalBody(r, a, title, b.opt.Learner)
	p := filepath.Join(b.opt.Path, PendingApproval, approvalName(r, title))
	if _, err := os.Lstat(p); err == nil {
		// The file is there but this pass could not read it as Sett's: a
		// person saving it (an editor truncates, then writes) or a broken
		// frontmatter, which the refusal names. Rewriting it would throw
		// the person's decision away; the next pass reads it again, and a
		// person who deletes it gets a fresh one.
		return nil
	}
	if err := writeAtomic(p, d.Render()); err != nil {
		return err
	}
	b.log.Info().Str("file", b.rel(p)).Str("artefact_id", r.ArtefactID).Msg("approval file written")
	b.note("waiting for approval: " + mdText(b.rel(p)))
	return nil
}

func renderApprovalBody(r blackboard.ApprovalRequest, a *blackboard.Artefact, title string, learner bool) string {
	var s strings.Builder
	fmt.Fprintf(&s, "# Approve %s v%d for “%s”?\n\n", mdText(r.ArtefactType), r.Version, mdText(oneLine(title, 200)))
	if r.Summary != "" {
		fmt.Fprintf(&s, "%s\n\n", mdText(oneLine(r.Summary, 1000)))
	}
	fmt.Fprintf(&s, "Produced by %s for workflow %s.\n\n", mdText(orDash(r.ProducedByAgent)), blackboard.ShortID(r.WorkflowID))
	s.WriteString("## Payload\n\n")
	s.WriteString(fence(a.Payload))
	s.WriteString(howToDecide(blackboard.ShortID(r.ArtefactID), learner))
	return s.String()
}

// fence wraps a payload in a code fence longer than any it contains.
func fence(payload string) string {
	f := "```"
	for strings.Contains(payload, f) {
		f += "`"
	}
	p := strings.TrimRight(payload, "\n")
	return f + "\n" + p + "\n" + f + "\n"
}

// decideFile applies what a person did with an approval file in folder.
// read is the file's claim as read with its folder's files (nil: none).
func (b *Bridge) decideFile(ctx context.Context, folder string, f *vaultFile, read *blackboard.Claim, learned map[string]blackboard.Learning) error {
	d := f.Doc
	art := d.Get("artefact_id")
	status := strings.ToLower(d.Get("approval_status"))
	if status == StatusRefused {
		return nil // noted in the file; a person moves it on
	}
	if d.Get("decided_at") != "" {
		// Applied already: an approval stays in Approved/; a rejection
		// moves to Done/ once its learning is recorded.
		if status == StatusRejected {
			return b.finishRejected(f, learned)
		}
		if status == StatusApproved && folder != Approved {
			_, err := moveDoc(f.Path, filepath.Join(b.opt.Path, Approved), f.Name, d, "artefact_id")
			return err
		}
		return nil
	}
	want, channel := blackboard.ApprovalDecision(""), blackboard.ChannelFrontmatter
	switch {
	case folder == Approved:
		want, channel = blackboard.ApprovalApproved, blackboard.ChannelVaultMove
	case folder == Rejected:
		want, channel = blackboard.ApprovalRejected, blackboard.ChannelVaultMove
	case status == StatusApproved || isWord(d.Get("decision"), "approve", "approved"):
		want = blackboard.ApprovalApproved
	case status == StatusRejected || isWord(d.Get("decision"), "reject", "rejected"):
		want = blackboard.ApprovalRejected
	}
	if want == "" {
		cl := read
		if folder == NeedsHumanReview {
			return b.reviewWaiting(f, cl)
		}
		return b.undecided(f, cl)
	}
	// A decision: the claim as it is now, for telling a repeat from a
	// refusal.
	cl, err := b.bb.GetClaim(ctx, blackboard.DeriveID("claim", art))
	if err != nil && !errors.Is(err, blackboard.ErrNotFound) {
		return err
	}
	by := firstOf(d.Get("decided_by"), d.Get("approved_by"), d.Get("rejected_by"))
	reason := ""
	if want == blackboard.ApprovalRejected {
		reason = firstOf(d.Get("reason"), sectionText(d.Body, "Reason"))
	}
	err = b.bb.DecideApproval(ctx, blackboard.Decision{ArtefactID: art, Decision: want, By: by, Channel: channel, Reason: reason,
		ReasonOptional: b.opt.Learner})
	if err != nil && errors.Is(err, blackboard.ErrAlreadyDecided) && cl != nil && cl.Approval.Decision == want {
		err = nil // decided the same way already (an earlier pass, or the CLI)
	}
	switch {
	case err == nil:
		return b.applied(f, folder, want, by, string(channel), reason, learned)
	case errors.Is(err, blackboard.ErrInvalid):
		// Fixable in place (a rejection without a reason): say so and try
		// again when the file changes.
		return b.noteInFile(f, err, "")
	case errors.Is(err, blackboard.ErrApprovalExpired):
		if nerr := b.noteInFile(f, err, StatusRefused); nerr != nil {
			return nerr
		}
		return b.toHumanReview(f, "the approval timed out before this decision")
	case blackboard.IsDecisionRefusal(err):
		return b.noteInFile(f, err, StatusRefused)
	}
	return err
}

// applied records an applied decision in the file and moves it to the
// folder of its outcome.
func (b *Bridge) applied(f *vaultFile, folder string, want blackboard.ApprovalDecision, by, channel, reason string, learned map[string]blackboard.Learning) error {
	d := f.Doc
	d.Set("approval_status", string(want))
	d.Set("decided_by", orDash(by))
	d.Set("decided_at", b.NowFunc().UTC().Format(time.RFC3339))
	d.Set("channel", channel)
	d.Delete("sett_note")
	if want == blackboard.ApprovalRejected {
		d.Set("reason", reason)
	}
	b.log.Info().Str("file", b.rel(f.Path)).Str("decision", string(want)).Str("channel", channel).Msg("vault decision applied")
	b.note(fmt.Sprintf("%s %s (%s)", mdText(string(want)), mdText(f.Name), mdText(channel)))
	target := Approved
	if want == blackboard.ApprovalRejected {
		target = Rejected
	}
	to, err := moveDoc(f.Path, filepath.Join(b.opt.Path, target), f.Name, d, "artefact_id")
	if err != nil {
		return err
	}
	f.Path, f.Name = to, filepath.Base(to)
	if want == blackboard.ApprovalRejected {
		return b.finishRejected(f, learned)
	}
	return nil
}

// finishRejected moves a rejected item to Done/ with status
// rejected_reviewed once its learning is recorded (the learning loop).
func (b *Bridge) finishRejected(f *vaultFile, learned map[string]blackboard.Learning) error {
	l, ok := learned[f.Doc.Get("artefact_id")]
	if !ok {
		return nil
	}
	d := f.Doc
	d.Set("status", StatusRejectedReviewed)
	d.Set("learning", l.Text)
	_, err := moveDoc(f.Path, filepath.Join(b.opt.Path, Done), f.Name, d, "artefact_id")
	if err == nil {
		b.note("reviewed the rejection of " + mdText(f.Name) + ": learning recorded")
	}
	return err
}

// undecided handles a file nobody decided in the vault: its claim may
// have been decided from the CLI, timed out, or ended with its workflow.
func (b *Bridge) undecided(f *vaultFile, cl *blackboard.Claim) error {
	if cl == nil || cl.Status == blackboard.ClaimPendingApproval {
		return nil
	}
	switch cl.Approval.Decision {
	case blackboard.ApprovalApproved, blackboard.ApprovalRejected:
		d := f.Doc
		d.Set("approval_status", string(cl.Approval.Decision))
		d.Set("decided_by", orDash(cl.Approval.By))
		d.Set("decided_at", msTime(cl.Approval.DecidedAtMs))
		d.Set("channel", string(cl.Approval.Channel))
		if cl.Approval.Decision == blackboard.ApprovalRejected {
			d.Set("reason", cl.Approval.Reason)
		}
		target := Approved
		if cl.Approval.Decision == blackboard.ApprovalRejected {
			target = Rejected
		}
		_, err := moveDoc(f.Path, filepath.Join(b.opt.Path, target), f.Name, d, "artefact_id")
		return err
	}
	why := cl.TerminationReason
	if why == "" {
		why = "the claim is " + string(cl.Status) + " without a decision"
	}
	return b.toHumanReview(f, why)
}

// reviewWaiting follows a timed-out approval in Needs_Human_Review/ that
// nobody decided in the vault: decided late elsewhere (CLI, console), it
// moves to Approved/ or Rejected/; asked again (`sett retry`), back to
// Pending_Approval/; otherwise it stays.
func (b *Bridge) reviewWaiting(f *vaultFile, cl *blackboard.Claim) error {
	switch {
	case cl == nil:
		return nil
	case cl.Approval.Decision != "":
		return b.undecided(f, cl)
	case cl.Status == blackboard.ClaimPendingApproval:
		d := f.Doc
		d.Set("approval_status", StatusPending)
		for _, k := range []string{"sett_note", "expires_at"} {
			if d.Has(k) {
				d.Delete(k)
			}
		}
		_, err := moveDoc(f.Path, filepath.Join(b.opt.Path, PendingApproval), f.Name, d, "artefact_id")
		if err == nil {
			b.note("the approval in " + mdText(f.Name) + " was asked again → Pending_Approval/")
		}
		return err
	}
	return nil
}

// toHumanReview moves an approval nobody decided in time to
// Needs_Human_Review/.
func (b *Bridge) toHumanReview(f *vaultFile, why string) error {
	d := f.Doc
	d.Set("approval_status", "expired")
	d.Set("sett_note", oneLine(why, 500))
	_, err := moveDoc(f.Path, filepath.Join(b.opt.Path, NeedsHumanReview), f.Name, d, "artefact_id")
	if err == nil {
		b.note("moved " + mdText(f.Name) + " to Needs_Human_Review/: " + mdText(oneLine(why, 120)))
	}
	return err
}

// noteInFile writes why a decision could not apply into the file (the
// frontmatter's sett_note and a line at the top of the body), and sets
// approval_status when status is not "".
func (b *Bridge) noteInFile(f *vaultFile, cause error, status string) error {
	msg := oneLine(strings.TrimPrefix(cause.Error(), "blackboard: "), 600)
	var se *blackboard.SupersededError
	if errors.As(cause, &se) && se.CurrentID != "" {
		msg = fmt.Sprintf("refused: this is not the current version; version %d (%s) is current: decide that one (its file is in Pending_Approval/)", se.CurrentVersion, blackboard.ShortID(se.CurrentID))
	}
	d := f.Doc
	if d.Get("sett_note") == msg && (status == "" || d.Get("approval_status") == status) {
		return nil
	}
	d.Set("sett_note", msg)
	if status != "" {
		d.Set("approval_status", status)
	}
	marker := "> **Sett:** "
	d.EditBody(func(body string) string {
		var kept []string
		for _, l := range strings.Split(body, "\n") {
			if !strings.HasPrefix(l, marker) {
				kept = append(kept, l)
			}
		}
		return marker + mdText(msg) + "\n\n" + strings.TrimLeft(strings.Join(kept, "\n"), "\n")
	})
	b.log.Warn().Str("file", b.rel(f.Path)).Str("reason", msg).Msg("vault decision refused; noted in the file")
	b.note("refused the decision in " + mdText(b.rel(f.Path)) + ": " + mdText(oneLine(msg, 120)))
	return updateDoc(f.Path, d)
}

// sectionText returns the text under "## <title>" up to the next heading
// of the same or a higher level, without HTML comments, trimmed.
func sectionText(body, title string) string {
	lines := strings.Split(body, "\n")
	var out []string
	in := false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "## ") || strings.HasPrefix(t, "# ") {
			if in {
				break
			}
			in = strings.EqualFold(strings.TrimSpace(strings.TrimLeft(t, "#")), title)
			continue
		}
		if in {
			out = append(out, l)
		}
	}
	s := regexp.MustCompile(`(?s)<!--.*?-->`).ReplaceAllString(strings.Join(out, "\n"), "")
	return strings.TrimSpace(s)
}

// goalTitle names a workflow's task: its subject, else its summary.
func (b *Bridge) goalTitle(ctx context.Context, workflowID string) string {
	g, err := b.bb.GetArtefact(ctx, workflowID)
	if err != nil {
		return blackboard.ShortID(workflowID)
	}
	if s := strings.TrimSpace(g.Metadata["subject"]); s != "" {
		return s
	}
	if g.Summary != "" {
		return g.Summary
	}
	return blackboard.ShortID(workflowID)
}

func msTime(ms int64) string {
	if ms <= 0 {
		return ""
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339)
}

func firstOf(vals ...string) string {
	for _, v := range vals {
		if strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func isWord(v string, words ...string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	for _, w := range words {
		if v == w {
			return true
		}
	}
	return false
}
