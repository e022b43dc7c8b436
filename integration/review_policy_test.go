package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/stacktest"
)

// A reviewer's behaviour in these tests: a status ("DONE",
// "NEEDS_REVISION", "ERROR") with a severity, or "missing" (its tool fails
// and it has no retry left).
type behaviour struct {
	status   string
	severity string
}

func (b behaviour) script() string {
	if b.status == "missing" {
		return "cat >/dev/null; echo 'this reviewer is down' >&2; exit 1\n"
	}
	payload := fmt.Sprintf(`{"status": %q, "severity": %q, "findings": ["finding of a %s review"]}`, b.status, b.severity, b.status)
	mem := fmt.Sprintf(`{"status": %q, "key_findings": ["%s review"], "highest_severity": %q}`, b.status, b.status, b.severity)
	out := fmt.Sprintf(`{"artefact_type": "Review", "artefact_payload": %s, "memory": %s}`, payload, mem)
	return "cat >/dev/null\ncat <<'EOF'\n" + out + "\nEOF\n"
}

var missing = behaviour{status: "missing"}

func nr(sev string) behaviour   { return behaviour{"NEEDS_REVISION", sev} }
func ok(sev string) behaviour   { return behaviour{"DONE", sev} }
func errd(sev string) behaviour { return behaviour{"ERROR", sev} }

// cluster is one of the memory and review design's review clusters: its policy and reviewers,
// and the severity its approving reviews state.
type cluster struct {
	policy    string
	reviewers []string
	roles     map[string]string // agent → its review: block
	pass      string
}

var (
	critique = cluster{
		policy:    `{severities: [Critical, High, Medium, Low], rework_at: High, fail_at: Critical, min_reviews: 2, severity_required: true}`,
		reviewers: []string{"ct-maintainability", "ct-scalability", "ct-security", "ct-strategy"},
		pass:      "Low",
	}
	verification = cluster{
		policy:    `{severities: [FAIL, PASS], rework_at: FAIL, fail_at: FAIL, max_missing: 1, rework_on_reject: true}`,
		reviewers: []string{"v-build", "v-feature", "v-tasks", "v-tests"},
		roles:     map[string]string{"v-build": "{required: true}"},
		pass:      "PASS",
	}
	release = cluster{
		policy:    `{severities: [Blocker, Major, Minor], rework_at: Major, fail_at: Blocker, min_reviews: 2, severity_required: true}`,
		reviewers: []string{"r-knowledge", "r-quality", "r-security", "r-testing"},
		roles:     map[string]string{"r-security": "{required: true, blocking: true}", "r-knowledge": "{advisory: true}"},
		pass:      "Minor",
	}
)

// config is the cluster reviewing Plans, between a planner that records
// every tool input it gets and a coder that acts on approved Plans.
func (c cluster) config() string {
	var b strings.Builder
	b.WriteString(`version: "1.0"
orchestrator:
  bid_timeout: 3s
  lease_ttl: 3s
  max_review_iterations: 1
  review_policy: ` + c.policy + `
agents:
  planner: {command: ["sh", "-c", "in=$(cat); printf '%s\\n' \"$in\" >> planner-inputs.jsonl; printf '%s' \"$in\" | sett-writer --type Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
  coder: {command: ["sett-writer", "--type", "CodeChange"], bidding_strategy: exclusive, consumes: ["Plan"]}
`)
	for _, r := range c.reviewers {
		role := ""
		if c.roles[r] != "" {
			role = ", review: " + c.roles[r]
		}
		fmt.Fprintf(&b, "  %s: {command: [\"sh\", \"review-%s.sh\"], bidding_strategy: review, consumes: [\"Plan\"], retry: {max_attempts: 1}%s}\n", r, r, role)
	}
	return b.String()
}

