package integration

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/stacktest"
)

// stageTool is a scripted reviewer: "sh tool.sh AGENT MODE SEVERITY"
// appends a line to runs-AGENT (one per run of the tool) and answers
// with SEVERITY: MODE pass answers DONE, reject NEEDS_REVISION,
// error-once ERROR on its first run and DONE after, error always ERROR,
// hang never answers.
const stageTool = `cat >/dev/null
echo run >> "runs-$1"
n=$(wc -l < "runs-$1")
status=DONE
case "$2" in
reject) status=NEEDS_REVISION ;;
error-once) [ "$n" -eq 1 ] && status=ERROR ;;
error) status=ERROR ;;
hang) echo $$ > "pid-$1"; exec sleep 600 ;;
esac
printf '{"artefact_type": "Review", "artefact_payload": {"status": "%s", "severity": "%s"}}\n' "$status" "$3"
`

// toolRuns is how many times agent's scripted tool ran.
func toolRuns(t *testing.T, s *stacktest.Stack, agent string) int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.Dir, "runs-"+agent))
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(data), "\n")
}

// stageAgent is the seed003 pipeline line of a scripted reviewer of typ.
func stageAgent(agent, mode, severity, typ, review string) string {
	line := `{command: [sh, tool.sh, ` + agent + `, ` + mode + `, ` + severity + `], bidding_strategy: review, consumes: [` + typ + `]`
	if review != "" {
		line += `, review: ` + review
	}
	return line + `}`
}

