package cli

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

func TestAgeAndAgo(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		d        time.Duration
		age, ago string
	}{
		{0, "0s", "just now"},
		{500 * time.Millisecond, "0s", "just now"},
		{3 * time.Second, "3s", "3s ago"},
		{59 * time.Second, "59s", "59s ago"},
		{2*time.Minute + 10*time.Second, "2m", "2m ago"},
		{5 * time.Hour, "5h", "5h ago"},
		{47 * time.Hour, "47h", "47h ago"},
		{72 * time.Hour, "3d", "3d ago"},
		{-5 * time.Second, "0s", "in 5s"},
	}
	for _, tc := range cases {
		then := now.Add(-tc.d)
		if got := age(now, then); got != tc.age {
			t.Errorf("age(%v) = %q, want %q", tc.d, got, tc.age)
		}
		if got := ago(now, then); got != tc.ago {
			t.Errorf("ago(%v) = %q, want %q", tc.d, got, tc.ago)
		}
	}
}

func TestHumanDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		850 * time.Millisecond:            "850ms",
		12 * time.Second:                  "12s",
		3*time.Minute + 4*time.Second:     "3m4s",
		2*time.Hour + 5*time.Minute + 1e9: "2h5m",
	} {
		if got := humanDuration(d); got != want {
			t.Errorf("humanDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestTableStaysAlignedWithColour(t *testing.T) {
	for _, color := range []bool{false, true} {
		var b bytes.Buffer
		tb := newTable(&b, outputStyle{color: color}, "ID", "STATUS", "NOTE")
		tb.row(cell{text: "a"}, cell{text: "terminated", colour: colourRed}, cell{text: "x"})
		tb.row(cell{text: "bbbbbbbb"}, cell{text: "ok"}, cell{text: "multi\nline\tcell"})
		if err := tb.flush(); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if got := ansi.MatchString(out); got != color {
			t.Errorf("colour=%v: escape codes present = %v:\n%q", color, got, out)
		}
		lines := strings.Split(strings.TrimRight(ansi.ReplaceAllString(out, ""), "\n"), "\n")
		want := []string{
			"ID        STATUS      NOTE",
			"a         terminated  x",
			"bbbbbbbb  ok          multi line cell",
		}
		if strings.Join(lines, "\n") != strings.Join(want, "\n") {
			t.Errorf("colour=%v: table\n%s\nwant\n%s", color, strings.Join(lines, "\n"), strings.Join(want, "\n"))
		}
	}
}

func TestStyleForColourRules(t *testing.T) {
	cases := []struct {
		name    string
		tty     bool
		noColor string
		flag    bool
		want    bool
	}{
		{"terminal", true, "", false, true},
		{"pipe", false, "", false, false},
		{"NO_COLOR", true, "1", false, false},
		{"--no-color", true, "", true, false},
	}
	for _, tc := range cases {
		app := &App{IsTTY: tc.tty, noColor: tc.flag, LookupEnv: func(k string) (string, bool) {
			if k == "NO_COLOR" && tc.noColor != "" {
				return tc.noColor, true
			}
			return "", false
		}}
		if got := styleFor(app).color; got != tc.want {
			t.Errorf("%s: colour = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestParseTimeBound(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	local := time.Date(2024, 5, 1, 0, 0, 0, 0, time.Local)
	cases := []struct {
		in   string
		want int64
		bad  bool
	}{
		{"", 0, false},
		{"10m", now.Add(-10 * time.Minute).UnixMilli(), false},
		{"1h30m", now.Add(-90 * time.Minute).UnixMilli(), false},
		{"2d", now.Add(-48 * time.Hour).UnixMilli(), false},
		{"2024-05-01T10:00:00Z", time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC).UnixMilli(), false},
		{"2024-05-01T10:00:00.250+02:00", time.Date(2024, 5, 1, 8, 0, 0, 250e6, time.UTC).UnixMilli(), false},
		{"2024-05-01", local.UnixMilli(), false},
		{"yesterday", 0, true},
		{"-5m", 0, true},
		{"1.5d", 0, true},
	}
	for _, tc := range cases {
		got, err := parseTimeBound("since", tc.in, now)
		if tc.bad {
			if ExitCode(err) != ExitUsage {
				t.Errorf("%q: got %d, %v; want a usage error", tc.in, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestStreamIDBeforeStartsAtTheMillisecond(t *testing.T) {
	if got := streamIDBefore(0); got != "0-0" {
		t.Errorf("streamIDBefore(0) = %q", got)
	}
	if got := streamIDBefore(1700000000123); got != "1700000000122-18446744073709551615" {
		t.Errorf("streamIDBefore = %q", got)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{"Plan": "Plan", "Plan*": "'Plan*'", "a b": "'a b'", "it's": `'it'\''s'`, "": "''"} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestWorkflowProgressFollowsEvents(t *testing.T) {
	wf := "w"
	p := newWorkflowProgress(wf)
	ev := func(typ blackboard.EventType, claim, agent string, fields map[string]string) blackboard.Event {
		return blackboard.Event{Type: typ, WorkflowID: wf, ClaimID: claim, Agent: agent, Fields: fields}
	}
	steps := []struct {
		ev   blackboard.Event
		want string
	}{
		{ev(blackboard.EventArtefactCreated, "", "", nil), "phase: starting · working: none · iteration 0 · 1 artefact(s)"},
		{ev(blackboard.EventClaimCreated, "c1", "", map[string]string{"status": "pending_consensus"}), "phase: bidding · working: none · iteration 0 · 1 artefact(s)"},
		{ev(blackboard.EventClaimTransitioned, "c1", "", map[string]string{"to": "pending_review"}), "phase: review · working: none · iteration 0 · 1 artefact(s)"},
		{ev(blackboard.EventClaimGranted, "c1", "", map[string]string{"phase": "review", "agents": "rev-a,rev-b"}), "phase: review · working: rev-a, rev-b · iteration 0 · 1 artefact(s)"},
		{ev(blackboard.EventArtefactCreated, "c1", "rev-a", nil), "phase: review · working: rev-b · iteration 0 · 2 artefact(s)"},
		{ev(blackboard.EventFeedbackClaimCreated, "c2", "planner", map[string]string{"iteration": "1"}), "phase: review · working: planner, rev-b · iteration 1 · 2 artefact(s)"},
		{ev(blackboard.EventClaimCreated, "c2", "", map[string]string{"status": "pending_assignment"}), "phase: review, rework · working: planner, rev-b · iteration 1 · 2 artefact(s)"},
		{ev(blackboard.EventClaimTransitioned, "c1", "", map[string]string{"to": "terminated"}), "phase: rework · working: planner · iteration 1 · 2 artefact(s)"},
		{ev(blackboard.EventClaimTransitioned, "c2", "", map[string]string{"to": "complete"}), "phase: between claims · working: none · iteration 1 · 2 artefact(s)"},
		{blackboard.Event{Type: blackboard.EventArtefactCreated, WorkflowID: "other"}, "phase: between claims · working: none · iteration 1 · 2 artefact(s)"},
		{ev(blackboard.EventClaimCreated, "c3", "", map[string]string{"status": "pending_exclusive"}), "phase: exclusive · working: none · iteration 1 · 2 artefact(s)"},
		{ev(blackboard.EventRetryScheduled, "c3", "coder", map[string]string{"attempt": "1", "max_attempts": "5", "delay_ms": "57000", "failure_id": "f1"}),
			"phase: exclusive · working: none · iteration 1 · 2 artefact(s) · coder: retry 2/5 in 57s"},
		{ev(blackboard.EventRetryGranted, "c3", "coder", map[string]string{"attempt": "2", "max_attempts": "5"}),
			"phase: exclusive · working: coder · iteration 1 · 2 artefact(s)"},
	}
	now := time.Unix(1000, 0)
	for i, s := range steps {
		p.apply(s.ev, now)
		if got := p.summary(now); got != s.want {
			t.Errorf("step %d (%s): %q, want %q", i, s.ev.Type, got, s.want)
		}
	}
	p.apply(ev(blackboard.EventRetryScheduled, "c3", "coder", map[string]string{"attempt": "2", "max_attempts": "5", "delay_ms": "300000", "failure_id": "f2"}), now)
	p.noteFailure("f2", "exit_nonzero: exit status 1: connection refused")
	if got, want := p.summary(now.Add(4*time.Minute)), "coder: retry 3/5 in 1m0s: exit_nonzero: exit status 1: connection refused"; !strings.HasSuffix(got, want) {
		t.Errorf("pending retry: %q, want it to end with %q", got, want)
	}
	p.apply(ev(blackboard.EventClaimTransitioned, "c3", "", map[string]string{"to": "terminated"}), now)
	if got := p.summary(now); strings.Contains(got, "retry") {
		t.Errorf("a retry of a claim that ended is still shown: %q", got)
	}
	plan := blackboard.Event{Type: blackboard.EventArtefactCreated, WorkflowID: wf, ArtefactID: "3f2a9c1d-aaaa", Fields: map[string]string{"type": "Plan"}}
	p.apply(plan, now)
	gate := ev(blackboard.EventClaimCreated, "c4", "", map[string]string{"status": "pending_approval"})
	gate.ArtefactID = "3f2a9c1d-aaaa"
	p.apply(gate, now)
	if got, want := p.summary(now), "awaiting approval of Plan 3f2a9c1d: sett approve 3f2a9c1d, or sett reject 3f2a9c1d --reason TEXT"; !strings.Contains(got, want) {
		t.Errorf("awaiting approval: %q, want it to contain %q", got, want)
	}
	p.apply(ev(blackboard.EventClaimTransitioned, "c4", "", map[string]string{"to": "pending_consensus"}), now)
	if got := p.summary(now); strings.Contains(got, "approval") {
		t.Errorf("an approved artefact is still awaiting approval: %q", got)
	}
	p.apply(ev(blackboard.EventWorkflowCompleted, "", "", map[string]string{"status": "failed", "reason": "why"}), now)
	if !p.ended || p.status != blackboard.WorkflowFailed || p.reason != "why" {
		t.Errorf("after completion: ended %v status %q reason %q", p.ended, p.status, p.reason)
	}
}

func TestProgressLinePrintsOnlyChangesWithoutATerminal(t *testing.T) {
	var b bytes.Buffer
	l := &progressLine{w: &b, style: outputStyle{now: func() time.Time { return time.Unix(100, 0) }}, start: time.Unix(88, 0)}
	p := newWorkflowProgress("w")
	now := time.Unix(100, 0)
	l.update(p)
	l.update(p)
	// A new artefact alone is no step of its own in a log.
	p.apply(blackboard.Event{Type: blackboard.EventArtefactCreated, WorkflowID: "w"}, now)
	l.update(p)
	p.apply(blackboard.Event{Type: blackboard.EventClaimCreated, WorkflowID: "w", ClaimID: "c", Fields: map[string]string{"status": "pending_consensus"}}, now)
	l.update(p)
	want := "[12s] phase: starting · working: none · iteration 0 · 0 artefact(s)\n" +
		"[12s] phase: bidding · working: none · iteration 0 · 1 artefact(s)\n"
	if b.String() != want {
		t.Errorf("progress output\n%q\nwant\n%q", b.String(), want)
	}
}

// TestNoBidIsWordedAsTheEndOfAChain: the orchestrator's "dead end" for a
// claim nobody bids on reads as what it usually is, the end of a chain.
func TestNoBidIsWordedAsTheEndOfAChain(t *testing.T) {
	ev := blackboard.Event{Type: blackboard.EventClaimCompleted, ClaimID: "c0ffee00-1111", Fields: map[string]string{"reason": "No agent bid (dead end)."}}
	got := eventDetails(ev)
	if strings.Contains(got, "dead end") || !strings.Contains(got, "end of the chain") {
		t.Errorf("eventDetails = %q, want the end of the chain, not a dead end", got)
	}
	ev.Fields["reason"] = "All phases complete."
	if got := eventDetails(ev); !strings.Contains(got, "All phases complete.") {
		t.Errorf("eventDetails = %q, want other reasons unchanged", got)
	}
}