// runCluster runs one review phase of the cluster with the given
// behaviours and returns the first review_decision.
func runCluster(t *testing.T, c cluster, behaviours map[string]behaviour) (*stacktest.Stack, string, blackboard.Event) {
	t.Helper()
	s := stacktest.New(t, c.config())
	for _, r := range c.reviewers {
		b, given := behaviours[r]
		if !given {
			b = ok(c.pass)
		}
		if err := os.WriteFile(filepath.Join(s.Dir, "review-"+r+".sh"), []byte(b.script()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s.Up(append([]string{"planner", "coder"}, c.reviewers...)...)
	wf := s.PostGoal("Design the cache")
	d := s.WaitEvent(blackboard.EventReviewDecision, func(e blackboard.Event) bool { return e.WorkflowID == wf }, wait)
	return s, wf, d
}

func TestReviewPolicyClusters(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		cluster     cluster
		behaviours  map[string]behaviour
		wantOutcome string
		wantRule    string
	}{
		// Critique: at least two usable reviews, any Critical or High → rework.
		{"critique: all low", critique, nil, "proceed", "proceed"},
		{"critique: one High", critique, map[string]behaviour{"ct-security": nr("High")}, "rework", "rework_at"},
		{"critique: one Critical", critique, map[string]behaviour{"ct-strategy": nr("Critical")}, "rework", "rework_at"},
		{"critique: two missing, quorum met", critique, map[string]behaviour{"ct-security": missing, "ct-strategy": missing}, "proceed", "proceed"},
		{"critique: three missing", critique, map[string]behaviour{"ct-security": missing, "ct-strategy": missing, "ct-scalability": missing}, "fail", "min_reviews"},
		// Verification: the memory and review design's status table, row by row.
		{"verification: all DONE", verification, nil, "proceed", "proceed"},
		{"verification: V-Tests NEEDS_REVISION", verification, map[string]behaviour{"v-tests": nr("FAIL")}, "rework", "rework_at"},
		{"verification: V-Tasks NEEDS_REVISION", verification, map[string]behaviour{"v-tasks": nr("FAIL")}, "rework", "rework_at"},
		{"verification: V-Feature NEEDS_REVISION", verification, map[string]behaviour{"v-feature": nr("FAIL")}, "rework", "rework_at"},
		{"verification: V-Build ERROR", verification, map[string]behaviour{"v-build": errd("FAIL")}, "fail", "required"},
		{"verification: V-Tests ERROR alone", verification, map[string]behaviour{"v-tests": errd("FAIL")}, "proceed", "proceed"},
		{"verification: V-Tasks ERROR alone", verification, map[string]behaviour{"v-tasks": errd("FAIL")}, "proceed", "proceed"},
		{"verification: V-Feature ERROR alone", verification, map[string]behaviour{"v-feature": errd("FAIL")}, "proceed", "proceed"},
		{"verification: two missing or ERROR", verification, map[string]behaviour{"v-tests": errd("FAIL"), "v-feature": missing}, "fail", "max_missing"},
		// Release: security required, blocking and read first; knowledge advisory.
		{"release: security missing", release, map[string]behaviour{"r-security": missing}, "fail", "required"},
		{"release: security ERROR", release, map[string]behaviour{"r-security": errd("Minor")}, "fail", "required"},
		{"release: security Blocker, others approve", release, map[string]behaviour{"r-security": nr("Blocker")}, "fail", "blocking"},
		{"release: knowledge ERROR ignored", release, map[string]behaviour{"r-knowledge": errd("Major")}, "proceed", "proceed"},
		{"release: fewer than two usable", release, map[string]behaviour{"r-quality": missing, "r-testing": missing}, "fail", "min_reviews"},
		{"release: Major", release, map[string]behaviour{"r-testing": nr("Major")}, "rework", "rework_at"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, wf, d := runCluster(t, tc.cluster, tc.behaviours)
			if d.Field("outcome") != tc.wantOutcome || d.Field("rule") != tc.wantRule {
				t.Fatalf("review_decision %s by rule %s (%s), want %s by %s", d.Field("outcome"), d.Field("rule"), d.Field("reason"), tc.wantOutcome, tc.wantRule)
			}
			var read []map[string]any
			if err := json.Unmarshal([]byte(d.Field("reviews")), &read); err != nil || len(read) != len(tc.cluster.reviewers) {
				t.Errorf("the decision lists reviews %s (%v), want all %d", d.Field("reviews"), err, len(tc.cluster.reviewers))
			}
			cl, err := s.BB.GetClaim(context.Background(), d.ClaimID)
			if err != nil {
				t.Fatal(err)
			}
			if cl.ReviewDecision == "" {
				t.Error("the claim does not record the review decision")
			}
			switch tc.wantOutcome {
			case "proceed":
				if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
					t.Errorf("workflow %s (%s), want completed", w.Status, w.Outcome)
				}
			case "rework":
				if cl.FeedbackClaimID == "" {
					t.Errorf("claim %s %q: no feedback claim after a rework decision", cl.Status, cl.TerminationReason)
				}
			case "fail":
				if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowFailed || !strings.Contains(w.Outcome, d.Field("reason")) {
					t.Errorf("workflow %s (%q), want failed with the decision's reason %q", w.Status, w.Outcome, d.Field("reason"))
				}
			}
		})
	}
}

