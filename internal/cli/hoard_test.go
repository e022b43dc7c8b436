package cli

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/settdev/sett/internal/blackboard"
)

// parseArtefactLines decodes `hoard -o jsonl` output.
func parseArtefactLines(tb testing.TB, out string) []blackboard.Artefact {
	tb.Helper()
	var arts []blackboard.Artefact
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var a blackboard.Artefact
		if err := json.Unmarshal([]byte(line), &a); err != nil {
			tb.Fatalf("line %q is not an artefact: %v", line, err)
		}
		arts = append(arts, a)
	}
	return arts
}

func ids(arts []blackboard.Artefact) []string {
	out := make([]string, len(arts))
	for i, a := range arts {
		out[i] = a.ID
	}
	return out
}

// newestFirst reports whether arts are ordered as the index lists them.
func newestFirst(arts []blackboard.Artefact) bool {
	return slices.IsSortedFunc(arts, func(a, b blackboard.Artefact) int {
		if a.CreatedAtMs != b.CreatedAtMs {
			return int(b.CreatedAtMs - a.CreatedAtMs)
		}
		return strings.Compare(b.ID, a.ID)
	})
}

func TestHoardTableListsArtefactsNewestFirst(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	s := seedWorkflow(t, e.bb)
	out := e.mustRun(t, "hoard")
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	header := strings.Fields(lines[0])
	want := []string{"SHORT-ID", "AGE", "TYPE", "VERSION", "STRUCT", "PRODUCER", "WORKFLOW", "SUMMARY"}
	if !slices.Equal(header, want) {
		t.Fatalf("header = %v, want %v", header, want)
	}
	if len(lines) != 1+len(s.all()) {
		t.Fatalf("%d lines, want a header and %d rows:\n%s", len(lines), len(s.all()), out)
	}
	// Columns are aligned: every row starts its TYPE column where the
	// header does.
	col := strings.Index(lines[0], "TYPE")
	for _, a := range s.all() {
		row := ""
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, blackboard.ShortID(a.ID)+" ") {
				row = l
			}
		}
		if row == "" {
			t.Fatalf("no row for %s (%s):\n%s", blackboard.ShortID(a.ID), a.Type, out)
		}
		if !strings.HasPrefix(row[col:], a.Type+" ") {
			t.Errorf("row %q: TYPE column at %d does not hold %s", row, col, a.Type)
		}
		for _, f := range []string{"v" + strconv.Itoa(a.Version), string(a.StructuralType), producer(a), blackboard.ShortID(s.goal.ID)} {
			if !strings.Contains(row, " "+f+" ") {
				t.Errorf("row %q lacks %q", row, f)
			}
		}
	}
	if strings.Contains(out, "More artefacts") {
		t.Errorf("one page holds everything, yet a next-page hint was printed:\n%s", out)
	}
}

func TestHoardJSONLParsesAndPagesWithCursor(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	s := seedWorkflow(t, e.bb)
	out, errOut, err := e.run(t, "hoard", "-o", "jsonl", "--limit", "4")
	if err != nil {
		t.Fatal(err)
	}
	first := parseArtefactLines(t, out)
	if len(first) != 4 || !newestFirst(first) {
		t.Fatalf("first page = %v, want 4 artefacts newest first", ids(first))
	}
	// The hint goes to stderr so that stdout stays JSON lines.
	_, cursor, ok := strings.Cut(strings.TrimSpace(errOut), "--cursor ")
	if !ok {
		t.Fatalf("no cursor hint on stderr: %q", errOut)
	}
	out = e.mustRun(t, "hoard", "-o", "jsonl", "--limit", "4", "--cursor", cursor)
	second := parseArtefactLines(t, out)
	all := append(first, second...)
	if !newestFirst(all) {
		t.Errorf("pages out of order: %v", ids(all))
	}
	got, want := ids(all), ids(deref(s.all()))
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("two pages hold %v, want every artefact once: %v", got, want)
	}
	for _, a := range all {
		if a.ID == s.reject.ID && (a.Payload != s.reject.Payload || a.WorkflowID != s.goal.ID || a.Type != "Review") {
			t.Errorf("jsonl review = %+v, want the stored fields", a)
		}
	}
}

