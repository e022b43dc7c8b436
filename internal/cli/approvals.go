package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/connect"
	"github.com/settdev/sett/internal/textcut"
)

// addHumanCommands adds the commands a person uses to decide gated work
// and to see what Sett learned: approvals, approve, reject, learnings.
func addHumanCommands(root *cobra.Command, app *App) {
	root.AddCommand(newApprovalsCmd(app), newApproveCmd(app), newRejectCmd(app), newLearningsCmd(app), newMemoryCmd(app), newVaultCmd(app))
}

// approvalView is one waiting approval as `sett approvals -o json` prints
// it.
type approvalView struct {
	ArtefactID      string `json:"artefact_id"`
	ClaimID         string `json:"claim_id"`
	WorkflowID      string `json:"workflow_id"`
	Type            string `json:"type"`
	Version         int    `json:"version"`
	ProducedByRole  string `json:"produced_by_role"`
	ProducedByAgent string `json:"produced_by_agent,omitempty"`
	Summary         string `json:"summary,omitempty"`
	RequestedAtMs   int64  `json:"requested_at_ms"`
	ExpiresAtMs     int64  `json:"expires_at_ms,omitempty"`
}

func newApprovalsCmd(app *App) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "approvals [-o table|json]",
		Short: "List the artefacts waiting for a human decision",
		Long: `List the artefacts whose claims wait in pending_approval (sett.yml approvals:),
oldest first, with when each expires. Decide one with 'sett approve ID' or
'sett reject ID --reason TEXT' (or in the vault's Pending_Approval/ folder).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(output, "table", "json"); err != nil {
				return err
			}
			return app.withBlackboard(cmd.Context(), func(bb *blackboard.Client) error {
				reqs, err := bb.PendingApprovals(cmd.Context())
				if err != nil {
					return err
				}
				views := make([]approvalView, len(reqs))
				for i, r := range reqs {
					views[i] = approvalView{ArtefactID: r.ArtefactID, ClaimID: r.ClaimID, WorkflowID: r.WorkflowID,
						Type: r.ArtefactType, Version: r.Version, ProducedByRole: r.ProducedByRole,
						ProducedByAgent: r.ProducedByAgent, Summary: r.Summary,
						RequestedAtMs: r.RequestedAtMs, ExpiresAtMs: r.ExpiresAtMs}
				}
				if output == "json" {
					return writeJSONIndent(cmd.OutOrStdout(), views)
				}
				return writeApprovalsTable(cmd.OutOrStdout(), styleFor(app), views)
			})
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table or json")
	return cmd
}

func writeApprovalsTable(w io.Writer, style outputStyle, views []approvalView) error {
	if len(views) == 0 {
		fmt.Fprintln(w, "No approvals waiting.")
		return nil
	}
	now := style.Now()
	t := newTable(w, style, "ID", "TYPE", "VER", "WORKFLOW", "BY", "REQUESTED", "EXPIRES", "SUMMARY")
	for _, v := range views {
		producer := v.ProducedByAgent
		if producer == "" {
			producer = v.ProducedByRole
		}
		expires := cell{text: "never"}
		if v.ExpiresAtMs > 0 {
			expires = cell{text: ago(now, msTime(v.ExpiresAtMs))}
			if msTime(v.ExpiresAtMs).Sub(now) < time.Hour {
				expires.colour = colourYellow
			}
		}
		t.row(cell{text: style.id(v.ArtefactID), colour: colourCyan}, cell{text: v.Type}, cell{text: fmt.Sprint(v.Version)},
			cell{text: style.id(v.WorkflowID)}, cell{text: producer}, cell{text: ago(now, msTime(v.RequestedAtMs))},
			expires, cell{text: textcut.Runes(v.Summary, 60)})
	}
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nDecide with `sett approve ID` or `sett reject ID --reason TEXT`; `sett hoard ID` shows the artefact.")
	return nil
}

// decisionFlags are the flags approve and reject share.
type decisionFlags struct {
	by     string
	reason string
	// reasonOptional: no reason given, and the learner works it out.
	reasonOptional bool
	wait           time.Duration
	output         string
}

func newApproveCmd(app *App) *cobra.Command {
	var f decisionFlags
	cmd := &cobra.Command{
		Use:   "approve ID [--by NAME]",
		Short: "Approve an artefact that waits for a human decision",
		Long: `Approve the artefact ID (a unique prefix of its id, as 'sett approvals' shows it;
a claim id works too). The approval is bound to that exact version: if a
newer version replaced it, the command refuses and names the current one.
The orchestrator then asks the agents to bid on it. The decision is
recorded with who (--by, default $USER), when and through which channel.`,
		Args: exactArgs(1, "give the id of the artefact to approve (see `sett approvals`)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDecision(cmd, app, args[0], blackboard.ApprovalApproved, f)
		},
	}
	addDecisionFlags(cmd, app, &f, false)
	return cmd
}

func newRejectCmd(app *App) *cobra.Command {
	var f decisionFlags
	cmd := &cobra.Command{
		Use:   "reject ID [--reason TEXT] [--by NAME]",
		Short: "Reject an artefact that waits for a human decision",
		Long: `Reject the artefact ID with a reason. What follows is approvals.on_reject:
