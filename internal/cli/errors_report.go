package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/textcut"
)

// errorsReport is what `sett errors` shows, one field per section. A new
// section is a field here plus an entry in errorSections.
type errorsReport struct {
	Instance string `json:"instance"`
	// Examined is how many of the newest workflows were read.
	Examined        int              `json:"examined_workflows"`
	FailedWorkflows []failedWorkflow `json:"failed_workflows"`
	FailedClaims    []failedClaim    `json:"failed_claims"`
	// DeadLetters are orchestrator events whose handling failed
	// orchestrator.dead_letter_after times in a row, newest first.
	DeadLetters []DeadLetterView `json:"dead_letters"`
	// Vault is the vault bridge's health while its passes fail (nil
	// when the vault is in step or there is none).
	Vault *vaultView `json:"vault_failing,omitempty"`
}

// failedWorkflow is a workflow that ended failed.
type failedWorkflow struct {
	WorkflowID string `json:"workflow_id"`
	Goal       string `json:"goal"`
	Score      int    `json:"score"`
	EndedAtMs  int64  `json:"ended_at_ms"`
	Reason     string `json:"reason"`
}

// failedClaim is a claim that ended because its agents' failures were
// final: retries exhausted, or a permanent failure. `sett retry` re-runs
// it.
type failedClaim struct {
	ClaimID    string `json:"claim_id"`
	WorkflowID string `json:"workflow_id"`
	ArtefactID string `json:"artefact_id"`
	// Agents are the agents whose tools failed, with their attempts.
	Agents    []failedAgent `json:"agents"`
	Reason    string        `json:"reason"`
	EndedAtMs int64         `json:"ended_at_ms"`
}

// failedAgent is one agent of a failed claim: how many runs it had.
type failedAgent struct {
	Agent    string `json:"agent"`
	Attempts int    `json:"attempts"`
}

// errorSection renders one part of the text form.
type errorSection struct {
	title string
	count func(*errorsReport) int
	write func(io.Writer, outputStyle, *errorsReport)
}

// errorSections lists the sections of `sett errors` in the order they
// print; each says "none" when it is empty.
func errorSections() []errorSection {
	return []errorSection{
		{"Failed workflows", func(r *errorsReport) int { return len(r.FailedWorkflows) }, writeFailedWorkflows},
		{"Failed claims", func(r *errorsReport) int { return len(r.FailedClaims) }, writeFailedClaims},
		{"Dead letters (events that failed too many times)", func(r *errorsReport) int { return len(r.DeadLetters) }, writeDeadLetters},
	}
}