func deref(arts []*blackboard.Artefact) []blackboard.Artefact {
	out := make([]blackboard.Artefact, len(arts))
	for i, a := range arts {
		out[i] = *a
	}
	return out
}

func TestHoardFiltersByTypeAndAgentAcrossPages(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	s := seedWorkflow(t, e.bb)
	cases := []struct {
		name string
		args []string
		want []*blackboard.Artefact
	}{
		{"type glob", []string{"--type", "Rev*"}, []*blackboard.Artefact{s.reject, s.approve}},
		{"agent", []string{"--agent", "planner"}, []*blackboard.Artefact{s.planV1, s.planV2}},
		{"type and agent", []string{"--type", "Plan", "--agent", "reviewer"}, nil},
		{"role of a goal", []string{"--agent", "user"}, []*blackboard.Artefact{s.goal}},
		{"workflow prefix", []string{"--workflow", blackboard.ShortID(s.goal.ID), "--type", "Tool*"}, []*blackboard.Artefact{s.failure}},
		{"since an hour ago", []string{"--since", "1h", "--type", "Plan"}, []*blackboard.Artefact{s.planV1, s.planV2}},
		{"until before the workflow", []string{"--until", "2000-01-01"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// --limit 1 forces the filtered scan to stop and resume
			// mid-page through the cursor.
			var got []string
			args := append([]string{"hoard", "-o", "jsonl", "--limit", "1"}, tc.args...)
			for page := 0; ; page++ {
				out, errOut, err := e.run(t, args...)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, ids(parseArtefactLines(t, out))...)
				_, cursor, ok := strings.Cut(strings.TrimSpace(errOut), "--cursor ")
				if !ok {
					break
				}
				if page > 10 {
					t.Fatal("the listing never ends")
				}
				args = append(append([]string{"hoard", "-o", "jsonl", "--limit", "1"}, tc.args...), "--cursor", cursor)
			}
			want := ids(deref(tc.want))
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("hoard %v listed %v, want %v", tc.args, got, want)
			}
		})
	}
}

func TestHoardShowsOneArtefactByShortID(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	s := seedWorkflow(t, e.bb)
	out := e.mustRun(t, "hoard", blackboard.ShortID(s.planV1.ID))
	for _, want := range []string{
		"Plan " + s.planV1.ID,
		"v1 of thread " + s.planV1.ID + " (2 version(s))",
		"planner",
		s.planV1.Payload,
		"→ v2", blackboard.ShortID(s.planV2.ID),
		"Claim " + s.planV1Claim + ": terminated",
		s.terminationReason,
		"Feedback claim (iteration 1) " + s.feedbackClaim + ": complete",
		"Rework delivered as version 2",
		"results          " + blackboard.ShortID(s.reject.ID) + "  Review v1  needs tests  by reviewer",
		blackboard.ShortID(s.planV2.ID) + "  Plan v2  plan with tests  by planner",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("hoard %s lacks %q:\n%s", blackboard.ShortID(s.planV1.ID), want, out)
		}
	}
	goal := e.mustRun(t, "hoard", s.goal.ID)
	for _, want := range []string{"from: alice", "score            3", "Add a /health endpoint\n\nIt must return 200.", "(this goal starts it)"} {
		if !strings.Contains(goal, want) {
			t.Errorf("hoard <goal> lacks %q:\n%s", want, goal)
		}
	}
	review := e.mustRun(t, "hoard", s.reject.ID)
	if !strings.Contains(review, "✗ reject (Major)") || !strings.Contains(review, "Review artefacts get no claim") {
		t.Errorf("review view lacks its verdict or claim note:\n%s", review)
	}
	// The JSON form carries the same facts.
	var v struct {
		Artefact      blackboard.Artefact `json:"artefact"`
		Thread        []threadEntry       `json:"thread"`
		Claim         *blackboard.Claim   `json:"claim"`
		FeedbackClaim *blackboard.Claim   `json:"feedback_claim"`
		ResultIDs     []string            `json:"result_ids"`
	}
	if err := json.Unmarshal([]byte(e.mustRun(t, "hoard", blackboard.ShortID(s.planV1.ID), "-o", "jsonl")), &v); err != nil {
		t.Fatal(err)
	}
	if v.Artefact.ID != s.planV1.ID || len(v.Thread) != 2 || v.Thread[1].ID != s.planV2.ID ||
		v.Claim == nil || v.Claim.TerminationReason != s.terminationReason || v.FeedbackClaim == nil ||
		v.FeedbackClaim.ID != s.feedbackClaim || len(v.ResultIDs) != 2 {
		t.Errorf("json view = %+v", v)
	}
}