'end' (the default) ends the workflow as rejected; 'rework' sends the
artefact back to the agent that produced it with your reason as feedback.
Either way Sett learns from the rejection: the learner agent (or, without
one, your reason) adds a line to Agent_Memory.md that every agent reads.
The reason may be left out when sett.yml names a learner
(orchestrator.learner): it works the learning out from the artefact and
the goal, as for a plan moved to the vault's Rejected/ folder.`,
		Args: exactArgs(1, "give the id of the artefact to reject (see `sett approvals`)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(f.reason) == "" {
				// A broken sett.yml names no learner: the usage error
				// below says what to do either way.
				if learner, _ := connect.LearnerConfigured(app.Workspace()); !learner {
					return usageError("a rejection needs --reason TEXT: it is the feedback the author gets and what Sett learns from (it is optional only when sett.yml names a learner, orchestrator.learner)")
				}
				f.reasonOptional = true
			}
			return runDecision(cmd, app, args[0], blackboard.ApprovalRejected, f)
		},
	}
	addDecisionFlags(cmd, app, &f, true)
	return cmd
}

func addDecisionFlags(cmd *cobra.Command, app *App, f *decisionFlags, reason bool) {
	cmd.Flags().StringVar(&f.by, "by", "", "who decides (default: $USER)")
	if reason {
		cmd.Flags().StringVar(&f.reason, "reason", "", "why it is rejected (required unless a learner is configured)")
	}
	cmd.Flags().DurationVar(&f.wait, "wait", 10*time.Second, "how long to wait for the orchestrator to act on the decision (0: do not wait)")
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "output format: text or json")
}

// exactArgs is cobra.ExactArgs with a message that says what to give.
func exactArgs(n int, hint string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError("expected %d argument(s), got %d: %s", n, len(args), hint)
		}
		return nil
	}
}

// decisionResult is what approve and reject print with -o json.
type decisionResult struct {
	ArtefactID  string `json:"artefact_id"`
	ClaimID     string `json:"claim_id"`
	WorkflowID  string `json:"workflow_id"`
	Decision    string `json:"decision"`
	By          string `json:"by"`
	Applied     bool   `json:"applied"`
	ClaimStatus string `json:"claim_status"`
}

func runDecision(cmd *cobra.Command, app *App, ref string, decision blackboard.ApprovalDecision, f decisionFlags) error {
	if err := checkFormat(f.output, "text", "json"); err != nil {
		return err
	}
	ctx := cmd.Context()
	return app.withBlackboard(ctx, func(bb *blackboard.Client) error {
		artefactID, err := resolveDecisionTarget(ctx, bb, ref)
		if err != nil {
			return err
		}
		by := strings.TrimSpace(f.by)
		if by == "" {
			by = app.env("USER")
		}
		since, err := bb.LastEventID(ctx)
		if err != nil {
			return err
		}
		err = bb.DecideApproval(ctx, blackboard.Decision{ArtefactID: artefactID, Decision: decision, By: by,
			Channel: blackboard.ChannelCLI, Reason: f.reason, ReasonOptional: f.reasonOptional})
		if err != nil {
			return decisionError(ctx, bb, artefactID, err)
		}
		claimID := blackboard.DeriveID("claim", artefactID)
		cl, applied, err := waitApplied(ctx, bb, claimID, since, f.wait)
		if err != nil {
			return err
		}
		if f.output == "json" {
			return writeJSONIndent(cmd.OutOrStdout(), decisionResult{ArtefactID: artefactID, ClaimID: claimID,
				WorkflowID: cl.WorkflowID, Decision: string(decision), By: by, Applied: applied, ClaimStatus: string(cl.Status)})
		}
		a, err := bb.GetArtefact(ctx, artefactID)
		if err != nil {
			return err
		}
		w := cmd.OutOrStdout()
		verb := "Approved"
		if decision == blackboard.ApprovalRejected {
			verb = "Rejected"
		}
		fmt.Fprintf(w, "%s %s v%d (%s) of workflow %s.\n", verb, a.Type, a.Version, blackboard.ShortID(a.ID), blackboard.ShortID(a.WorkflowID))
		switch {
		case !applied:
			fmt.Fprintf(w, "The decision is recorded; the orchestrator has not acted on it yet (is it running? `sett status`).\n")
		case decision == blackboard.ApprovalApproved:
			fmt.Fprintf(w, "The agents are asked to bid on it now (claim %s).\n", blackboard.ShortID(claimID))
		case cl.FeedbackClaimID != "":
			fmt.Fprintf(w, "It goes back to its producer for a rework with your reason as feedback (claim %s).\n", blackboard.ShortID(cl.FeedbackClaimID))
		default:
			fmt.Fprintf(w, "%s\n", oneLine(cl.TerminationReason))
		}
		if decision == blackboard.ApprovalRejected {
			fmt.Fprintln(w, "Sett learns from this rejection: see Agent_Memory.md in the vault, or `sett learnings`.")
		}
		return nil
	})
}

