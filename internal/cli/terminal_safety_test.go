package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
)

// evil is text a tool or a user could write: clear the screen, write the
// clipboard (OSC 52), set the window title, move the cursor up and erase,
// a C1 CSI and a bidi override.
const evil = "before\x1b[2J\x1b]52;c;ZXZpbA==\x07\x1b]0;owned\x1b\\\x1b[3A\x1b[2K\u009b2J\u202eafter"

// ourSGR matches the colour codes Sett writes itself on a terminal.
var ourSGR = regexp.MustCompile(`\x1b\[[0-9]{1,2}m`)

// assertTerminalSafe fails when out carries an escape sequence other than
// Sett's own colours, a C1 byte or a bidi override.
func assertTerminalSafe(t *testing.T, what, out string) {
	t.Helper()
	rest := ourSGR.ReplaceAllString(out, "")
	for _, bad := range []string{"\x1b", "\x07", "\u009b", "\u202e"} {
		if strings.Contains(rest, bad) {
			t.Errorf("%s printed %q raw:\n%q", what, bad, out)
		}
	}
	if !strings.Contains(out, `\x1b[2J`) {
		t.Errorf("%s does not show the escaped sequence (\\x1b[2J) for people to see:\n%q", what, out)
	}
}

func TestHumanOutputEscapesControlCharactersAndJSONStaysExact(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	ctx := t.Context()
	goal := blackboard.NewGoal("goal "+evil, 0, "user", map[string]string{"note": evil})
	if err := e.bb.CreateArtefact(ctx, goal, blackboard.WriteAuth{}); err != nil {
		t.Fatal(err)
	}
	created, err := e.bb.CreateClaim(ctx, blackboard.NewClaim{Epoch: 1,
		Claim: &blackboard.Claim{ID: blackboard.NewID(), ArtefactID: goal.ID, WorkflowID: goal.ID,
			Status: blackboard.ClaimPendingConsensus, ExpectedBidders: []string{"planner"}},
		ByArtefact: true, Grants: map[string]string{"planner": "1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	claimID := created.ID
	id := blackboard.NewID()
	plan := &blackboard.Artefact{ID: id, LogicalID: id, Version: 1, StructuralType: blackboard.StructuralStandard,
		Type: "Plan", Payload: "payload " + evil + "\nline two", Summary: "summary " + evil,
		SourceArtefacts: []string{goal.ID}, ProducedByRole: "planner", ProducedByAgent: "planner",
		WorkflowID: goal.ID, ClaimID: claimID, Depth: 1}
	if err := e.bb.CreateArtefact(ctx, plan, blackboard.WriteAuth{GrantToken: "1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.bb.Pause(ctx, "alice", "paused "+evil, blackboard.ControlFromCLI); err != nil {
		t.Fatal(err)
	}
	if _, err := e.bb.EndWorkflow(ctx, goal.ID, blackboard.WorkflowFailed, "reason "+evil, 1); err != nil {
		t.Fatal(err)
	}

	for _, tty := range []bool{false, true} {
		e.app.IsTTY = tty
		for _, args := range [][]string{
			{"hoard", plan.ID},
			{"hoard", goal.ID},
			{"hoard"},
			{"hoard", "--workflow", goal.ID, "-o", "tree"},
			{"watch", "--until", "0s"},
			{"status"},
		} {
			out := e.mustRun(t, args...)
			what := strings.Join(args, " ")
			if tty {
				what += " (terminal)"
			}
			if args[0] == "status" {
				// status shows the pause reason, not the payloads.
				if strings.Contains(ourSGR.ReplaceAllString(out, ""), "\x1b") {
					t.Errorf("%s printed ESC raw:\n%q", what, out)
				}
				if !strings.Contains(out, `paused before\x1b[2J`) {
					t.Errorf("%s lacks the escaped pause reason:\n%q", what, out)
				}
				continue
			}
			assertTerminalSafe(t, what, out)
		}
	}
	// The escaped payload keeps its line break: only controls change.
	if out := e.mustRun(t, "hoard", plan.ID); !strings.Contains(out, "\nline two") {
		t.Errorf("hoard lost the payload's newline:\n%q", out)
	}

	// Machine formats carry the exact bytes.
	var v struct {
		Artefact blackboard.Artefact `json:"artefact"`
	}
	if err := json.Unmarshal([]byte(e.mustRun(t, "hoard", plan.ID, "-o", "jsonl")), &v); err != nil {
		t.Fatal(err)
	}
	if v.Artefact.Payload != plan.Payload || v.Artefact.Summary != plan.Summary {
		t.Errorf("hoard -o jsonl changed the payload or summary: %q / %q", v.Artefact.Payload, v.Artefact.Summary)
	}
	found := false
	for _, ev := range parseEventLines(t, e.mustRun(t, "watch", "--until", "0s", "-o", "jsonl")) {
		if ev["event"] == string(blackboard.EventWorkflowCompleted) {
			found = true
			if ev["reason"] != "reason "+evil {
				t.Errorf("watch -o jsonl changed the reason: %q", ev["reason"])
			}
		}
	}
	if !found {
		t.Error("watch -o jsonl shows no workflow_completed event")
	}
}

func TestHoardOfAClaimIDShowsTheClaim(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	s := seedWorkflow(t, e.bb)
	for _, ref := range []string{s.planV1Claim, blackboard.ShortID(s.planV1Claim)} {
		out := e.mustRun(t, "hoard", ref)
		for _, want := range []string{
			blackboard.ShortID(s.planV1Claim) + " is a claim, not an artefact: the claim on Plan v1 " + s.planV1.ID,
			"Claim " + s.planV1Claim + ": terminated",
			"`sett hoard " + blackboard.ShortID(s.planV1.ID) + "` shows the artefact",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("hoard %s lacks %q:\n%s", ref, want, out)
			}
		}
	}
	var v struct {
		Claim blackboard.Claim `json:"claim"`
	}
	if err := json.Unmarshal([]byte(e.mustRun(t, "hoard", s.planV1Claim, "-o", "jsonl")), &v); err != nil || v.Claim.ID != s.planV1Claim {
		t.Errorf("hoard <claim> -o jsonl = %+v, %v", v, err)
	}
	if _, _, err := e.run(t, "hoard", "0123456789abcdef0123456789abcdef"); err == nil || !strings.Contains(err.Error(), "no artefact") {
		t.Errorf("hoard of an unknown id: %v", err)
	}
}