// TestReviewStagesOnRealBinaries runs the seed 003 pipeline with
// scripted verifiers and release reviewers that count their runs: a gate
// reviewer's FAIL means the other verifiers' tools never run, a pass
// means each runs once; an answered ERROR is asked once more; an
// advisory reviewer that hangs is skipped at its own deadline and the
// workflow completes.
func TestReviewStagesOnRealBinaries(t *testing.T) {
	t.Parallel()
	verifiers := []string{"v-tests", "v-tasks", "v-feature"}
	cases := []struct {
		name          string
		replace       map[string]string
		wantStatus    blackboard.WorkflowStatus
		wantDecisions []string
		wantRuns      map[string]int
		check         func(t *testing.T, s *stacktest.Stack, wf string)
	}{
		{
			name: "a V-Build FAIL: the other verifiers are never asked, in any of the four rounds",
			replace: map[string]string{
				"v-build":   stageAgent("v-build", "reject", "FAIL", "CodeChange", "{required: true}"),
				"v-tests":   stageAgent("v-tests", "pass", "PASS", "CodeChange", ""),
				"v-tasks":   stageAgent("v-tasks", "pass", "PASS", "CodeChange", ""),
				"v-feature": stageAgent("v-feature", "pass", "PASS", "CodeChange", ""),
			},
			wantStatus:    blackboard.WorkflowCompleted,
			wantDecisions: replanned("verification replan gate"),
			wantRuns:      map[string]int{"v-build": 4, "v-tests": 0, "v-tasks": 0, "v-feature": 0},
			check: func(t *testing.T, s *stacktest.Stack, wf string) {
				checkReplans(t, s, wf, 1)
				for _, e := range s.Events(blackboard.EventReviewDecision) {
					if e.WorkflowID == wf && e.Field("cluster") == "verification" {
						for _, v := range verifiers {
							if !strings.Contains(e.Field("reviews"), `"agent":"`+v+`","role":"ordinary","state":"skipped"`) {
								t.Errorf("the gate decision does not list %s as skipped: %s", v, e.Field("reviews"))
							}
						}
					}
				}
			},
		},
		{
			name: "a V-Build PASS: the other verifiers are asked once each",
			replace: map[string]string{
				"v-build":   stageAgent("v-build", "pass", "PASS", "CodeChange", "{required: true}"),
				"v-tests":   stageAgent("v-tests", "pass", "PASS", "CodeChange", ""),
				"v-tasks":   stageAgent("v-tasks", "pass", "PASS", "CodeChange", ""),
				"v-feature": stageAgent("v-feature", "pass", "PASS", "CodeChange", ""),
			},
			wantStatus:    blackboard.WorkflowCompleted,
			wantDecisions: []string{"critique proceed proceed", "verification proceed proceed", "release proceed proceed"},
			wantRuns:      map[string]int{"v-build": 1, "v-tests": 1, "v-tasks": 1, "v-feature": 1},
		},
		{
			name: "an answered ERROR is asked once more before the cluster reads it",
			replace: map[string]string{
				"v-build":   stageAgent("v-build", "error-once", "PASS", "CodeChange", "{required: true}"),
				"v-tests":   stageAgent("v-tests", "error-once", "PASS", "CodeChange", ""),
				"v-tasks":   stageAgent("v-tasks", "pass", "PASS", "CodeChange", ""),
				"v-feature": stageAgent("v-feature", "pass", "PASS", "CodeChange", ""),
			},
			wantStatus:    blackboard.WorkflowCompleted,
			wantDecisions: []string{"critique proceed proceed", "verification proceed proceed", "release proceed proceed"},
			wantRuns:      map[string]int{"v-build": 2, "v-tests": 2, "v-tasks": 1, "v-feature": 1},
			check: func(t *testing.T, s *stacktest.Stack, wf string) {
				asked := map[string]bool{}
				for _, e := range s.Events(blackboard.EventRetryGranted) {
					if e.WorkflowID == wf && e.Field("cause") == "answered_error" && e.Field("review_id") != "" {
						asked[e.Agent] = true
					}
				}
				if !asked["v-build"] || !asked["v-tests"] || len(asked) != 2 {
					t.Errorf("retry_granted (answered_error) for %v, want v-build and v-tests", asked)
				}
			},
		},
		{
			name: "two V ERRORs (each asked twice) replan; the third replan moves on",
			replace: map[string]string{
				"v-tests": stageAgent("v-tests", "error", "PASS", "CodeChange", ""),
				"v-tasks": stageAgent("v-tasks", "error", "PASS", "CodeChange", ""),
			},
			wantStatus:    blackboard.WorkflowCompleted,
			wantDecisions: replanned("verification replan max_missing"),
			wantRuns:      map[string]int{"v-tests": 8, "v-tasks": 8},
			check: func(t *testing.T, s *stacktest.Stack, wf string) {
				checkReplans(t, s, wf, 4) // every verifier's review goes to the planner
			},
		},
		{
			name: "an advisory reviewer that hangs is skipped at its deadline",
			replace: map[string]string{
				"r-knowledge": stageAgent("r-knowledge", "hang", "Minor", "ReleaseCandidate", "{advisory: true, deadline: 2s}"),
			},
			wantStatus:    blackboard.WorkflowCompleted,
			wantDecisions: []string{"critique proceed proceed", "verification proceed proceed", "release proceed proceed"},
			wantRuns:      map[string]int{"r-knowledge": 1},
			check: func(t *testing.T, s *stacktest.Stack, wf string) {
				var skipped []string
				for _, e := range s.Events(blackboard.EventReviewSkipped) {
					if e.WorkflowID == wf {
						skipped = append(skipped, e.Agent+" "+e.Field("reason"))
						if !strings.Contains(e.Field("note"), "did not answer within its deadline of 2s") {
							t.Errorf("review_skipped note %q", e.Field("note"))
						}
					}
				}
				if strings.Join(skipped, ",") != "r-knowledge advisory_deadline" {
					t.Errorf("review_skipped events %v, want r-knowledge advisory_deadline", skipped)
				}
				// Its grant withdrawn, the cub stops the hanging tool.
				data, err := os.ReadFile(filepath.Join(s.Dir, "pid-r-knowledge"))
				if err != nil {
					t.Fatal(err)
				}
				pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
				if err != nil {
					t.Fatal(err)
				}
				s.Eventually(wait, "the skipped reviewer's tool stopped", func() bool { return syscall.Kill(pid, 0) != nil })
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := stacktest.New(t, seed003Pipeline(t, tc.replace))
			if err := os.WriteFile(filepath.Join(s.Dir, "tool.sh"), []byte(stageTool), 0o644); err != nil {
				t.Fatal(err)
			}
			s.Up(append([]string{"planner", "coder", "releaser"}, allReviewers...)...)
			wf := s.PostGoal("Ship the cache")
			w := s.WaitWorkflow(wf, 3*wait)
			got := clusterDecisions(s, wf)
			if w.Status != tc.wantStatus || strings.Join(got, " | ") != strings.Join(tc.wantDecisions, " | ") {
				t.Fatalf("workflow %s (%s) with decisions\n  %s\nwant %s with\n  %s", w.Status, w.Outcome, strings.Join(got, "\n  "), tc.wantStatus, strings.Join(tc.wantDecisions, "\n  "))
			}
			for agent, want := range tc.wantRuns {
				if n := toolRuns(t, s, agent); n != want {
					t.Errorf("%s's tool ran %d times, want %d", agent, n, want)
				}
			}
			if tc.check != nil {
				tc.check(t, s, wf)
			}
		})
	}
}

// checkReplans checks the workflow's three replans: feedback claims on
// the Plan, granted to its producer (the planner), each holding the
// failed verification's reviews (reviews of them) as feedback.
func checkReplans(t *testing.T, s *stacktest.Stack, wf string, reviews int) {
	t.Helper()
	var n int
	for _, c := range s.Claims(wf) {
		if !strings.HasPrefix(c.ReviewDecision, "replan by cluster verification: ") {
			continue
		}
		n++
		if c.GrantedExclusiveAgent != "planner" || c.ArtefactType != "Plan" || len(c.AdditionalContextIDs) != reviews {
			t.Errorf("replan claim %s: agent %s, type %s, feedback %v; want planner, Plan, %d reviews",
				c.ID, c.GrantedExclusiveAgent, c.ArtefactType, c.AdditionalContextIDs, reviews)
		}
	}
	if n != 3 {
		t.Errorf("%d replan claims, want 3", n)
	}
}