// resolveDecisionTarget expands ref (an artefact id or prefix, or a claim
// id or prefix) to the artefact a decision is about.
func resolveDecisionTarget(ctx context.Context, bb *blackboard.Client, ref string) (string, error) {
	id, err := resolveArtefactID(ctx, bb, "artefact", ref)
	if err == nil {
		if _, gerr := bb.GetArtefact(ctx, id); gerr == nil {
			return id, nil
		}
	}
	claimID, cerr := bb.ResolveID(ctx, blackboard.PrefixClaim, strings.ToLower(strings.TrimSpace(ref)))
	if cerr != nil {
		if err != nil {
			return "", err
		}
		return "", fmt.Errorf("no artefact or claim with id %q in instance %s: list what waits with `sett approvals`", ref, bb.Instance())
	}
	cl, cerr := bb.GetClaim(ctx, claimID)
	if cerr != nil {
		return "", cerr
	}
	return cl.ArtefactID, nil
}

// decisionError turns a refused decision into a message that says what to
// do instead.
func decisionError(ctx context.Context, bb *blackboard.Client, artefactID string, err error) error {
	var sup *blackboard.SupersededError
	switch {
	case errors.As(err, &sup):
		return fmt.Errorf("%s is superseded: version %d (%s) is current; review it with `sett hoard %s` and decide on that one",
			blackboard.ShortID(artefactID), sup.CurrentVersion, blackboard.ShortID(sup.CurrentID), blackboard.ShortID(sup.CurrentID))
	case errors.Is(err, blackboard.ErrAlreadyDecided):
		cl, cerr := bb.GetClaim(ctx, blackboard.DeriveID("claim", artefactID))
		if cerr == nil {
			who := cl.Approval.By
			if who == "" {
				who = "someone"
			}
			return fmt.Errorf("%s was already %s by %s via %s %s; a decision cannot be changed",
				blackboard.ShortID(artefactID), cl.Approval.Decision, who, cl.Approval.Channel, ago(time.Now(), msTime(cl.Approval.DecidedAtMs)))
		}
	case errors.Is(err, blackboard.ErrWorkflowEnded):
		return fmt.Errorf("%s cannot be decided any more: %w", blackboard.ShortID(artefactID), err)
	case errors.Is(err, blackboard.ErrApprovalExpired):
		return fmt.Errorf("%s is no longer waiting: its approval timed out (approvals.timeout); the claim was ended for human review", blackboard.ShortID(artefactID))
	case errors.Is(err, blackboard.ErrStaleStatus), errors.Is(err, blackboard.ErrNotFound):
		return fmt.Errorf("%s is not waiting for a decision: %w; `sett approvals` lists what waits", blackboard.ShortID(artefactID), err)
	case errors.Is(err, blackboard.ErrInvalid):
		return usageError("%v", err)
	}
	return err
}

// waitApplied waits up to d for the orchestrator to act on the decision
// (the claim leaves pending_approval), reading the event stream from
// since. It returns the claim as last read.
func waitApplied(ctx context.Context, bb *blackboard.Client, claimID, since string, d time.Duration) (*blackboard.Claim, bool, error) {
	deadline := time.Now().Add(d)
	for {
		cl, err := bb.GetClaim(ctx, claimID)
		if err != nil {
			return nil, false, err
		}
		if cl.Status != blackboard.ClaimPendingApproval {
			return cl, true, nil
		}
		left := time.Until(deadline)
		if left <= 0 {
			return cl, false, nil
		}
		events, err := bb.ReadEvents(ctx, since, 100, min(left, time.Second))
		if err != nil {
			return nil, false, err
		}
		for _, e := range events {
			since = e.StreamID
		}
	}
}
