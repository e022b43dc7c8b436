package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/blackboard"
)

// retryResult is the JSON output of `sett retry`: one entry per claim.
type retryResult struct {
	ClaimID    string `json:"claim_id"`
	WorkflowID string `json:"workflow_id"`
	Status     string `json:"status"`
	Reopened   bool   `json:"workflow_reopened"`
	Already    bool   `json:"already_retried"`
	// Reasked is set for an approval that timed out: it waits for a
	// decision again (no timeout).
	Reasked bool `json:"approval_reasked,omitempty"`
}

func newRetryCmd(app *App) *cobra.Command {
	var format, by string
	cmd := &cobra.Command{
		Use:   "retry WORKFLOW|CLAIM",
		Short: "Re-run a failed claim with a fresh attempt budget",
		Long: `Re-run a claim whose agents' failures were final (retries exhausted, or a
permanent failure), as 'sett errors' lists them: its failed workflow runs again,
the claim goes back to the phase it failed in, and each failed agent is granted
again with a fresh attempt budget (attempt 1 of its retry policy). Given a
workflow, every failed claim of it is retried. The earlier Failure artefacts
stay in the audit trail. Retrying again while the claim is open changes nothing.

A workflow that failed because nobody decided an approval in time
(approvals.timeout) is retried by asking for that approval again: the claim
waits in pending_approval with no timeout and the workflow runs again. (A late
'sett approve' or 'sett reject' resumes it as well.) With a vault, the task
file follows: it moves back to In_Progress/ and, when the workflow ends, to
Done/ or Failed/ with its Outcome rewritten.`,
		Example: `  sett retry 3f2a9c1d
  sett retry 3f2a9c1d -o json`,
		Args: exactArgs(1, "give the id of a failed claim or workflow, as `sett errors` shows it"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkFormat(format, "text", "json"); err != nil {
				return err
			}
			ctx := cmd.Context()
			return app.withBlackboard(ctx, func(bb *blackboard.Client) error {
				claims, err := retryTargets(ctx, bb, args[0])
				if err != nil {
					return err
				}
				who := decider(app, by)
				out := cmd.OutOrStdout()
				var results []retryResult
				for _, c := range claims {
					if expiredApproval(c) {
						if _, err := bb.ReaskApproval(ctx, c.ArtefactID, who); err != nil {
							return decisionError(ctx, bb, c.ArtefactID, err)
						}
						results = append(results, retryResult{ClaimID: c.ID, WorkflowID: c.WorkflowID, Status: string(blackboard.ClaimPendingApproval), Reopened: true, Reasked: true})
						continue
					}
					res, err := bb.RetryClaim(ctx, c.ID, who)
					switch {
					case errors.Is(err, blackboard.ErrNotFailed):
						return fmt.Errorf("claim %s cannot be retried: %s. `sett retry` re-runs a claim whose retries were exhausted or whose failure was permanent; see `sett errors`",
							blackboard.ShortID(c.ID), strings.TrimPrefix(err.Error(), blackboard.ErrNotFailed.Error()+": claim "+c.ID+": "))
					case errors.Is(err, blackboard.ErrWorkflowEnded):
						return fmt.Errorf("claim %s cannot be retried: its workflow %s ended otherwise (%v); post the goal again with `sett forage`", blackboard.ShortID(c.ID), blackboard.ShortID(c.WorkflowID), err)
					case err != nil:
						return err
					}
					results = append(results, retryResult{ClaimID: c.ID, WorkflowID: c.WorkflowID, Status: string(res.Status), Reopened: res.Reopened, Already: res.Already})
				}
				if format == "json" {
					return writeJSON(out, results)
				}
				for _, r := range results {
					switch {
					case r.Reasked:
						fmt.Fprintf(out, "Claim %s waits for approval again (its approval had timed out); workflow %s runs again. Decide it with `sett approve %s` or `sett reject %s --reason ...`.\n",
							blackboard.ShortID(r.ClaimID), blackboard.ShortID(r.WorkflowID), blackboard.ShortID(r.ClaimID), blackboard.ShortID(r.ClaimID))
					case r.Already:
						fmt.Fprintf(out, "Claim %s was retried already and is %s: nothing to do.\n", blackboard.ShortID(r.ClaimID), r.Status)
					case r.Reopened:
						fmt.Fprintf(out, "Claim %s is back in %s with a fresh attempt budget; workflow %s runs again.\n", blackboard.ShortID(r.ClaimID), r.Status, blackboard.ShortID(r.WorkflowID))
					default:
						fmt.Fprintf(out, "Claim %s is back in %s with a fresh attempt budget.\n", blackboard.ShortID(r.ClaimID), r.Status)
					}
				}
				fmt.Fprintf(out, "Follow it with `sett watch --workflow %s`.\n", blackboard.ShortID(claims[0].WorkflowID))
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output format: text or json")
	cmd.Flags().StringVar(&by, "by", "", "who retries (default: $USER)")
	return cmd
}

// retryTargets resolves ref to the claims to retry: the claim it names,
// or the failed claims of the workflow it names.
func retryTargets(ctx context.Context, bb *blackboard.Client, ref string) ([]*blackboard.Claim, error) {
	norm := strings.ToLower(strings.TrimSpace(ref))
	if id, err := bb.ResolveID(ctx, blackboard.PrefixClaim, norm); err == nil {
		c, err := bb.GetClaim(ctx, id)
		if err != nil {
			return nil, err
		}
		return []*blackboard.Claim{c}, nil
	}
	wf, err := resolveWorkflow(ctx, bb, ref)
	if err != nil {
		return nil, fmt.Errorf("%v (nor is it a claim)", err)
	}
	ids, err := bb.WorkflowClaims(ctx, wf.ID)
	if err != nil {
		return nil, err
	}
	claims, err := bb.GetClaims(ctx, ids)
	if err != nil {
		return nil, err
	}
	var out []*blackboard.Claim
	for _, c := range claims {
		if _, ok := failedClaimOf(c); ok || (wf.Status == blackboard.WorkflowFailed && expiredApproval(c)) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("workflow %s has no failed claim to retry (it is %s: %s); `sett errors` lists what failed", blackboard.ShortID(wf.ID), wf.Status, oneLine(wf.Outcome))
	}
	return out, nil
}

// expiredApproval reports whether c ended because nobody decided its
// approval in time (retried by asking again).
func expiredApproval(c *blackboard.Claim) bool {
	return c != nil && c.Status == blackboard.ClaimTerminated && c.Gated() && c.Approval.Decision == "" &&
		c.Approval.ExpiresAtMs > 0 && c.UpdatedAtMs >= c.Approval.ExpiresAtMs
}
