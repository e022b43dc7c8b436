package cli

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/termsafe"
	"github.com/settdev/sett/internal/textcut"
)

// addControlCommands adds pause, resume, cancel and queue.
func addControlCommands(root *cobra.Command, app *App) {
	root.AddCommand(newPauseCmd(app), newResumeCmd(app), newCancelCmd(app), newQueueCmd(app), newGCCmd(app),
		newErrorsCmd(app), newRetryCmd(app))
}

func newPauseCmd(app *App) *cobra.Command {
	var reason, by string
	cmd := &cobra.Command{
		Use:   "pause [--reason TEXT]",
		Short: "Stop every new grant; running tools finish",
		Long: `Pause the instance: from the moment this returns, no grant is handed to any
agent. Tools already running finish and their results are stored; claims
keep collecting bids; goals can still be posted. What would have been
granted waits and is released, highest priority first, by 'sett resume'.
Creating a .sett_stop file in the workspace (or the vault) does the same;
'sett resume' deletes it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return app.withBlackboard(cmd.Context(), func(bb *blackboard.Client) error {
				changed, err := bb.Pause(cmd.Context(), decider(app, by), reason, blackboard.ControlFromCLI)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if !changed {
					fmt.Fprintln(out, "Already paused; `sett status` says since when and why.")
					return nil
				}
				fmt.Fprintln(out, "Paused: no new grants from now on; running tools finish. `sett resume` continues.")
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (shown by `sett status`)")
	cmd.Flags().StringVar(&by, "by", "", "who pauses (default: $USER)")
	return cmd
}

func newResumeCmd(app *App) *cobra.Command {
	var by string
	cmd := &cobra.Command{
		Use:   "resume",
		Short: "Lift a pause: what waited is granted, highest priority first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return app.withBlackboard(cmd.Context(), func(bb *blackboard.Client) error {
				// A stop file is a pause of its own: resuming while it exists
				// would leave the file and the instance disagreeing, so the
				// resume deletes it first (or refuses, saying why).
				removed, err := removeStopFiles(stopFileDirs(app, app.Workspace()))
				for _, p := range removed {
					fmt.Fprintf(cmd.OutOrStdout(), "Deleted the stop file %s.\n", p)
				}
				if err != nil {
					return err
				}
				changed, err := bb.Resume(cmd.Context(), decider(app, by), blackboard.ControlFromCLI)
				if err != nil {
					return err
				}
				if !changed {
					fmt.Fprintln(cmd.OutOrStdout(), "Not paused; nothing to resume.")
					return nil
				}
				fmt.Fprintln(cmd.OutOrStdout(), "Resumed: waiting work is being granted.")
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&by, "by", "", "who resumes (default: $USER)")
	return cmd
}

func newCancelCmd(app *App) *cobra.Command {
	var reason, by string
	cmd := &cobra.Command{
		Use:   "cancel WORKFLOW [--reason TEXT]",
		Short: "End a workflow: its claims end and its running tools are stopped",
		Long: `Cancel a workflow (its goal's id or a unique prefix): it ends as cancelled, every
open claim of it is terminated, and tools running for it are stopped
(SIGTERM to their process group, SIGKILL after the agent's stop_grace).
Artefacts already written stay in the audit trail.`,
		Args: exactArgs(1, "give the id of the workflow to cancel (its goal's id, as `sett hoard` shows it)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			return app.withBlackboard(ctx, func(bb *blackboard.Client) error {
				wf, err := resolveWorkflow(ctx, bb, args[0])
				if err != nil {
					return err
				}
				who := decider(app, by)
				why := "cancelled"
				if who != "" {
					why += " by " + who
				}
				if strings.TrimSpace(reason) != "" {
					why += ": " + strings.TrimSpace(reason)
				}
				ended, err := bb.EndWorkflow(ctx, wf.ID, blackboard.WorkflowCancelled, why, blackboard.OperatorEpoch)
				if err != nil {
					return err
				}
				out := cmd.OutOrStdout()
				if !ended {
					cur, err := bb.GetWorkflow(ctx, wf.ID)
					if err != nil {
						return err
					}
					return fmt.Errorf("workflow %s already ended (%s): %s", blackboard.ShortID(wf.ID), cur.Status, oneLine(cur.Outcome))
				}
				fmt.Fprintf(out, "Workflow %s cancelled; its claims end and its running tools are being stopped.\n", blackboard.ShortID(wf.ID))
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "why (recorded as the workflow's outcome)")
	cmd.Flags().StringVar(&by, "by", "", "who cancels (default: $USER)")
	return cmd
}

// decider is --by, else $USER.
func decider(app *App, by string) string {
	if by = strings.TrimSpace(by); by != "" {
		return by
	}
	return app.env("USER")
}

// queueView is what `sett queue -o json` prints.
type queueView struct {
	Paused  bool                  `json:"paused"`
	Running int64                 `json:"running"`
	Claims  []queuedClaim         `json:"claims"`
	Agents  map[string]agentQueue `json:"agents"`
	// Retries are the failed attempts whose retry waits for its backoff.
	Retries []pendingRetryView `json:"pending_retries"`
	now     time.Time
}

type queuedClaim struct {
	Position   int    `json:"position"`
	ClaimID    string `json:"claim_id"`
	WorkflowID string `json:"workflow_id"`
	Status     string `json:"status"`
	Reason     string `json:"reason"`
	Priority   int    `json:"priority"`
	WaitingMs  int64  `json:"waiting_ms"`
	Summary    string `json:"summary,omitempty"`
}

type agentQueue struct {
	Held    int64                     `json:"held"`
	Waiting []blackboard.WaitingGrant `json:"waiting"`
}

func newQueueCmd(app *App) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "queue [-o table|json]",
		Short: "List the work waiting for a slot or a resume, in release order",
		Long: `List what the scheduler holds back, in the order it will be released: claims
waiting for a slot (orchestrator.max_concurrent_claims) or for a resume,
highest priority first and oldest workflow first on ties; then, per agent,
grants waiting for one of its slots (max_concurrent per live replica).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(output, "table", "json"); err != nil {
				return err
			}
			ctx := cmd.Context()
			return app.withBlackboard(ctx, func(bb *blackboard.Client) error {
				v, err := collectQueue(ctx, app, bb)
				if err != nil {
					return err
				}
				if output == "json" {
					return writeJSONIndent(cmd.OutOrStdout(), v)
				}
				return writeQueue(cmd.OutOrStdout(), styleFor(app), v)
			})
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "table", "output format: table or json")
	return cmd
}

func collectQueue(ctx context.Context, app *App, bb *blackboard.Client) (*queueView, error) {
	v := &queueView{Agents: map[string]agentQueue{}, Claims: []queuedClaim{}}
	ps, err := bb.GetPauseState(ctx)
	if err != nil {
		return nil, err
	}
	v.Paused = ps.Paused
	sc, err := bb.CountScheduler(ctx)
	if err != nil {
		return nil, err
	}
	v.Running = sc.Running
	waiting, err := bb.WaitingClaims(ctx, 0)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(waiting))
	for i, w := range waiting {
		ids[i] = w.ClaimID
	}
	claims, err := bb.GetClaims(ctx, ids)
	if err != nil {
		return nil, err
	}
	var artIDs []string
	for _, c := range claims {
		if c != nil {
			artIDs = append(artIDs, c.ArtefactID)
		}
	}
	arts, err := bb.GetArtefacts(ctx, artIDs)
	if err != nil {
		return nil, err
	}
	summaries := map[string]string{}
	for _, a := range arts {
		if a != nil {
			summaries[a.ID] = a.Type + ": " + a.Summary
		}
	}
	now := app.Now()
	for i, w := range waiting {
		c := claims[i]
		if c == nil {
			continue
		}
		q := queuedClaim{Position: len(v.Claims) + 1, ClaimID: c.ID, WorkflowID: c.WorkflowID, Status: string(c.Status),
			Reason: c.WaitingReason, Priority: w.Priority, Summary: summaries[c.ArtefactID]}
		if c.WaitingSinceMs > 0 {
			q.WaitingMs = now.UnixMilli() - c.WaitingSinceMs
		}
		v.Claims = append(v.Claims, q)
	}
	agents := agentNamesFor(ctx, app, bb)
	queues, held, err := bb.AgentQueues(ctx, agents)
	if err != nil {
		return nil, err
	}
	for _, a := range agents {
		if held[a] == 0 && len(queues[a]) == 0 {
			continue
		}
		v.Agents[a] = agentQueue{Held: held[a], Waiting: append([]blackboard.WaitingGrant{}, queues[a]...)}
	}
	active, err := bb.ActiveClaims(ctx)
	if err != nil {
		return nil, err
	}
	open, err := bb.GetClaims(ctx, active)
	if err != nil {
		return nil, err
	}
	v.now = now
	if v.Retries, err = collectPendingRetries(ctx, bb, open, configuredAttempts(app.Workspace())); err != nil {
		return nil, err
	}
	return v, nil
}

// configPathIn is the sett.yml of a workspace.
func configPathIn(workspace string) string { return filepath.Join(workspace, config.DefaultFilename) }

// agentNamesFor lists the agents of the instance: the workspace's
// sett.yml when it can be read, else the registry.
func agentNamesFor(ctx context.Context, app *App, bb *blackboard.Client) []string {
	if cfg, _, err := config.Load(configPathIn(app.Workspace())); err == nil {
		return cfg.AgentNames()
	}
	reg, err := bb.Agents(ctx)
	if err != nil {
		return nil
	}
	names := make([]string, 0, len(reg))
	for n := range reg {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func writeQueue(w io.Writer, style outputStyle, v *queueView) error {
	if v.Paused {
		fmt.Fprintln(w, style.paint(colourYellow, "PAUSED")+": nothing is granted until `sett resume`.")
	}
	fmt.Fprintf(w, "%d claims hold slots.\n", v.Running)
	if len(v.Claims) == 0 {
		fmt.Fprintln(w, "No claim waits.")
	} else {
		t := newTable(w, style, "#", "CLAIM", "WORKFLOW", "PRIORITY", "STATUS", "WAITS FOR", "WAITING", "TARGET")
		for _, c := range v.Claims {
			t.row(cell{text: fmt.Sprint(c.Position)}, cell{text: style.id(c.ClaimID), colour: colourCyan},
				cell{text: style.id(c.WorkflowID)}, cell{text: fmt.Sprint(c.Priority)}, cell{text: c.Status},
				cell{text: c.Reason}, cell{text: humanDuration(time.Duration(c.WaitingMs) * time.Millisecond)},
				cell{text: textcut.Runes(c.Summary, 50)})
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	if len(v.Retries) > 0 {
		fmt.Fprintf(w, "\n%d retry(ies) wait for their backoff:\n", len(v.Retries))
		for _, r := range v.Retries {
			fmt.Fprintf(w, "  %s\n", termsafe.Line(r.text(v.now)))
		}
	}
	names := make([]string, 0, len(v.Agents))
	for n := range v.Agents {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		q := v.Agents[n]
		fmt.Fprintf(w, "\nAgent %s: %d grant(s) held, %d waiting for a slot\n", n, q.Held, len(q.Waiting))
		if len(q.Waiting) == 0 {
			continue
		}
		t := newTable(w, style, "  #", "CLAIM", "WORKFLOW", "PRIORITY", "GRANT")
		for i, g := range q.Waiting {
			t.row(cell{text: fmt.Sprintf("  %d", i+1)}, cell{text: style.id(g.ClaimID), colour: colourCyan},
				cell{text: style.id(g.WorkflowID)}, cell{text: fmt.Sprint(g.Priority)}, cell{text: g.Grant})
		}
		if err := t.flush(); err != nil {
			return err
		}
	}
	return nil
}
