package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// jsonEvent is one line of `watch -o jsonl`.
type jsonEvent map[string]string

func parseEventLines(tb testing.TB, out string) []jsonEvent {
	tb.Helper()
	var evs []jsonEvent
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		var ev jsonEvent
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			tb.Fatalf("line %q is not a JSON event: %v", line, err)
		}
		evs = append(evs, ev)
	}
	return evs
}

func eventIDs(evs []jsonEvent) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev["id"]
	}
	return out
}

// streamIDs lists the stream ids of the instance's events that keep
// selects, in stream order.
func streamIDs(tb testing.TB, bb *blackboard.Client, keep func(blackboard.Event) bool) []string {
	tb.Helper()
	evs, err := bb.RangeEvents(tb.Context(), "-", "+", 0)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		if keep(ev) {
			out = append(out, ev.StreamID)
		}
	}
	return out
}

// appendMarks appends n test events to workflow wf, tagged with group.
func appendMarks(tb testing.TB, bb *blackboard.Client, wf, group string, n int) {
	tb.Helper()
	for i := range n {
		if _, err := bb.AppendEvent(context.Background(), blackboard.Event{Type: "test_mark", WorkflowID: wf,
			Fields: map[string]string{"group": group, "n": fmt.Sprint(i)}}); err != nil {
			tb.Fatal(err)
		}
	}
}

func countGroup(evs []jsonEvent, group string) int {
	n := 0
	for _, ev := range evs {
		if ev["group"] == group {
			n++
		}
	}
	return n
}

