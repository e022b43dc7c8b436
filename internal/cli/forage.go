package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/priority"
	"github.com/settdev/sett/internal/termsafe"
	"github.com/settdev/sett/internal/textcut"
)

// forageOptions are the flags of `sett forage`.
type forageOptions struct {
	goal       string
	goalFile   string
	priority   string
	deadline   string
	from       string
	wait       bool
	watch      bool
	timeout    time.Duration
	format     string
	allowDirty bool
}

func newForageCmd(app *App) *cobra.Command {
	var o forageOptions
	cmd := &cobra.Command{
		Use:   "forage",
		Short: "Post a goal and start a workflow",
		Long: `Post a goal: a GoalDefined artefact by "user" that starts a new workflow. The goal
id is also the workflow id.

--goal-file reads Markdown: an optional YAML frontmatter between two "---"
lines (priority, deadline, from, subject, or any other key: value) becomes the
goal's metadata, and the body is the goal text.

The goal's priority score orders the work when grants must wait:
priority high 10, medium 5, low 0 or a number; a deadline closer than 2 hours
+20, 1 day +10, 1 week +5; a sender in orchestrator.priority.important_senders
+10 (weights from sett.yml). --priority, --deadline and --from override the
file's keys; the score is computed once, when the goal is posted.

--wait follows the workflow to its end, showing a progress line, and prints
the outcome and the final artefacts (those no other artefact builds on).
--watch streams the workflow's events instead (as 'sett watch' does). Both
exit with the outcome: 0 completed, 1 failed, 2 cancelled or --timeout.

In a Git workspace, forage refuses a tree with uncommitted changes (agents
work on commits); --allow-dirty posts anyway.`,
		Example: `  sett forage --goal "Add a /health endpoint" --wait
  sett forage --goal-file tasks/health.md --priority 5 --watch
  sett forage --goal "Fix the login bug" --priority high --deadline 2026-01-29T09:00:00Z --from ceo@company.com
  sett forage --goal "Write release notes" -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runForage(cmd, app, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.goal, "goal", "", "the goal, as text")
	f.StringVar(&o.goalFile, "goal-file", "", "read the goal from a Markdown file with optional YAML frontmatter")
	f.StringVar(&o.priority, "priority", "", "high, medium, low or a whole number (overrides the file's priority)")
	f.StringVar(&o.deadline, "deadline", "", "when the work is due: RFC 3339 (2026-01-29T09:00:00Z) or a date (overrides the file's deadline)")
	f.StringVar(&o.from, "from", "", "who asks: an address or \"Name <address>\" (overrides the file's from)")
	f.BoolVar(&o.wait, "wait", false, "wait for the workflow to end and print its outcome (exit 0 completed, 1 failed, 2 cancelled/timeout)")
	f.BoolVar(&o.watch, "watch", false, "stream the workflow's events until it ends")
	f.DurationVar(&o.timeout, "timeout", 0, "with --wait/--watch: stop waiting after this long (exit 2); 0 waits for ever")
	f.StringVarP(&o.format, "output", "o", "text", "output format: text or json")
	f.BoolVar(&o.allowDirty, "allow-dirty", false, "post even if the Git workspace has uncommitted changes")
	return cmd
}

// readGoal returns the goal the flags give, checked: exactly one source,
// a valid frontmatter, a priority that fits, some text.
func readGoal(cmd *cobra.Command, app *App, o forageOptions) (goalDoc, error) {
	var doc goalDoc
	switch {
	case o.goal != "" && o.goalFile != "":
		return doc, usageError("give the goal with --goal or with --goal-file, not both")
	case o.goal != "":
		doc.Text = strings.TrimSpace(o.goal)
	case o.goalFile != "":
		p := o.goalFile
		if !filepath.IsAbs(p) && app.Dir != "" {
			p = filepath.Join(app.Dir, p)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return doc, usageError("cannot read the goal file: %v", err)
		}
		if doc, err = parseGoalFile(o.goalFile, data); err != nil {
			return doc, usageError("%v: nothing was posted; fix the file and try again", err)
		}
	default:
		return doc, usageError("no goal: give it with --goal TEXT or --goal-file PATH")
	}
	if doc.Metadata == nil {
		doc.Metadata = map[string]string{}
	}
	for _, fl := range []struct{ flag, key, val string }{
		{"priority", metaPriority, o.priority}, {"deadline", metaDeadline, o.deadline}, {"from", metaFrom, o.from},
	} {
		if cmd.Flags().Changed(fl.flag) {
			doc.Metadata[fl.key] = strings.TrimSpace(fl.val)
		}
	}
	if _, err := priority.ParsePriority(doc.Metadata[metaPriority], priority.DefaultWeights()); err != nil {
		return doc, usageError("--priority: %v", err)
	}
	if d := doc.Metadata[metaDeadline]; d != "" {
		if _, err := priority.ParseDeadline(d); err != nil {
			return doc, usageError("--deadline: %v", err)
		}
	}
	if doc.Text == "" {
		return doc, usageError("the goal is empty: say what the agents should achieve")
	}
	return doc, nil
}

func runForage(cmd *cobra.Command, app *App, o forageOptions) error {
	if err := checkFormat(o.format, "text", "json"); err != nil {
		return err
	}
	if o.timeout != 0 && !o.wait && !o.watch {
		return usageError("--timeout bounds a wait: use it with --wait or --watch")
	}
	if o.timeout < 0 {
		return usageError("--timeout %s is negative: give how long to wait, e.g. 10m", o.timeout)
	}
	doc, err := readGoal(cmd, app, o)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if !o.allowDirty {
		ws := app.Workspace()
		if changes, checked := gitChanges(ctx, ws); checked && len(changes) > 0 {
			return dirtyWorkspaceError(ws, changes)
		}
	}
	return app.withBlackboard(ctx, func(bb *blackboard.Client) error {

		following := o.wait || o.watch
		after := ""
		if following {
			// Read from the stream's end as it is before the goal exists: every
			// event of the new workflow comes after this id.
			if after, err = bb.LastEventID(ctx); err != nil {
				return err
			}
			if li, err := bb.Leader(ctx); err == nil && li.Holder == "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "sett: no orchestrator leads instance %s yet: the goal waits until one runs (`sett up`, `sett status`)\n", bb.Instance())
			}
		}

		score, err := scoreGoal(app, doc.Metadata)
		if err != nil {
			return err
		}
		g := blackboard.NewGoal(doc.Text, score.Total, "user", doc.Metadata)
		if s := strings.TrimSpace(doc.Metadata["subject"]); s != "" {
			g.Summary = textcut.Runes(oneLine(s), 200)
		}
		if err := bb.CreateArtefact(ctx, g, blackboard.WriteAuth{}); err != nil {
			if errors.Is(err, blackboard.ErrInvalid) {
				return usageError("the goal was refused: %v", err)
			}
			return fmt.Errorf("post the goal: %w", err)
		}

		out := cmd.OutOrStdout()
		res := forageResult{GoalID: g.ID, WorkflowID: g.WorkflowID, Priority: score.Total, Score: score.Total,
			PriorityInput: doc.Metadata[metaPriority], Deadline: doc.Metadata[metaDeadline], From: doc.Metadata[metaFrom]}
		if o.format == "text" {
			fmt.Fprintf(out, "goal      %s\nworkflow  %s\nscore     %s\n", g.ID, g.WorkflowID, explainScore(score))
			if !following {
				fmt.Fprintf(out, "Follow it with `sett watch --workflow %s` or inspect it with `sett hoard --workflow %s -o tree`.\n", blackboard.ShortID(g.ID), blackboard.ShortID(g.ID))
			}
		} else if !following {
			return writeJSON(out, res)
		}
		if !following {
			return nil
		}
		return waitForWorkflow(ctx, cmd, app, bb, after, o, res)
	})
}

// forageResult is the JSON output of forage.
type forageResult struct {
	GoalID         string          `json:"goal_id"`
	WorkflowID     string          `json:"workflow_id"`
	Priority       int             `json:"priority"`
	Score          int             `json:"score"`
	PriorityInput  string          `json:"priority_input,omitempty"`
	Deadline       string          `json:"deadline,omitempty"`
	From           string          `json:"from,omitempty"`
	Status         string          `json:"status,omitempty"`
	Reason         string          `json:"reason,omitempty"`
	TimedOut       bool            `json:"timed_out,omitempty"`
	FinalArtefacts []finalArtefact `json:"final_artefacts,omitempty"`
}

// tickEvery calls fn every d in its own goroutine until the returned stop
// is called; stop returns once fn no longer runs.
func tickEvery(d time.Duration, fn func()) (stop func()) {
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				fn()
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// finalArtefact is one leaf of a finished workflow.
type finalArtefact struct {
	ID             string `json:"id"`
	ShortID        string `json:"short_id"`
	Type           string `json:"type"`
	StructuralType string `json:"structural_type"`
	Summary        string `json:"summary"`
}

// waitForWorkflow follows the workflow's events from the stream id after
// until its workflow_completed event, blocking on the stream (never polling
// hashes), and reports the outcome with the exit code of `forage --wait`.
func waitForWorkflow(ctx context.Context, cmd *cobra.Command, app *App, bb *blackboard.Client, after string, o forageOptions, res forageResult) error {
	out := cmd.OutOrStdout()
	style := styleFor(app)
	wf := res.WorkflowID
	progress := newWorkflowProgress(wf)
	var events eventRenderer
	var line *progressLine
	switch {
	case o.watch:
		format := "text"
		if o.format == "json" {
			format = "jsonl"
		}
		events = newEventRenderer(out, format, style, false)
	case o.format == "text":
		line = &progressLine{w: out, tty: app.IsTTY, style: style, start: style.Now()}
		line.update(progress)
	}

	wctx, cancel := ctx, context.CancelFunc(func() {})
	if o.timeout > 0 {
		wctx, cancel = context.WithTimeout(ctx, o.timeout)
	}
	defer cancel()
	started := style.Now()
	f := newEventFollower(bb, cmd.ErrOrStderr(), after)
	var mu sync.Mutex // the progress, between the follower and the clock
	stopClock := func() {}
	if line != nil && line.tty {
		// The line's clock and the retries' countdowns move without events.
		stopClock = tickEvery(time.Second, func() {
			mu.Lock()
			defer mu.Unlock()
			line.update(progress)
		})
	}
	err := f.follow(wctx, func(ev blackboard.Event) (bool, error) {
		if ev.WorkflowID != wf {
			return false, nil
		}
		var failure *blackboard.Artefact
		if ev.Type == blackboard.EventRetryScheduled {
			// The line shows why the attempt failed: the Failure's summary.
			// Only for the display: a lookup that fails shows the retry alone.
			failure, _ = bb.GetArtefact(wctx, ev.Field("failure_id"))
		}
		mu.Lock()
		defer mu.Unlock()
		progress.apply(ev, style.Now())
		if failure != nil {
			progress.noteFailure(failure.ID, failure.Summary)
		}
		if events != nil {
			if err := events.render(ev); err != nil {
				return true, err
			}
		}
		if line != nil {
			line.update(progress)
		}
		return progress.ended, nil
	})
	stopClock()
	if line != nil {
		line.clear()
	}
	if err != nil {
		if wctx.Err() == nil {
			return err
		}
		// Interrupted, or --timeout: the workflow goes on without us.
		res.Status, res.TimedOut = string(blackboard.WorkflowRunning), true
		why := "interrupted"
		if ctx.Err() == nil {
			why = "still running after " + o.timeout.String()
		}
		if o.format == "json" {
			_ = writeJSON(out, res)
		} else {
			fmt.Fprintf(out, "Workflow %s is %s: stopped waiting. It goes on; follow it with `sett watch --workflow %s`.\n", blackboard.ShortID(wf), why, blackboard.ShortID(wf))
		}
		return &ExitError{Code: ExitPending, Err: fmt.Errorf("stopped waiting for workflow %s (%s)", blackboard.ShortID(wf), why)}
	}

	res.Status, res.Reason = string(progress.status), progress.reason
	arts, err := loadWorkflowArtefacts(ctx, bb, wf)
	if err != nil {
		return err
	}
	for _, a := range blackboard.FinalArtefacts(arts) {
		res.FinalArtefacts = append(res.FinalArtefacts, finalArtefact{
			ID: a.ID, ShortID: blackboard.ShortID(a.ID), Type: a.Type, StructuralType: string(a.StructuralType), Summary: a.Summary,
		})
	}
	if o.format == "json" {
		if err := writeJSON(out, res); err != nil {
			return err
		}
	} else {
		printOutcome(out, style, res, style.Now().Sub(started))
	}
	reason := res.Reason
	if reason == "" {
		reason = "no reason recorded"
	}
	switch progress.status {
	case blackboard.WorkflowCompleted:
		return nil
	case blackboard.WorkflowFailed:
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("workflow %s failed: %s", blackboard.ShortID(wf), reason)}
	case blackboard.WorkflowRejected:
		return &ExitError{Code: ExitRejected, Err: fmt.Errorf("workflow %s was rejected: %s", blackboard.ShortID(wf), reason)}
	}
	return &ExitError{Code: ExitPending, Err: fmt.Errorf("workflow %s ended %s: %s", blackboard.ShortID(wf), progress.status, reason)}
}

// printOutcome prints how the workflow ended and its final artefacts.
func printOutcome(w io.Writer, style outputStyle, res forageResult, took time.Duration) {
	c := colourYellow
	switch blackboard.WorkflowStatus(res.Status) {
	case blackboard.WorkflowCompleted:
		c = colourGreen
	case blackboard.WorkflowFailed, blackboard.WorkflowRejected:
		c = colourRed
	}
	fmt.Fprintf(w, "Workflow %s %s: %s (waited %s)\n", blackboard.ShortID(res.WorkflowID), style.paint(c, res.Status), termsafe.String(res.Reason), humanDuration(took))
	if len(res.FinalArtefacts) == 0 {
		fmt.Fprintln(w, "No final artefacts.")
		return
	}
	fmt.Fprintln(w, "Final artefacts:")
	t := newTable(w, style, "  TYPE", "ID", "STRUCT", "SUMMARY")
	for _, a := range res.FinalArtefacts {
		sc := colourNone
		if a.StructuralType == string(blackboard.StructuralFailure) {
			sc = colourRed
		}
		t.row(cell{text: "  " + a.Type}, cell{text: a.ShortID}, cell{text: a.StructuralType, colour: sc}, cell{text: textcut.Runes(a.Summary, 80)})
	}
	_ = t.flush()
}

// sortOldestFirst orders artefacts by creation time, then id.
func sortOldestFirst(arts []*blackboard.Artefact) {
	sort.SliceStable(arts, func(i, j int) bool {
		if arts[i].CreatedAtMs != arts[j].CreatedAtMs {
			return arts[i].CreatedAtMs < arts[j].CreatedAtMs
		}
		return arts[i].ID < arts[j].ID
	})
}

// writeJSON prints v as one line of JSON.
func writeJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
