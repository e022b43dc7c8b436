package prompt

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/tool"
)

// sampleInput is a feedback claim on Plan v1 with every part of the
// input filled in.
func sampleInput() tool.Input {
	review := tool.Artefact{ID: "rev-1111-aaaa", Type: "Review", Version: 1, ProducedByRole: "reviewer",
		Payload: `{"verdict":"reject","severity":"Major","findings":["Name the endpoint's path.","Add a test."]}`}
	return tool.Input{
		ClaimID: "claim-1", ClaimType: tool.ClaimTypeFeedback,
		TargetArtefact: tool.Artefact{ID: "plan-2222-bbbb", Type: "Plan", Version: 1, ProducedByRole: "planner",
			Payload: "# Plan: health\n1. Add it."},
		ContextChain: []tool.Artefact{
			review,
			{ID: "res-4444-dddd", Type: "Research", Version: 1, ProducedByRole: "researcher", Payload: "Use net/http."},
			{ID: "goal-3333-cccc", Type: "GoalDefined", Version: 1, ProducedByRole: "user", Payload: "Add a /health endpoint"},
		},
		Feedback: []tool.Artefact{review},
		Workflow: tool.Workflow{ID: "goal-3333-cccc", Goal: "Add a /health endpoint", Iteration: 1},
		Memory: tool.Memory{
			Learnings: "# Agent Memory\n\n## Patterns\n- **2026-01-01T00:00:00Z** — Rejected plan for \"x\": Always name files.",
			Handbook:  "Be polite. Never touch production.",
			Shared:    "## Recent Decisions\n- use net/http",
			Upstream:  map[string]string{"researcher": "status: DONE"},
		},
		Instance: "demo", Agent: "planner",
	}
}

// templateHeadings are the "## " headings the shipped templates write
// (memory files bring their own, which nest inside them).
var templateHeadings = regexp.MustCompile(`\n## (Goal|Input|Context|Company Handbook|Agent Memory|Answer|Shared memory|Memory of|Reviews to address|Your previous|Work to|Plan|The Rejected|Why the human|Current Agent Memory)`)

// section returns the text of a "## title" section of s, up to the next
// heading of the templates, or fails.
func section(t *testing.T, s, title string) string {
	t.Helper()
	head := "## " + title + "\n"
	i := strings.Index(s, head)
	if i < 0 {
		t.Fatalf("no section %q in:\n%s", title, s)
	}
	rest := s[i+len(head):]
	if loc := templateHeadings.FindStringIndex(rest); loc != nil {
		rest = rest[:loc[0]]
	}
	return rest
}

func TestPlannerFeedbackPlacesEveryPart(t *testing.T) {
	tpl, err := Load("planner", "")
	if err != nil {
		t.Fatal(err)
	}
	if tpl.Role.ArtefactType != "Plan" || tpl.Role.Format != FormatText {
		t.Fatalf("role = %+v", tpl.Role)
	}
	p, err := tpl.Render(NewData(sampleInput(), nil))
	if err != nil {
		t.Fatal(err)
	}
	// Rules (handbook, learnings) go to the system part, the learning loop's
	// "## Agent Memory" next to the handbook.
	if got := section(t, p.System, "Company Handbook"); !strings.Contains(got, "Never touch production.") {
		t.Errorf("handbook section = %q", got)
	}
	if got := section(t, p.System, "Agent Memory"); !strings.Contains(got, "Always name files.") {
		t.Errorf("agent memory section = %q", got)
	}
	if strings.Contains(p.User, "Always name files.") {
		t.Error("learnings leaked into the user part")
	}
	// The task goes to the user part.
	if got := section(t, p.User, "Goal"); strings.TrimSpace(got) != "Add a /health endpoint" {
		t.Errorf("goal section = %q", got)
	}
	if got := section(t, p.User, "Your previous plan (version 1)"); !strings.Contains(got, "1. Add it.") {
		t.Errorf("previous plan section = %q", got)
	}
	fb := section(t, p.User, "Reviews to address")
	for _, want := range []string{"### Review by reviewer", "Verdict: reject (Major)", "- Name the endpoint's path.", "- Add a test."} {
		if !strings.Contains(fb, want) {
			t.Errorf("feedback section lacks %q:\n%s", want, fb)
		}
	}
	ctx := section(t, p.User, "Context")
	if !strings.Contains(ctx, "### Research v1 by researcher (res-4444)\n\nUse net/http.") {
		t.Errorf("context section = %q", ctx)
	}
	if strings.Contains(ctx, "Review") || strings.Contains(ctx, "GoalDefined") {
		t.Errorf("the review or the goal appear twice (context and their own section):\n%s", ctx)
	}
	if got := section(t, p.User, "Shared memory of this workflow"); !strings.Contains(got, "use net/http") {
		t.Errorf("shared memory = %q", got)
	}
	if got := section(t, p.User, "Memory of researcher"); !strings.Contains(got, "status: DONE") {
		t.Errorf("upstream memory = %q", got)
	}
	if !strings.Contains(p.User, "Write version 2 of the plan.") {
		t.Errorf("user part does not ask for version 2:\n%s", p.User)
	}
	if strings.Contains(p.System+p.User, "\n\n\n") {
		t.Error("runs of blank lines survived")
	}
}

