package chaos

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is what a campaign observed and found.
type Report struct {
	Seed      int64
	Workflows int
	Faults    int
	Duration  time.Duration

	Completed int
	// Failed counts workflows that ended failed, rejected or cancelled
	// with a reason; FailedNoReason those without one; Reasons counts the
	// reasons.
	Failed         int
	FailedNoReason int
	Reasons        map[string]int
	// Stuck counts workflows still running after the drain; Missing
	// those posted but never stored.
	Stuck   int
	Missing int
	// CompletedWithoutWork counts completed workflows without the final
	// artefact of the pipeline.
	CompletedWithoutWork int
	// EndedWithConsumers counts, in completed workflows, artefacts whose
	// type has configured consumers but whose claim ended without work
	// (a "dead end"): work reported done that was never done.
	EndedWithConsumers int
	// DuplicateVersions counts threads holding one version twice.
	DuplicateVersions int
	// DoubleRuns counts grants (claim, agent) whose tool ran twice at
	// the same time.
	DoubleRuns int
	// Unacknowledged counts entries left in the orchestrator queue and
	// the agents' inboxes and grants, pending or never read.
	Unacknowledged int64
	// UnacknowledgedBy breaks Unacknowledged down by stream.
	UnacknowledgedBy map[string]int64
	// KeysLeft counts workflow keys (workflow, artefact, thread, claim,
	// index:workflow) left after a janitor pass that should delete every
	// finished workflow; IndexLeft the members left in the global
	// indexes.
	KeysLeft  int
	IndexLeft int64
	// Injected counts faults per kind; Recovery has, per kind, the time
	// from the heal to the next artefact written.
	Injected map[FaultKind]int
	Recovery map[FaultKind][]time.Duration
	// UnexpectedExits counts daemon exits the campaign did not cause.
	UnexpectedExits int
}

// OK reports whether every invariant held.
func (r Report) OK() bool {
	return r.Stuck == 0 && r.Missing == 0 && r.FailedNoReason == 0 && r.CompletedWithoutWork == 0 && r.EndedWithConsumers == 0 &&
		r.DuplicateVersions == 0 && r.DoubleRuns == 0 && r.Unacknowledged == 0 && r.KeysLeft == 0 &&
		r.IndexLeft == 0 && r.UnexpectedExits == 0
}

// WriteTable prints the report as one table.
func (r Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "CHAOS CAMPAIGN\tseed %d, %d workflows, %d faults, %s\n", r.Seed, r.Workflows, r.Faults, r.Duration.Round(time.Second))
	row := func(name string, v any, want string) {
		fmt.Fprintf(tw, "%s\t%v\t%s\n", name, v, want)
	}
	row("workflows posted", r.Workflows, "")
	row("  completed", r.Completed, "")
	row("  failed with a reason", r.Failed, "")
	reasons := make([]string, 0, len(r.Reasons))
	for k := range r.Reasons {
		reasons = append(reasons, k)
	}
	slices.Sort(reasons)
	for _, k := range reasons {
		row("    "+oneLine(k), r.Reasons[k], "")
	}
	row("  failed without a reason", r.FailedNoReason, "want 0")
	row("  stuck (running after the drain)", r.Stuck, "want 0")
	row("  missing (posted, never stored)", r.Missing, "want 0")
	row("completed without the final artefact", r.CompletedWithoutWork, "want 0")
	row("completed, a consumed artefact left without work", r.EndedWithConsumers, "want 0")
	row("threads with a duplicate version", r.DuplicateVersions, "want 0")
	row("grants whose tool ran twice at once", r.DoubleRuns, "want 0")
	row("events not acknowledged", r.Unacknowledged, "want 0")
	streams := make([]string, 0, len(r.UnacknowledgedBy))
	for s := range r.UnacknowledgedBy {
		streams = append(streams, s)
	}
	slices.Sort(streams)
	for _, s := range streams {
		row("    "+s, r.UnacknowledgedBy[s], "")
	}
	row("workflow keys left after retention", r.KeysLeft, "want 0")
	row("index entries left after retention", r.IndexLeft, "want 0")
	row("daemon exits not caused by a fault", r.UnexpectedExits, "want 0")
	fmt.Fprintf(tw, "FAULT\tINJECTED\tRECOVERY p50\tmax\n")
	for _, k := range AllFaultKinds() {
		ds := slices.Clone(r.Recovery[k])
		slices.Sort(ds)
		p50, mx := "-", "-"
		if len(ds) > 0 {
			p50 = ds[(len(ds)-1)/2].Round(time.Millisecond).String()
			mx = ds[len(ds)-1].Round(time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", k, r.Injected[k], p50, mx)
	}
	verdict := "PASS: every invariant held"
	if !r.OK() {
		verdict = "FAIL: an invariant broke (see the rows marked want 0)"
	}
	fmt.Fprintln(tw, verdict)
	return tw.Flush()
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 90 {
		s = s[:87] + "..."
	}
	return s
}