// TestReleaseCriticalIsFlagged: "Critical" is not in the release taxonomy;
// it counts as Blocker (the worst) and the decision flags the gap.
func TestReleaseCriticalIsFlagged(t *testing.T) {
	t.Parallel()
	_, _, d := runCluster(t, release, map[string]behaviour{"r-security": nr("Critical")})
	if d.Field("outcome") != "fail" || d.Field("rule") != "blocking" || !strings.Contains(d.Field("contract_gaps"), "Critical") {
		t.Fatalf("decision %s/%s gaps %q, want fail by blocking with Critical flagged", d.Field("outcome"), d.Field("rule"), d.Field("contract_gaps"))
	}
}

// TestReworkReadsMemoriesNotPayloads: the feedback claim's tool input
// carries the merged shared memory and the reviewers' memories, and the
// reviews arrive without their payloads.
func TestReworkReadsMemoriesNotPayloads(t *testing.T) {
	t.Parallel()
	s, wf, _ := runCluster(t, critique, map[string]behaviour{"ct-security": nr("High")})
	s.WaitEvent(blackboard.EventArtefactReworked, func(e blackboard.Event) bool { return e.WorkflowID == wf }, wait)
	var feedback map[string]any
	s.Eventually(wait, "the planner's feedback input", func() bool {
		for _, in := range plannerInputs(t, s) {
			if in["claim_type"] == "feedback" {
				feedback = in
				return true
			}
		}
		return false
	})
	mem := feedback["memory"].(map[string]any)
	shared, _ := mem["shared"].(string)
	if !strings.Contains(shared, "# Operational Memory") || !strings.Contains(shared, "NEEDS_REVISION review") ||
		!strings.Contains(shared, "review_decision") && !strings.Contains(shared, "rework") {
		t.Errorf("memory.shared does not hold the merged memories and the decision:\n%s", shared)
	}
	upstream, _ := mem["upstream"].(map[string]any)
	var agents []string
	for a := range upstream {
		agents = append(agents, a)
	}
	sort.Strings(agents)
	if len(upstream) < 4 || !strings.Contains(upstream["ct-security"].(string), "# Memory: ct-security") {
		t.Errorf("memory.upstream has %v, want every reviewer's memory", agents)
	}
	for _, f := range feedback["feedback"].([]any) {
		r := f.(map[string]any)
		if r["payload"] != "" || r["payload_omitted"] != true {
			t.Errorf("feedback review %v carries its payload, want it omitted for the memory", r["id"])
		}
	}
}

func plannerInputs(t *testing.T, s *stacktest.Stack) []map[string]any {
	t.Helper()
	f, err := os.Open(filepath.Join(s.Dir, "planner-inputs.jsonl"))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var in map[string]any
		if json.Unmarshal(sc.Bytes(), &in) == nil {
			out = append(out, in)
		}
	}
	return out
}