func TestEmptyMemoryIsLeftOut(t *testing.T) {
	in := sampleInput()
	in.Memory = tool.Memory{}
	in.ClaimType, in.Feedback, in.ContextChain = tool.ClaimTypeExclusive, nil, nil
	in.TargetArtefact = tool.Artefact{ID: "goal-3333-cccc", Type: "GoalDefined", Version: 1, Payload: "Add a /health endpoint"}
	for _, r := range Roles() {
		tpl, err := Load(r.Name, "")
		if err != nil {
			t.Fatal(err)
		}
		p, err := tpl.Render(NewData(in, nil))
		if err != nil {
			t.Fatalf("%s: %v", r.Name, err)
		}
		all := p.System + "\n" + p.User
		for _, absent := range []string{"## Company Handbook", "## Agent Memory", "## Shared memory", "## Memory of", "## Reviews to address", "## Context"} {
			if strings.Contains(all, absent) {
				t.Errorf("%s: %q rendered although empty:\n%s", r.Name, absent, all)
			}
		}
		if r.Name != "learner" && !strings.Contains(p.User, "Add a /health endpoint") {
			t.Errorf("%s: the goal is missing:\n%s", r.Name, p.User)
		}
	}
}

func TestLearnerSeesRejectedArtefactReasonAndMemory(t *testing.T) {
	in := sampleInput()
	in.ClaimType = tool.ClaimTypeLearn
	in.Feedback = []tool.Artefact{{ID: "h1", Type: "Review", ProducedByRole: "human", Payload: "Too vague: no file names."}}
	tpl, err := Load("learner", "")
	if err != nil {
		t.Fatal(err)
	}
	if tpl.Role.Format != FormatLearning || tpl.Role.ArtefactType != "Learning" {
		t.Fatalf("role = %+v", tpl.Role)
	}
	p, err := tpl.Render(NewData(in, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.System, "You are reviewing a rejected plan.") || !strings.Contains(p.System, "ONE concise learning (1-2") {
		t.Errorf("system part is not the learning loop's review prompt:\n%s", p.System)
	}
	if got := section(t, p.User, "The Rejected Plan"); !strings.Contains(got, "1. Add it.") {
		t.Errorf("rejected plan = %q", got)
	}
	if got := section(t, p.User, "Why the human rejected it"); strings.TrimSpace(got) != "Too vague: no file names." {
		t.Errorf("reason = %q", got)
	}
	if got := section(t, p.User, "Current Agent Memory"); !strings.Contains(got, "Always name files.") {
		t.Errorf("current memory = %q", got)
	}
}

func TestReviewerShowsCommit(t *testing.T) {
	in := sampleInput()
	in.ClaimType, in.Feedback = tool.ClaimTypeReview, nil
	in.TargetArtefact = tool.Artefact{ID: "cc", Type: "CodeCommit", Version: 1, ProducedByRole: "coder", Payload: "abc123", Summary: "sett/abcd: add /health"}
	tpl, err := Load("reviewer", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := tpl.Render(NewData(in, &Commit{Hash: "abc123", Available: true, Show: "diff --git a/x b/x\n+health"}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.User, "Commit abc123:\n\n```\ndiff --git a/x b/x\n+health\n```") {
		t.Errorf("the diff is not shown:\n%s", p.User)
	}
	p, err = tpl.Render(NewData(in, &Commit{Hash: "abc123", Why: "git is not installed"}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p.User, "its diff is not available here: git is not installed") || !strings.Contains(p.User, "sett/abcd: add /health") {
		t.Errorf("the missing diff is not explained:\n%s", p.User)
	}
	if !strings.Contains(p.System, `{"verdict": "approve" or "reject"`) {
		t.Errorf("the reviewer does not ask for the verdict JSON:\n%s", p.System)
	}
}

func TestOverrideDirectoryAndPath(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("planner.tmpl", `{{define "user"}}CUSTOM {{.Goal}}{{template "rules" .}}{{end}}`)
	write("_common.tmpl", `{{define "rules"}} RULES={{.Memory.Handbook}}{{end}}`)
	tpl, err := Load("planner", dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := tpl.Render(NewData(sampleInput(), nil))
	if err != nil {
		t.Fatal(err)
	}
	if p.System != "" || p.User != "CUSTOM Add a /health endpoint RULES=Be polite. Never touch production." {
		t.Errorf("override not used: %+v", p)
	}
	if tpl.Role.ArtefactType != "Plan" {
		t.Errorf("an overridden role keeps its settings, got %+v", tpl.Role)
	}
	// The reviewer is not overridden: the built-in one, with the
	// overridden partials.
	if tpl, err = Load("reviewer", dir); err != nil || !strings.HasPrefix(tpl.Source, "built-in") {
		t.Fatalf("reviewer: %v %+v", err, tpl)
	}

	path := write("triage.tmpl", `{{define "system"}}S {{.Agent}}{{end}}{{define "user"}}U {{.ClaimType}}{{end}}`)
	if tpl, err = Load(path, ""); err != nil {
		t.Fatal(err)
	}
	if tpl.Role != (Role{}) {
		t.Errorf("a file that is no role has no role settings: %+v", tpl.Role)
	}
	if p, err = tpl.Render(NewData(sampleInput(), nil)); err != nil || p.System != "S planner" || p.User != "U feedback" {
		t.Errorf("render = %+v, %v", p, err)
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	noUser := filepath.Join(dir, "x.tmpl")
	if err := os.WriteFile(noUser, []byte(`{{define "system"}}s{{end}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(dir, "bad.tmpl")
	if err := os.WriteFile(bad, []byte(`{{define "user"}}{{.Goal{{end}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.tmpl")
	if err := os.WriteFile(empty, []byte(`{{define "user"}}  {{end}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, spec, want string
	}{
		{name: "unknown role", spec: "poet", want: `"poet" is not a shipped template: name one of planner, reviewer`},
		{name: "empty", spec: " ", want: "no template given"},
		{name: "missing file", spec: filepath.Join(dir, "nope.tmpl"), want: "no such file"},
		{name: "no user block", spec: noUser, want: `defines no "user" block`},
		{name: "syntax", spec: bad, want: "bad.tmpl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(tc.spec, "")
			if !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrTemplate containing %q", err, tc.want)
			}
		})
	}
	tpl, err := Load(empty, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tpl.Render(NewData(sampleInput(), nil)); !errors.Is(err, ErrTemplate) || !strings.Contains(err.Error(), "rendered nothing") {
		t.Fatalf("err = %v", err)
	}
}

func TestClipAndReviewText(t *testing.T) {
	if got := clip(3, "abcdef"); got != "abc\n[… 3 more characters cut]" {
		t.Errorf("clip = %q", got)
	}
	if got := clip(10, "abc"); got != "abc" {
		t.Errorf("clip = %q", got)
	}
	for _, tc := range []struct{ in, want string }{
		{`  plain text  `, "plain text"},
		{`{"verdict":"approve"}`, "Verdict: approve"},
		{`{"status":"NEEDS_REVISION","findings":[{"file":"a.go"}]}`, "Verdict: NEEDS_REVISION\n- {\"file\":\"a.go\"}"},
		{`{"other":1}`, `{"other":1}`},
	} {
		if got := reviewText(tc.in); got != tc.want {
			t.Errorf("reviewText(%s) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