// TestWatchReplaysThenFollowsWithoutGapOrDuplicate appends events before
// watch starts, between replay pages, exactly at the switch from replay to
// live follow, and while it follows: each must appear once, in stream
// order. It sets the package's watch test seams, so it does not run in
// parallel.
func TestWatchReplaysThenFollowsWithoutGapOrDuplicate(t *testing.T) {
	e := newTestEnv(t)
	g := blackboard.NewGoal("watch me", 0, "user", nil)
	if err := e.bb.CreateArtefact(t.Context(), g, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	appendMarks(t, e.bb, g.ID, "before", 5)

	pages := 0
	watchReplayPage = 2
	watchHookAfterPage = func() {
		if pages++; pages == 1 {
			appendMarks(t, e.bb, g.ID, "during-replay", 3)
		}
	}
	switched := make(chan struct{})
	watchHookAfterReplay = func() {
		appendMarks(t, e.bb, g.ID, "at-switch", 2)
		close(switched)
	}
	t.Cleanup(func() { watchHookAfterPage, watchHookAfterReplay, watchReplayPage = nil, nil, followPage })

	done := make(chan error, 1)
	go func() {
		_, _, err := e.run(t, "watch", "--workflow", blackboard.ShortID(g.ID), "-o", "jsonl", "--exit-on-completion")
		done <- err
	}()
	select {
	case <-switched:
	case err := <-done:
		t.Fatalf("watch ended before following: %v", err)
	case <-time.After(waitFor):
		t.Fatal("watch never finished its replay")
	}
	e.out.waitUntil(t, "the events appended at the switch", func(s string) bool {
		return countGroup(parseEventLines(t, s), "at-switch") == 2
	})
	appendMarks(t, e.bb, g.ID, "after", 3)
	e.out.waitUntil(t, "the events appended while following", func(s string) bool {
		return countGroup(parseEventLines(t, s), "after") == 3
	})
	if _, err := e.bb.EndWorkflow(t.Context(), g.ID, blackboard.WorkflowCompleted, "done", 1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
	case <-time.After(waitFor):
		t.Fatal("watch did not exit on the workflow's completion")
	}

	got := parseEventLines(t, e.out.String())
	want := streamIDs(t, e.bb, func(ev blackboard.Event) bool { return ev.WorkflowID == g.ID })
	if !slices.Equal(eventIDs(got), want) {
		t.Fatalf("watch showed\n%v\nwant every event of the workflow once, in stream order:\n%v", eventIDs(got), want)
	}
	if pages < 3 {
		t.Errorf("the replay took %d pages; the test needs several to append between them", pages)
	}
	for group, n := range map[string]int{"before": 5, "during-replay": 3, "at-switch": 2, "after": 3} {
		if c := countGroup(got, group); c != n {
			t.Errorf("%d %q events shown, want %d", c, group, n)
		}
	}
	if last := got[len(got)-1]; last["event"] != string(blackboard.EventWorkflowCompleted) || last["status"] != "completed" {
		t.Errorf("last event = %v, want the workflow's completion", last)
	}
}

func TestWatchJSONLHasFixedFieldsAndMillisecondTimes(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	s := seedWorkflow(t, e.bb)
	evs := parseEventLines(t, e.mustRun(t, "watch", "--until", "0s", "-o", "jsonl"))
	want := streamIDs(t, e.bb, func(blackboard.Event) bool { return true })
	if !slices.Equal(eventIDs(evs), want) {
		t.Fatalf("watch --until now showed %d events, want the %d in the log", len(evs), len(want))
	}
	sawTermination := false
	for _, ev := range evs {
		for _, k := range eventJSONKeys {
			if _, ok := ev[k]; !ok {
				t.Fatalf("event %v lacks key %q", ev, k)
			}
		}
		ts, err := time.Parse(time.RFC3339, ev["ts"])
		if err != nil || !strings.HasSuffix(ev["ts"], "Z") || len(ev["ts"]) != len("2006-01-02T15:04:05.000Z") {
			t.Errorf("ts %q is not RFC 3339 with milliseconds in UTC (%v)", ev["ts"], err)
		}
		if ms := streamIDMs(ev["id"]); ts.UnixMilli() < ms-1000 || ts.UnixMilli() > ms+1000 {
			t.Errorf("ts %s is far from the stream id %s", ev["ts"], ev["id"])
		}
		if ev["event"] == "claim_transitioned" && ev["claim_id"] == s.planV1Claim && ev["to"] == "terminated" {
			sawTermination = ev["workflow_id"] == s.goal.ID && ev["from"] == "pending_consensus"
		}
	}
	if !sawTermination {
		t.Error("the plan claim's termination is missing or lacks its fields")
	}
}

func TestWatchFilters(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	s := seedWorkflow(t, e.bb)
	other := blackboard.NewGoal("another goal", 0, "user", nil)
	if err := e.bb.CreateArtefact(t.Context(), other, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	if err := e.bb.RegisterAgent(t.Context(), blackboard.Registration{Name: "reviewer", Role: "reviewer", Consumer: "c"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := e.bb.AppendEvent(t.Context(), blackboard.Event{Type: blackboard.EventClaimGranted, WorkflowID: s.goal.ID,
		ClaimID: s.planV2Claim, Fields: map[string]string{"phase": "review", "agents": "auditor,reviewer"}}); err != nil {
		t.Fatal(err)
	}
	match := func(pattern, s string) bool { ok, _ := path.Match(pattern, s); return ok }
	cases := []struct {
		name string
		args []string
		keep func(blackboard.Event) bool
	}{
		{"event glob", []string{"--event", "claim_*"}, func(ev blackboard.Event) bool { return match("claim_*", string(ev.Type)) }},
		{"artefact type", []string{"--type", "Plan"}, func(ev blackboard.Event) bool { return ev.Field("type") == "Plan" }},
		{"agent, also in a grant's agent list", []string{"--agent", "reviewer"}, func(ev blackboard.Event) bool {
			return ev.Agent == "reviewer" || ev.Type == blackboard.EventClaimGranted
		}},
		{"workflow prefix", []string{"--workflow", blackboard.ShortID(other.ID)}, func(ev blackboard.Event) bool { return ev.WorkflowID == other.ID }},
		{"combined", []string{"--workflow", s.goal.ID, "--event", "artefact_*", "--type", "Rev*"}, func(ev blackboard.Event) bool {
			return ev.WorkflowID == s.goal.ID && ev.Type == blackboard.EventArtefactCreated && ev.Field("type") == "Review"
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"watch", "--until", "0s", "-o", "jsonl"}, tc.args...)
			got := eventIDs(parseEventLines(t, e.mustRun(t, args...)))
			want := streamIDs(t, e.bb, tc.keep)
			if len(want) == 0 || !slices.Equal(got, want) {
				t.Errorf("watch %v showed %v, want %v", tc.args, got, want)
			}
		})
	}
}

func TestWatchSinceAndUntilBoundTheReplay(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	seedWorkflow(t, e.bb)
	all, err := e.bb.RangeEvents(t.Context(), "-", "+", 0)
	if err != nil {
		t.Fatal(err)
	}
	// Bounds at the milliseconds of two events inside the log.
	fromMs, toMs := streamIDMs(all[2].StreamID), streamIDMs(all[len(all)-3].StreamID)
	rfc := func(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }
	got := eventIDs(parseEventLines(t, e.mustRun(t, "watch", "-o", "jsonl", "--since", rfc(fromMs), "--until", rfc(toMs))))
	var want []string
	for _, ev := range all {
		if ms := streamIDMs(ev.StreamID); ms >= fromMs && ms <= toMs {
			want = append(want, ev.StreamID)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("--since %s --until %s showed %v, want %v", rfc(fromMs), rfc(toMs), got, want)
	}
	if _, _, err := e.run(t, "watch", "--since", "1m", "--until", "2m"); ExitCode(err) != ExitUsage {
		t.Errorf("--since after --until: exit %d (%v), want %d", ExitCode(err), err, ExitUsage)
	}
	if _, _, err := e.run(t, "watch", "--event", "[claim"); ExitCode(err) != ExitUsage {
		t.Errorf("bad glob: exit %d (%v), want %d", ExitCode(err), err, ExitUsage)
	}
}

func TestWatchTextIsAlignedAndColouredOnlyOnATerminal(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	s := seedWorkflow(t, e.bb)
	plainOut := e.mustRun(t, "watch", "--until", "0s", "--workflow", blackboard.ShortID(s.goal.ID))
	if strings.Contains(plainOut, "\x1b[") {
		t.Errorf("colour without a terminal:\n%q", plainOut)
	}
	lines := strings.Split(strings.TrimRight(plainOut, "\n"), "\n")
	col := strings.Index(lines[0], blackboard.ShortID(s.goal.ID))
	for _, l := range lines {
		if strings.Index(l, blackboard.ShortID(s.goal.ID)) != col {
			t.Errorf("workflow column not aligned at %d:\n%s", col, plainOut)
			break
		}
	}
	if !strings.Contains(plainOut, "claim "+blackboard.ShortID(s.planV1Claim)+" pending_consensus → terminated") {
		t.Errorf("text lacks the plan claim's termination:\n%s", plainOut)
	}

	e.app.IsTTY = true
	if out := e.mustRun(t, "watch", "--until", "0s"); !strings.Contains(out, "\x1b[31m") {
		t.Errorf("no colour on a terminal (want red for the failure):\n%q", out)
	}
	if out := e.mustRun(t, "watch", "--until", "0s", "--no-color"); strings.Contains(out, "\x1b[") {
		t.Errorf("colour despite --no-color")
	}
	e.env["NO_COLOR"] = "1"
	if out := e.mustRun(t, "watch", "--until", "0s"); strings.Contains(out, "\x1b[") {
		t.Errorf("colour despite NO_COLOR")
	}
}

func TestWatchExitOnCompletionWaitsForALiveCompletion(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	old := blackboard.NewGoal("already over", 0, "user", nil)
	next := blackboard.NewGoal("still running", 0, "user", nil)
	for _, g := range []*blackboard.Artefact{old, next} {
		if err := e.bb.CreateArtefact(t.Context(), g, blackboard.WriteAuth{}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.bb.EndWorkflow(t.Context(), old.ID, blackboard.WorkflowCompleted, "earlier", 1); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := e.run(t, "watch", "-o", "jsonl", "--exit-on-completion")
		done <- err
	}()
	// The old completion is replayed, and watch keeps following.
	e.out.waitUntil(t, "the replayed completion", func(s string) bool { return strings.Contains(s, `"reason":"earlier"`) })
	select {
	case err := <-done:
		t.Fatalf("watch exited on a replayed completion: %v", err)
	default:
	}
	if _, err := e.bb.EndWorkflow(t.Context(), next.ID, blackboard.WorkflowFailed, "later", 1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitFor):
		t.Fatal("watch did not exit on the live completion")
	}
	if evs := parseEventLines(t, e.out.String()); evs[len(evs)-1]["reason"] != "later" {
		t.Errorf("last event = %v, want the live completion", evs[len(evs)-1])
	}
}

// TestWatchReconnectsAfterRedisRestart kills the Redis under a following
// watch, restarts it with its data, and checks that watch says so on
// stderr, resumes after the last event it showed, and misses nothing.
func TestWatchReconnectsAfterRedisRestart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("integration test: needs redis-server")
	}
	srv, err := redistest.NewServer(redistest.ServerOptions{AppendOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	e := newTestEnv(t)
	e.env["SETT_REDIS_URL"] = srv.URL()
	bb, err := blackboard.Dial(t.Context(), srv.URL(), blackboard.Options{Instance: e.bb.Instance()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bb.Close() })
	g := blackboard.NewGoal("survive a restart", 0, "user", nil)
	if err := bb.CreateArtefact(t.Context(), g, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, _, err := e.run(t, "watch", "--workflow", g.ID, "-o", "jsonl", "--exit-on-completion")
		done <- err
	}()
	e.out.waitUntil(t, "the replayed goal", func(s string) bool { return strings.Contains(s, `"type":"GoalDefined"`) })
	if err := srv.Kill(); err != nil {
		t.Fatal(err)
	}
	e.err.waitUntil(t, "the outage notice", func(s string) bool { return strings.Contains(s, "lost the connection to Redis") })
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	appendMarks(t, bb, g.ID, "after-restart", 2)
	if _, err := bb.EndWorkflow(t.Context(), g.ID, blackboard.WorkflowCompleted, "done", 1); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(waitFor):
		t.Fatalf("watch did not resume after the restart; stderr:\n%s", e.err.String())
	}
	if !strings.Contains(e.err.String(), "reconnected to Redis") {
		t.Errorf("no reconnect notice on stderr:\n%s", e.err.String())
	}
	got := eventIDs(parseEventLines(t, e.out.String()))
	want := streamIDs(t, bb, func(ev blackboard.Event) bool { return ev.WorkflowID == g.ID })
	if !slices.Equal(got, want) {
		t.Errorf("watch showed %v, want %v", got, want)
	}
}