// TestMergeAndDecisionOnceAcrossACrash kills the orchestrator between the
// merge of a review phase and the decision's step: after a restart the
// workflow has exactly one merge and one decision for that phase.
func TestMergeAndDecisionOnceAcrossACrash(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, critique.config())
	for _, r := range critique.reviewers {
		if err := os.WriteFile(filepath.Join(s.Dir, "review-"+r+".sh"), []byte(ok("Low").script()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var cubs []string
	cubs = append(cubs, "planner", "coder")
	cubs = append(cubs, critique.reviewers...)
	orch, _ := s.Up(cubs...)
	orch.Stop()
	orch.SetEnv("SETT_FAILPOINT=review-merged")
	orch.Restart()
	wf := s.PostGoal("Crash after the merge")
	if code := orch.WaitExit(wait); code != 137 {
		t.Fatalf("orchestrator exited %d, want the failpoint's 137", code)
	}
	orch.SetEnv()
	orch.Restart()
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	planClaim := s.WaitEvent(blackboard.EventReviewDecision, func(e blackboard.Event) bool { return e.WorkflowID == wf }, wait).ClaimID
	// The review phase merges before its decision; the coder's phase on
	// the same claim merges the coder's memory after it (events come in
	// stream order).
	var merges, decisions int
	for _, e := range s.Events(blackboard.EventMemoryMerged, blackboard.EventReviewDecision) {
		if e.ClaimID != planClaim {
			continue
		}
		if e.Type == blackboard.EventMemoryMerged {
			if decisions == 0 {
				merges++
			}
		} else {
			decisions++
		}
	}
	if merges != 1 || decisions != 1 {
		t.Errorf("%d merges and %d decisions for the review phase, want exactly one of each", merges, decisions)
	}
}

// TestInvalidVerdictIsAFailure: a review whose verdict breaks the
// contract becomes a ToolExecutionFailure naming the field.
func TestInvalidVerdictIsAFailure(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, output, wantField string
	}{
		{"unknown verdict", `{"artefact_type": "Review", "artefact_payload": {"verdict": "perhaps"}}`, "verdict"},
		{"severity not a string", `{"artefact_type": "Review", "artefact_payload": {"verdict": "reject", "severity": 2}}`, "severity"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := contractStack(t, tc.output)
			wf := s.PostGoal("Check the contract")
			s.WaitWorkflow(wf, wait)
			fails := stacktest.OfType(s.Artefacts(wf), "ToolExecutionFailure")
			if len(fails) != 1 || !strings.Contains(fails[0].Payload, tc.wantField) || fails[0].Metadata["failure_kind"] != "invalid_output" {
				t.Fatalf("failures %+v, want one invalid_output naming %q", fails, tc.wantField)
			}
		})
	}
}

// TestInvalidMemoryNeverBlocks: a memory that breaks the contract is
// repaired (cut, marked truncated) or dropped with a memory_warning
// event; the review is kept and the workflow completes.
func TestInvalidMemoryNeverBlocks(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, memory, wantAction string
		wantFindings             int
	}{
		{"six key findings", `{"status": "DONE", "key_findings": ["1","2","3","4","5","6"]}`, "repaired", 5},
		{"unknown memory status", `{"status": "MAYBE"}`, "dropped", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := contractStack(t, `{"artefact_type": "Review", "artefact_payload": {}, "memory": `+tc.memory+`}`)
			wf := s.PostGoal("Check the contract")
			if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
				t.Fatalf("workflow %s, want completed", w.Status)
			}
			arts := s.Artefacts(wf)
			if fails := stacktest.OfType(arts, "ToolExecutionFailure"); len(fails) != 0 {
				t.Fatalf("failures %+v, want none", fails)
			}
			reviews := stacktest.OfType(arts, "Review")
			if len(reviews) != 1 {
				t.Fatalf("%d reviews, want 1", len(reviews))
			}
			m, hasMem := agentMemoryOf(t, reviews[0])
			if hasMem != (tc.wantFindings > 0) || (hasMem && (!m.Truncated || len(m.KeyFindings) != tc.wantFindings)) {
				t.Fatalf("stored memory %q, want %d findings marked truncated", reviews[0].Memory, tc.wantFindings)
			}
			warn := s.WaitEvent(blackboard.EventMemoryWarning, func(e blackboard.Event) bool { return e.WorkflowID == wf }, wait)
			if warn.ArtefactID != reviews[0].ID || warn.Field("action") != tc.wantAction || warn.Agent != "reviewer" {
				t.Fatalf("memory_warning %+v, want action %s on the review", warn, tc.wantAction)
			}
		})
	}
}

// contractStack runs a planner and a reviewer whose tool answers output.
func contractStack(t *testing.T, output string) *stacktest.Stack {
	t.Helper()
	config := `version: "1.0"
orchestrator: {bid_timeout: 2s, lease_ttl: 3s}
agents:
  planner: {command: ["sett-writer", "--type", "Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
  reviewer: {command: ["sh", "review.sh"], bidding_strategy: review, consumes: ["Plan"], retry: {max_attempts: 1}}
`
	s := stacktest.New(t, config)
	if err := os.WriteFile(filepath.Join(s.Dir, "review.sh"), []byte("cat >/dev/null\ncat <<'EOF'\n"+output+"\nEOF\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.Up("planner", "reviewer")
	return s
}

// agentMemoryOf decodes the memory an artefact carries.
func agentMemoryOf(t *testing.T, a *blackboard.Artefact) (memory.AgentMemory, bool) {
	t.Helper()
	var m memory.AgentMemory
	if a.Memory == "" {
		return m, false
	}
	if err := json.Unmarshal([]byte(a.Memory), &m); err != nil {
		t.Fatal(err)
	}
	return m, true
}