func newErrorsCmd(app *App) *cobra.Command {
	var format string
	var limit int64
	cmd := &cobra.Command{
		Use:   "errors",
		Short: "List failed workflows and the claims that failed them",
		Long: `List what went wrong, newest first, in sections: workflows that ended failed
(with their reason), claims whose agents' failures were final — retries
exhausted or a permanent failure — with each agent's attempts, and the
newest 100 dead letters (events the orchestrator gave up on). Re-run a
failed claim with 'sett retry'. Only the newest --limit workflows are read.`,
		Example: `  sett errors
  sett errors -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format, "text", "json"); err != nil {
				return err
			}
			if limit < 1 {
				return usageError("--limit %d: give how many of the newest workflows to read (at least 1)", limit)
			}
			ctx := cmd.Context()
			return app.withBlackboard(ctx, func(bb *blackboard.Client) error {
				r, err := collectErrors(ctx, bb, limit)
				if err != nil {
					return err
				}
				if format == "json" {
					return writeJSON(cmd.OutOrStdout(), r)
				}
				writeErrors(cmd.OutOrStdout(), styleFor(app), r)
				return nil
			})
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output format: text or json")
	cmd.Flags().Int64Var(&limit, "limit", 1000, "read at most this many of the newest workflows")
	return cmd
}

// collectErrors reads the newest workflows and the failed claims of the
// failed ones.
func collectErrors(ctx context.Context, bb *blackboard.Client, limit int64) (*errorsReport, error) {
	r := &errorsReport{Instance: bb.Instance(), FailedWorkflows: []failedWorkflow{}, FailedClaims: []failedClaim{}}
	dls, err := CollectDeadLetters(ctx, bb, 100)
	if err != nil {
		return nil, err
	}
	r.DeadLetters = dls
	if v, err := collectVault(ctx, bb); err != nil {
		return nil, err
	} else if v != nil && !v.OK {
		r.Vault = v
	}
	ids, err := bb.ListWorkflows(ctx, limit)
	if err != nil {
		return nil, err
	}
	wfs, err := bb.GetWorkflows(ctx, ids)
	if err != nil {
		return nil, err
	}
	var failed []*blackboard.Workflow
	for _, w := range wfs {
		if w == nil {
			continue
		}
		r.Examined++
		if w.Status == blackboard.WorkflowFailed {
			failed = append(failed, w)
		}
	}
	// Claims that failed are looked for in every workflow read: a claim's
	// failure normally fails its workflow, but one retried by hand may
	// fail again in a workflow that is still running.
	for _, w := range wfs {
		if w == nil {
			continue
		}
		cids, err := bb.WorkflowClaims(ctx, w.ID)
		if err != nil {
			return nil, err
		}
		claims, err := bb.GetClaims(ctx, cids)
		if err != nil {
			return nil, err
		}
		for _, c := range claims {
			if fc, ok := failedClaimOf(c); ok {
				r.FailedClaims = append(r.FailedClaims, fc)
			}
		}
	}
	goals, err := bb.GetArtefacts(ctx, idsOf(failed))
	if err != nil {
		return nil, err
	}
	for i, w := range failed {
		fw := failedWorkflow{WorkflowID: w.ID, Score: w.Priority, EndedAtMs: w.EndedAtMs, Reason: w.Outcome}
		if goals[i] != nil {
			fw.Goal = goals[i].Summary
		}
		r.FailedWorkflows = append(r.FailedWorkflows, fw)
	}
	sort.SliceStable(r.FailedWorkflows, func(i, j int) bool { return r.FailedWorkflows[i].EndedAtMs > r.FailedWorkflows[j].EndedAtMs })
	sort.SliceStable(r.FailedClaims, func(i, j int) bool { return r.FailedClaims[i].EndedAtMs > r.FailedClaims[j].EndedAtMs })
	return r, nil
}

func idsOf(wfs []*blackboard.Workflow) []string {
	out := make([]string, len(wfs))
	for i, w := range wfs {
		out[i] = w.ID
	}
	return out
}

// agentFailurePrefix starts the termination reason of a claim whose
// agents' failures were final (the orchestrator's escalation).
const agentFailurePrefix = "Terminated due to agent failure"

// failedClaimOf reports whether c ended because its agents failed, and
// its entry.
func failedClaimOf(c *blackboard.Claim) (failedClaim, bool) {
	if c == nil || c.Status != blackboard.ClaimTerminated || !strings.HasPrefix(c.TerminationReason, agentFailurePrefix) {
		return failedClaim{}, false
	}
	fc := failedClaim{ClaimID: c.ID, WorkflowID: c.WorkflowID, ArtefactID: c.ArtefactID, Reason: c.TerminationReason, EndedAtMs: c.UpdatedAtMs}
	// The reason names each agent as "<agent> failed <n> time(s)"; the
	// retry states hold the earlier attempts.
	seen := map[string]bool{}
	candidates := append([]string{c.GrantedExclusiveAgent}, c.GrantedParallelAgents...)
	candidates = append(candidates, c.GrantedReviewAgents...)
	for _, agent := range candidates {
		if agent == "" || seen[agent] || !strings.Contains(c.TerminationReason, agent+" failed ") {
			continue
		}
		seen[agent] = true
		fc.Agents = append(fc.Agents, failedAgent{Agent: agent, Attempts: c.Retries[agent].Failed + 1})
	}
	return fc, true
}

func writeErrors(w io.Writer, style outputStyle, r *errorsReport) {
	for i, s := range errorSections() {
		if i > 0 {
			fmt.Fprintln(w)
		}
		n := s.count(r)
		fmt.Fprintf(w, "%s (%d)\n", style.paint(colourBold, s.title), n)
		if n == 0 {
			fmt.Fprintln(w, "  none")
			continue
		}
		s.write(w, style, r)
	}
	if r.Vault != nil {
		fmt.Fprintf(w, "\n%s\n", style.paint(colourBold, "Vault (Sett cannot keep it in step)"))
		writeVaultProblem(w, style, r)
	}
	if len(r.FailedClaims) > 0 {
		fmt.Fprintf(w, "\nRe-run a failed claim with a fresh attempt budget: `sett retry CLAIM` (or `sett retry WORKFLOW`).\n")
	}
}

func writeFailedWorkflows(w io.Writer, style outputStyle, r *errorsReport) {
	t := newTable(w, style, "  WORKFLOW", "SCORE", "ENDED", "GOAL", "REASON")
	for _, f := range r.FailedWorkflows {
		t.row(cell{text: "  " + style.id(f.WorkflowID)}, cell{text: fmt.Sprint(f.Score)}, cell{text: stamp(style.Now(), msTime(f.EndedAtMs))},
			cell{text: textcut.Runes(oneLine(f.Goal), 40)}, cell{text: textcut.Runes(oneLine(f.Reason), 100), colour: colourRed})
	}
	_ = t.flush()
}

func writeFailedClaims(w io.Writer, style outputStyle, r *errorsReport) {
	t := newTable(w, style, "  CLAIM", "WORKFLOW", "ENDED", "AGENTS (ATTEMPTS)", "REASON")
	for _, c := range r.FailedClaims {
		var agents []string
		for _, a := range c.Agents {
			agents = append(agents, fmt.Sprintf("%s (%d)", a.Agent, a.Attempts))
		}
		t.row(cell{text: "  " + style.id(c.ClaimID)}, cell{text: style.id(c.WorkflowID)}, cell{text: stamp(style.Now(), msTime(c.EndedAtMs))},
			cell{text: strings.Join(agents, ", ")}, cell{text: textcut.Runes(oneLine(c.Reason), 100), colour: colourRed})
	}
	_ = t.flush()
}