func TestHoardShortIDErrors(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	s := seedWorkflow(t, e.bb)
	// Two artefacts whose ids share the prefix "abcd".
	for _, id := range []string{"abcd1234-0000-4000-8000-000000000001", "abcd5678-0000-4000-8000-000000000002"} {
		a := &blackboard.Artefact{ID: id, LogicalID: id, Version: 1, StructuralType: blackboard.StructuralStandard,
			Type: "Note", Payload: "n", ProducedByRole: "writer", WorkflowID: s.goal.ID, Summary: "note " + id[4:8], Depth: 1,
			SourceArtefacts: []string{s.goal.ID}}
		if err := e.bb.CreateArtefact(t.Context(), a, blackboard.WriteAuth{}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name     string
		ref      string
		code     int
		contains []string
	}{
		{"unique prefix", "abcd12", ExitOK, []string{"Note abcd1234-0000-4000-8000-000000000001", "note 1234"}},
		{"ambiguous prefix", "abcd", ExitUsage, []string{"matches 2", "abcd1234-0000-4000-8000-000000000001  Note  note 1234",
			"abcd5678-0000-4000-8000-000000000002  Note  note 5678", "give more characters"}},
		{"missing prefix", "ffff0000", ExitFailure, []string{`no artefact with id "ffff0000"`, "sett hoard"}},
		{"missing full id", "ffff0000-0000-4000-8000-000000000000", ExitFailure, []string{"does not exist"}},
		{"too short", "abc", ExitUsage, []string{"at least 4 characters"}},
		{"not hex", "zzzzzz", ExitUsage, []string{"not an id"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := e.run(t, "hoard", tc.ref)
			if code := ExitCode(err); code != tc.code {
				t.Fatalf("hoard %s: exit %d (%v), want %d", tc.ref, code, err, tc.code)
			}
			text := out
			if err != nil {
				text = err.Error()
			}
			for _, want := range tc.contains {
				if !strings.Contains(text, want) {
					t.Errorf("hoard %s: %q lacks %q", tc.ref, text, want)
				}
			}
		})
	}
}

func TestHoardTreeShowsReworkReviewsAndTermination(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	s := seedWorkflow(t, e.bb)
	out := e.mustRun(t, "hoard", "--workflow", blackboard.ShortID(s.goal.ID), "-o", "tree")
	lines := strings.Split(out, "\n")
	find := func(want string) int {
		t.Helper()
		for i, l := range lines {
			if strings.Contains(l, want) {
				return i
			}
		}
		t.Fatalf("tree lacks %q:\n%s", want, out)
		return -1
	}
	// depth is the column (in runes) where a line's branch ends.
	depth := func(i int) int {
		at := strings.Index(lines[i], "── ")
		if at < 0 {
			return -1
		}
		return utf8.RuneCountInString(lines[i][:at])
	}
	header := find("Workflow " + s.goal.ID + "  running")
	goal := find("GoalDefined " + blackboard.ShortID(s.goal.ID))
	thread := find("Plan v1 → v2  thread " + blackboard.ShortID(s.planV1.ID))
	v1 := find("v1 " + blackboard.ShortID(s.planV1.ID))
	terminated := find("claim " + blackboard.ShortID(s.planV1Claim) + " terminated: " + s.terminationReason)
	reject := find("Review " + blackboard.ShortID(s.reject.ID) + "  ✗ reject (Major)  by reviewer")
	feedback := find("feedback claim " + blackboard.ShortID(s.feedbackClaim) + " (iteration 1) complete: Rework delivered as version 2")
	v2 := find("v2 " + blackboard.ShortID(s.planV2.ID))
	approve := find("Review " + blackboard.ShortID(s.approve.ID) + "  ✓ approve  by reviewer")
	failure := find("FAILURE ToolExecutionFailure " + blackboard.ShortID(s.failure.ID))
	if !(header < goal && goal < thread && thread < v1 && v1 < terminated && terminated < v2 && v2 < approve) {
		t.Errorf("tree out of order:\n%s", out)
	}
	// Nesting: the thread under the goal, versions under the thread, the
	// claims and reviews under their version.
	if depth(goal) != -1 || depth(thread) <= depth(goal) || depth(v1) <= depth(thread) || depth(v2) != depth(v1) {
		t.Errorf("thread nesting wrong:\n%s", out)
	}
	for _, i := range []int{terminated, reject, feedback} {
		if depth(i) != depth(v1)+4 || i < v1 || i > v2 {
			t.Errorf("line %q is not directly under v1:\n%s", lines[i], out)
		}
	}
	for _, i := range []int{approve, failure} {
		if depth(i) != depth(v2)+4 || i < v2 {
			t.Errorf("line %q is not directly under v2:\n%s", lines[i], out)
		}
	}
	// An artefact id draws its workflow and points the artefact out.
	marked := e.mustRun(t, "hoard", blackboard.ShortID(s.reject.ID), "-o", "tree")
	if !strings.Contains(marked, "Review "+blackboard.ShortID(s.reject.ID)) || !strings.Contains(marked, "◀") {
		t.Errorf("hoard ID -o tree does not mark the artefact:\n%s", marked)
	}
}

func TestHoardUsageErrors(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	seedWorkflow(t, e.bb)
	for _, args := range [][]string{
		{"hoard", "-o", "tree"},
		{"hoard", "-o", "yaml"},
		{"hoard", "--limit", "0"},
		{"hoard", "--type", "[Plan"},
		{"hoard", "--since", "yesterday"},
		{"hoard", "--cursor", "nonsense"},
	} {
		_, _, err := e.run(t, args...)
		if ExitCode(err) != ExitUsage {
			t.Errorf("sett %v: exit %d (%v), want %d", args, ExitCode(err), err, ExitUsage)
		}
	}
	_, _, err := e.run(t, "hoard", "--workflow", "abcdef12")
	if ExitCode(err) != ExitFailure || !strings.Contains(err.Error(), `no workflow with id "abcdef12"`) {
		t.Errorf("unknown workflow: exit %d, %v", ExitCode(err), err)
	}
}

// TestHoardSaysWhenAFilteredScanStops shrinks the index pages so that a
// filter matching nothing hits the page bound. It sets a package test
// seam, so it does not run in parallel.
func TestHoardSaysWhenAFilteredScanStops(t *testing.T) {
	e := newTestEnv(t)
	s := seedWorkflow(t, e.bb)
	for range 40 {
		id := blackboard.NewID()
		a := &blackboard.Artefact{ID: id, LogicalID: id, Version: 1, StructuralType: blackboard.StructuralStandard,
			Type: "Note", Payload: "n", ProducedByRole: "writer", WorkflowID: s.goal.ID, Depth: 1, SourceArtefacts: []string{s.goal.ID}}
		if err := e.bb.CreateArtefact(t.Context(), a, blackboard.WriteAuth{}); err != nil {
			t.Fatal(err)
		}
	}
	hoardPageSize = 2
	t.Cleanup(func() { hoardPageSize = 0 })
	// The goal is the oldest artefact: 20 pages of 2 do not reach it.
	out := e.mustRun(t, "hoard", "--type", "GoalDefined")
	if !strings.Contains(out, "Scanned 40 artefacts (20 pages) and found 0 matching; the search stopped there.") ||
		!strings.Contains(out, "sett hoard --type GoalDefined --cursor ") {
		t.Fatalf("no stop notice with a way to continue:\n%s", out)
	}
	_, cursor, _ := strings.Cut(out, "--cursor ")
	out = e.mustRun(t, "hoard", "--type", "GoalDefined", "--cursor", strings.TrimSpace(cursor))
	if !strings.Contains(out, blackboard.ShortID(s.goal.ID)) || !strings.Contains(out, "GoalDefined") {
		t.Errorf("continuing the scan does not find the goal:\n%s", out)
	}
}
