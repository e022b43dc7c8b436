package cli

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/instance"
)

// Test seams of `sett watch`. They let a test act at exact points of the
// replay → follow switch instead of racing it; production never sets them.
// Tests that set them must not run in parallel.
var (
	// watchHookAfterPage runs after each replay page.
	watchHookAfterPage func()
	// watchHookAfterReplay runs once the replay is done, just before the
	// live follow starts.
	watchHookAfterReplay func()
	// watchReplayPage is the replay page size.
	watchReplayPage int64 = followPage
)

// watchOptions are the flags of `sett watch`.
type watchOptions struct {
	since, until     string
	typ, agent       string
	workflow, event  string
	format           string
	exitOnCompletion bool
	relative         bool
}

func newWatchCmd(app *App) *cobra.Command {
	var o watchOptions
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Replay the event log, then follow it live",
		Long: `Replay the instance's event log (the audit stream), then follow new events live.

Without --since the whole log is replayed (with --workflow: from the
workflow's start). --until replays up to a time and stops. Filters combine:
--type matches the artefact type of artefact events, --event the event name
(both globs: 'claim_*', 'Plan*'), --agent the agent an event concerns,
--workflow one workflow (a unique id prefix is enough).

If Redis drops, watch reconnects with backoff and resumes after the last
event it showed.`,
		Example: `  sett watch
  sett watch --since 10m --event 'claim_*'
  sett watch --workflow 3f9c2a1e --exit-on-completion
  sett watch --since 2024-05-01T09:00:00Z --until 2024-05-01T10:00:00Z -o jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runWatch(cmd, app, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.since, "since", "", "start at this time: a duration ago (10m, 2h, 1d) or a time (RFC 3339, 2024-05-01)")
	f.StringVar(&o.until, "until", "", "stop after the last event up to this time (no live follow)")
	f.StringVar(&o.typ, "type", "", "only artefact events whose artefact type matches this glob")
	f.StringVar(&o.agent, "agent", "", "only events about this agent")
	f.StringVar(&o.workflow, "workflow", "", "only events of this workflow (id or unique prefix)")
	f.StringVar(&o.event, "event", "", "only events whose name matches this glob")
	f.StringVarP(&o.format, "output", "o", "text", "output format: text, or json (also jsonl: one JSON event a line)")
	f.BoolVar(&o.exitOnCompletion, "exit-on-completion", false, "exit when the workflow completes (without --workflow: when the next workflow completes)")
	f.BoolVar(&o.relative, "relative", false, "show times relative to now (\"3s ago\") instead of clock times")
	return cmd
}

// watchFilter selects the events `sett watch` shows.
type watchFilter struct {
	workflow, event, typ, agent string
}

func (w watchFilter) match(ev blackboard.Event) bool {
	switch {
	case w.workflow != "" && ev.WorkflowID != w.workflow:
		return false
	case w.event != "" && !globMatch(w.event, string(ev.Type)):
		return false
	case w.typ != "" && (ev.Field("type") == "" || !globMatch(w.typ, ev.Field("type"))):
		return false
	case w.agent != "" && ev.Agent != w.agent && !slices.Contains(strings.Split(ev.Field("agents"), ","), w.agent):
		return false
	}
	return true
}

func runWatch(cmd *cobra.Command, app *App, o watchOptions) error {
	if err := checkFormat(o.format, "text", "json", "jsonl"); err != nil {
		return err
	}
	if o.format == "json" {
		// A stream has no end to close a document with: one event a line.
		o.format = "jsonl"
	}
	if err := checkGlob("type", o.typ); err != nil {
		return err
	}
	if err := checkGlob("event", o.event); err != nil {
		return err
	}
	ctx := cmd.Context()
	return app.withBlackboardAs(ctx, instance.AccessReader, func(bb *blackboard.Client) error {
		// Bounds given as durations count back from the Redis clock: event
		// ids and timestamps come from it, not from this machine's clock.
		nowMs, err := bb.Now(ctx)
		if err != nil {
			return err
		}
		now := msTime(nowMs)
		sinceMs, err := parseTimeBound("since", o.since, now)
		if err != nil {
			return err
		}
		untilMs, err := parseTimeBound("until", o.until, now)
		if err != nil {
			return err
		}
		if untilMs > 0 && sinceMs > untilMs {
			return usageError("--since (%s) is after --until (%s)", rfc3339ms(msTime(sinceMs)), rfc3339ms(msTime(untilMs)))
		}
		filter := watchFilter{event: o.event, typ: o.typ, agent: o.agent}
		var wf *blackboard.Workflow
		if o.workflow != "" {
			if wf, err = resolveWorkflow(ctx, bb, o.workflow); err != nil {
				return err
			}
			filter.workflow = wf.ID
			if o.since == "" {
				// Everything of a workflow comes after its start; the margin
				// covers the stream id and the ts field being read from the
				// server clock at slightly different moments.
				sinceMs = wf.StartedAtMs - 1000
			}
		}

		out := newEventRenderer(cmd.OutOrStdout(), o.format, styleFor(app), o.relative)
		f := newEventFollower(bb, cmd.ErrOrStderr(), streamIDBefore(sinceMs))
		f.page = watchReplayPage
		f.afterPageFunc = watchHookAfterPage

		following := false
		completed := false
		handle := func(ev blackboard.Event) (bool, error) {
			if untilMs > 0 && streamIDMs(ev.StreamID) > untilMs {
				return true, nil
			}
			if filter.match(ev) {
				if err := out.render(ev); err != nil {
					return true, err
				}
			}
			if o.exitOnCompletion && ev.Type == blackboard.EventWorkflowCompleted &&
				(ev.WorkflowID == filter.workflow || filter.workflow == "" && following) {
				completed = true
				return true, nil
			}
			return false, nil
		}

		end := "+"
		if untilMs > 0 {
			// An incomplete id as the end of XRANGE means "<ms>-<max seq>":
			// every event of that millisecond is included.
			end = strconv.FormatInt(untilMs, 10)
		}
		stopped, err := f.replay(ctx, end, handle)
		if err != nil || stopped {
			return quietCancel(ctx, err)
		}
		if untilMs > 0 && untilMs <= nowMs {
			return nil
		}
		if o.exitOnCompletion && wf != nil && !completed {
			// The workflow may have ended before --since: nothing more will
			// come, so waiting for its completion would never end.
			if cur, err := bb.GetWorkflow(ctx, filter.workflow); err == nil && cur.Status.Final() {
				// It may have ended just after the replay: show what came in
				// between (its completion among it) before leaving.
				_, err := f.replay(ctx, "+", handle)
				return quietCancel(ctx, err)
			}
		}
		if watchHookAfterReplay != nil {
			watchHookAfterReplay()
		}
		following = true
		fctx := ctx
		if untilMs > 0 {
			var cancel context.CancelFunc
			fctx, cancel = context.WithTimeout(ctx, time.Duration(untilMs-nowMs)*time.Millisecond)
			defer cancel()
		}
		err = f.follow(fctx, handle)
		if untilMs > 0 && errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil // --until reached while following
		}
		return quietCancel(ctx, err)
	})
}

// quietCancel turns the end of a follow that the user asked for (Ctrl-C,
// SIGTERM) into a clean exit.
func quietCancel(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		return nil
	}
	return err
}
