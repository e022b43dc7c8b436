package integration

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/stacktest"
)

// seed003Pipeline is examples/seed003-pipeline.yml with the given agents'
// lines replaced (agent → its new "{...}" value) and shorter timeouts.
func seed003Pipeline(t *testing.T, replace map[string]string) string {
	t.Helper()
	data, err := os.ReadFile("../examples/seed003-pipeline.yml")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if l == "orchestrator:" {
			lines[i] = "orchestrator:\n  bid_timeout: 3s\n  lease_ttl: 3s"
		}
		for agent, v := range replace {
			if strings.HasPrefix(l, "  "+agent+": ") {
				lines[i] = "  " + agent + ": " + v
			}
		}
	}
	return strings.Join(lines, "\n")
}

// clusterDecisions returns the workflow's review_decision events as
// "cluster outcome rule" strings, in order.
func clusterDecisions(s *stacktest.Stack, wf string) []string {
	var out []string
	for _, e := range s.Events(blackboard.EventReviewDecision) {
		if e.WorkflowID == wf {
			d := e.Field("cluster") + " " + e.Field("outcome") + " " + e.Field("rule")
			if e.Field("warning") == "true" {
				d += " warning"
			}
			out = append(out, d)
		}
	}
	return out
}

// replanned is the decisions of a pipeline whose verification fails
// every time (with decision failed): three replans of the Plan, each
// critiqued again, then on to release with a warning.
func replanned(failed string) []string {
	var out []string
	for range 3 {
		out = append(out, "critique proceed proceed", failed)
	}
	return append(out, "critique proceed proceed", "verification proceed at_limit warning", "release proceed proceed")
}

var allReviewers = []string{"ct-security", "ct-scalability", "ct-maintainability", "ct-strategy",
	"v-build", "v-tests", "v-tasks", "v-feature", "r-security", "r-quality", "r-testing", "r-knowledge"}

// TestSeed003ClustersInOnePipeline runs the three example clusters in one
// instance (plan → critique → implementation → verification → release)
// on the real binaries: each cluster decides its own artefact type with
// its own taxonomy and loop rules.
func TestSeed003ClustersInOnePipeline(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		replace       map[string]string
		script        string // review.sh, for an agent replaced by "sh review.sh"
		wantStatus    blackboard.WorkflowStatus
		wantDecisions []string
	}{
		{
			name: "CT at its revision limit proceeds with a warning, then V and R pass",
			replace: map[string]string{
				"ct-security": `{command: [sett-reviewer, --always-reject, --reject-severity, High], bidding_strategy: review, consumes: [Plan]}`,
			},
			wantStatus: blackboard.WorkflowCompleted,
			wantDecisions: []string{"critique rework rework_at", "critique proceed at_limit warning",
				"verification proceed proceed", "release proceed proceed"},
		},
		{
			name: "a V-Build FAIL decides alone and replans; the third replan moves on",
			replace: map[string]string{
				"v-build": `{command: [sett-reviewer, --always-reject, --reject-severity, FAIL], bidding_strategy: review, consumes: [CodeChange], review: {required: true}}`,
			},
			wantStatus:    blackboard.WorkflowCompleted,
			wantDecisions: replanned("verification replan gate"),
		},
		{
			name: "an R-Security memory Blocker with a DONE/Minor payload fails",
			replace: map[string]string{
				"r-security": `{command: [sh, review.sh], bidding_strategy: review, consumes: [ReleaseCandidate], review: {required: true, blocking: true}}`,
			},
			script: `{"artefact_type": "Review", "artefact_payload": {"status": "DONE", "severity": "Minor"}, ` +
				`"memory": {"status": "NEEDS_REVISION", "highest_severity": "Blocker", "key_findings": ["secret in the log"]}}`,
			wantStatus:    blackboard.WorkflowFailed,
			wantDecisions: []string{"critique proceed proceed", "verification proceed proceed", "release fail blocking"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := stacktest.New(t, seed003Pipeline(t, tc.replace))
			if tc.script != "" {
				if err := os.WriteFile(filepath.Join(s.Dir, "review.sh"), []byte("cat >/dev/null\ncat <<'EOF'\n"+tc.script+"\nEOF\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			s.Up(append([]string{"planner", "coder", "releaser"}, allReviewers...)...)
			wf := s.PostGoal("Ship the cache")
			w := s.WaitWorkflow(wf, 3*wait)
			got := clusterDecisions(s, wf)
			if w.Status != tc.wantStatus || strings.Join(got, " | ") != strings.Join(tc.wantDecisions, " | ") {
				t.Fatalf("workflow %s with decisions\n  %s\nwant %s with\n  %s", w.Status, strings.Join(got, "\n  "), tc.wantStatus, strings.Join(tc.wantDecisions, "\n  "))
			}
		})
	}
}
