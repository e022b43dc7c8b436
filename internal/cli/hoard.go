package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/textcut"
)

// hoardMaxPages bounds a filtered listing: filters the index cannot apply
// (type, agent) are applied to pages of artefacts, and past this many
// pages hoard stops and says where to continue.
const hoardMaxPages = 20

// hoardPageSize is the index page size of a filtered listing; zero lets
// ScanArtefacts choose. A test seam: tests that set it must not run in
// parallel.
var hoardPageSize int64

// hoardOptions are the flags of `sett hoard`.
type hoardOptions struct {
	typ, agent, workflow string
	since, until         string
	limit                int
	cursor               string
	format               string
}

func newHoardCmd(app *App) *cobra.Command {
	var o hoardOptions
	cmd := &cobra.Command{
		Use:   "hoard [ID]",
		Short: "Audit the artefacts: list them, show one, or draw a workflow as a tree",
		Long: `Audit what is on the blackboard.

Without ID, list artefacts newest first, a page at a time (--limit, then
--cursor from the hint under the table). --type (a glob) and --agent filter
the listing; --workflow, --since and --until narrow it through the indexes.

With an ID (full, or a unique prefix of at least 4 characters), show that
artefact: every field, its payload in full, every version of its thread, and
its claim with status and termination or completion reason.

With -o tree (and --workflow ID, or an artefact ID), draw the workflow's
provenance: the goal at the root, each artefact under the artefact it was
derived from, reworked threads as v1 → v2, claims with their outcome,
reviews marked approve/reject, failures highlighted.`,
		Example: `  sett hoard
  sett hoard --type 'Plan*' --agent planner --limit 50
  sett hoard 3f9c2a1e
  sett hoard --workflow 3f9c2a1e -o tree
  sett hoard --since 1h -o jsonl`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHoard(cmd, app, o, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.typ, "type", "", "only artefacts whose type matches this glob")
	f.StringVar(&o.agent, "agent", "", "only artefacts produced by this agent (or role: user, orchestrator ...)")
	f.StringVar(&o.workflow, "workflow", "", "only this workflow's artefacts (id or unique prefix)")
	f.StringVar(&o.since, "since", "", "only artefacts created since: a duration ago (1h, 2d) or a time (RFC 3339, 2024-05-01)")
	f.StringVar(&o.until, "until", "", "only artefacts created until this duration ago or time")
	f.IntVar(&o.limit, "limit", 20, "rows per page (1-1000)")
	f.StringVar(&o.cursor, "cursor", "", "continue a listing where the previous page ended")
	f.StringVarP(&o.format, "output", "o", "table", "output format: table, json (one document), jsonl (one artefact a line) or tree")
	return cmd
}

func runHoard(cmd *cobra.Command, app *App, o hoardOptions, args []string) error {
	if err := checkFormat(o.format, "table", "json", "jsonl", "tree"); err != nil {
		return err
	}
	if err := checkGlob("type", o.typ); err != nil {
		return err
	}
	if o.limit < 1 || o.limit > 1000 {
		return usageError("--limit %d: give a number from 1 to 1000", o.limit)
	}
	if o.format == "tree" && len(args) == 0 && o.workflow == "" {
		return usageError("-o tree draws one workflow: pass --workflow ID (or an artefact ID)")
	}
	ctx := cmd.Context()
	return app.withBlackboardAs(ctx, instance.AccessReader, func(bb *blackboard.Client) error {
		out := cmd.OutOrStdout()
		style := styleFor(app)

		if len(args) == 1 {
			err := showOne(ctx, out, style, bb, args[0], o.format)
			if err != nil && ExitCode(err) != ExitUsage {
				// Not an artefact: perhaps a claim id (status and watch show them).
				if shown, cerr := showClaimInstead(ctx, out, style, bb, args[0], o.format); shown {
					return cerr
				}
			}
			return err
		}

		wf := ""
		if o.workflow != "" {
			w, err := resolveWorkflow(ctx, bb, o.workflow)
			if err != nil {
				return err
			}
			wf = w.ID
		}
		if o.format == "tree" {
			return showTree(ctx, out, style, bb, wf, "")
		}
		return listArtefacts(ctx, cmd, style, bb, o, wf)
	})
}

// showOne shows the artefact ref names, or its workflow's tree.
func showOne(ctx context.Context, out io.Writer, style outputStyle, bb *blackboard.Client, ref, format string) error {
	id, err := resolveArtefactID(ctx, bb, "artefact", ref)
	if err != nil {
		return err
	}
	if format == "tree" {
		a, err := bb.GetArtefact(ctx, id)
		if err != nil {
			return notFoundHint(err, id)
		}
		return showTree(ctx, out, style, bb, a.WorkflowID, id)
	}
	return showArtefact(ctx, out, style, bb, id, format)
}

// notFoundHint rewrites ErrNotFound for people.
func notFoundHint(err error, id string) error {
	if errors.Is(err, blackboard.ErrNotFound) {
		return fmt.Errorf("artefact %s does not exist (any more): list artefacts with `sett hoard`", id)
	}
	return err
}

// hoardKeep returns the client-side filter of a listing, nil when there
// is none.
func hoardKeep(o hoardOptions) func(*blackboard.Artefact) bool {
	if o.typ == "" && o.agent == "" {
		return nil
	}
	return func(a *blackboard.Artefact) bool {
		if !globMatch(o.typ, a.Type) {
			return false
		}
		return o.agent == "" || a.ProducedByAgent == o.agent || a.ProducedByRole == o.agent
	}
}

// listArtefacts prints one page of the listing and the hint to the next.
func listArtefacts(ctx context.Context, cmd *cobra.Command, style outputStyle, bb *blackboard.Client, o hoardOptions, wf string) error {
	nowMs, err := bb.Now(ctx)
	if err != nil {
		return err
	}
	sinceMs, err := parseTimeBound("since", o.since, msTime(nowMs))
	if err != nil {
		return err
	}
	untilMs, err := parseTimeBound("until", o.until, msTime(nowMs))
	if err != nil {
		return err
	}
	scan, err := bb.ScanArtefacts(ctx, blackboard.ScanQuery{
		PageQuery: blackboard.PageQuery{WorkflowID: wf, SinceMs: sinceMs, UntilMs: untilMs, Limit: int64(o.limit), Cursor: o.cursor},
		Keep:      hoardKeep(o),
		PageSize:  hoardPageSize,
		MaxPages:  hoardMaxPages,
	})
	if errors.Is(err, blackboard.ErrInvalid) && o.cursor != "" {
		return usageError("--cursor %q is not a cursor from a previous `sett hoard` page", o.cursor)
	}
	if err != nil {
		return err
	}
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if o.format == "json" {
		page := artefactPage{Artefacts: scan.Artefacts, Next: scan.Next, Truncated: scan.Truncated}
		if page.Artefacts == nil {
			page.Artefacts = []*blackboard.Artefact{}
		}
		if scan.Next != "" {
			page.NextCommand = nextPageCommand(cmd, o, scan.Next)
		}
		return writeJSONIndent(out, page)
	}
	if o.format == "jsonl" {
		for _, a := range scan.Artefacts {
			if err := writeJSON(out, a); err != nil {
				return err
			}
		}
		// stdout stays pure JSON lines; the hint goes to stderr.
		printListHint(errOut, cmd, o, scan, "sett: ")
		return nil
	}
	if len(scan.Artefacts) == 0 && !scan.Truncated {
		if o.cursor != "" {
			fmt.Fprintln(out, "No more artefacts.")
		} else if hoardKeep(o) != nil || wf != "" || o.since != "" || o.until != "" {
			fmt.Fprintln(out, "No artefacts match.")
		} else {
			fmt.Fprintln(out, "No artefacts yet: post a goal with `sett forage --goal TEXT`.")
		}
		return nil
	}
	ids := make([]string, len(scan.Artefacts))
	for i, a := range scan.Artefacts {
		ids[i] = a.ID
	}
	// Show each id by a prefix that resolves uniquely: with many
	// artefacts, 8 characters are sometimes shared.
	shorts, err := bb.ShortIDs(ctx, ids, 8)
	if err != nil {
		shorts = nil
	}
	renderArtefactTable(out, style, scan.Artefacts, shorts)
	printListHint(out, cmd, o, scan, "")
	return nil
}

// artefactPage is one page of `sett hoard -o json`: the artefacts with
// their full ids, and the cursor of the next page ("" on the last).
type artefactPage struct {
	Artefacts   []*blackboard.Artefact `json:"artefacts"`
	Next        string                 `json:"next_cursor,omitempty"`
	NextCommand string                 `json:"next_command,omitempty"`
	// Truncated is true when a filtered scan stopped at its bound before
	// filling the page.
	Truncated bool `json:"truncated,omitempty"`
}

// renderArtefactTable prints the listing columns; shorts maps ids to the
// short ids to show (8 characters for ids it lacks).
func renderArtefactTable(w io.Writer, style outputStyle, arts []*blackboard.Artefact, shorts map[string]string) {
	now := style.Now()
	head := "SHORT-ID"
	if style.full {
		head = "ID"
	}
	t := newTable(w, style, head, "AGE", "TYPE", "VERSION", "STRUCT", "PRODUCER", "WORKFLOW", "SUMMARY")
	for _, a := range arts {
		short := shorts[a.ID]
		if short == "" || style.full {
			short = style.id(a.ID)
		}
		t.row(
			cell{text: short, colour: colourCyan},
			cell{text: age(now, msTime(a.CreatedAtMs))},
			cell{text: a.Type},
			cell{text: "v" + strconv.Itoa(a.Version)},
			cell{text: string(a.StructuralType), colour: structColour(a.StructuralType)},
			cell{text: producer(a)},
			cell{text: style.id(a.WorkflowID)},
			cell{text: textcut.Runes(oneLine(a.Summary), 60)},
		)
	}
	_ = t.flush()
}

// structColour highlights failures and reviews.
func structColour(s blackboard.StructuralType) colour {
	switch s {
	case blackboard.StructuralFailure:
		return colourRed
	case blackboard.StructuralReview:
		return colourYellow
	case blackboard.StructuralTerminal:
		return colourMagenta
	}
	return colourNone
}

// producer names who made an artefact: the agent, else the role.
func producer(a *blackboard.Artefact) string {
	if a.ProducedByAgent != "" {
		return a.ProducedByAgent
	}
	return a.ProducedByRole
}

// printListHint says how to get the next page, or that a filtered scan
// stopped at its bound.
func printListHint(w io.Writer, cmd *cobra.Command, o hoardOptions, scan blackboard.ArtefactScan, prefix string) {
	if scan.Next == "" {
		return
	}
	next := nextPageCommand(cmd, o, scan.Next)
	if scan.Truncated {
		fmt.Fprintf(w, "%sScanned %d artefacts (%d pages) and found %d matching; the search stopped there. Continue it with:\n  %s\n",
			prefix, scan.Examined, scan.Pages, len(scan.Artefacts), next)
		return
	}
	fmt.Fprintf(w, "%sMore artefacts: %s\n", prefix, next)
}

// nextPageCommand is the command line that shows the next page: the same
// filters, and the cursor.
func nextPageCommand(cmd *cobra.Command, o hoardOptions, cursor string) string {
	parts := []string{"sett hoard"}
	for _, name := range []string{"type", "agent", "workflow", "since", "until", "limit", "output"} {
		fl := cmd.Flags().Lookup(name)
		if fl == nil || !fl.Changed {
			continue
		}
		flag := "--" + name
		if name == "output" {
			flag = "-o"
		}
		parts = append(parts, flag+" "+shellQuote(fl.Value.String()))
	}
	if in := cmd.InheritedFlags().Lookup("name"); in != nil && in.Changed {
		parts = append(parts, "--name "+shellQuote(in.Value.String()))
	}
	parts = append(parts, "--cursor "+cursor)
	return strings.Join(parts, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~!") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
