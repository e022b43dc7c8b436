package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/stacktest"
)

// readChannelConfig: a planner whose rework reads the omitted review
// through sett-read, and a reviewer that sends back the first Plan of a
// goal asking for it, with a memory (so its payload is omitted).
const readChannelConfig = `version: "1.0"
orchestrator:
  bid_timeout: 3s
  lease_ttl: 3s
  review_policy: {severities: [Blocker, Major, Minor], rework_at: Major, fail_at: Blocker, min_reviews: 1}
agents:
  planner: {command: [sh, planner.sh], bidding_strategy: exclusive, consumes: [GoalDefined]}
  critic: {command: [sh, critic.sh], bidding_strategy: review, consumes: [Plan]}
`

// planner.sh: a first grant writes a Plan; a feedback grant keeps its
// input, fetches the review's "findings" section and the artefact named
// in other-id (another workflow's), and writes what it got.
const readChannelPlanner = `in=$(cat)
case "$in" in
*'"claim_type":"feedback"'*)
  printf '%s' "$in" > feedback-input.json
  id=$(printf '%s' "$in" | grep -o '"feedback":\[{"id":"[^"]*"' | sed 's/.*"id":"//; s/"$//')
  sett-read "$id#findings" > fetched-section.txt 2> fetched-section.err
  sett-read "$(cat other-id)" > fetched-other.txt 2> fetched-other.err
  echo "other exit $?" >> fetched-other.err
  printf '%s\n' '{"artefact_type": "Plan", "artefact_payload": "# Plan v2\n## Eviction\nLRU"}'
  ;;
*) printf '%s\n' '{"artefact_type": "Plan", "artefact_payload": "# Plan\n## Cache\nno eviction"}' ;;
esac
`

// critic.sh: the first review of a goal asking for rework rejects, with a
// memory; every other approves.
const readChannelCritic = `in=$(cat)
case "$in" in
*'rework me'*)
  if [ ! -e rejected ]; then
    touch rejected
    echo '{"artefact_type": "Review", "artefact_payload": {"status": "NEEDS_REVISION", "severity": "Major", "findings": "the cache has no eviction policy"}, "memory": {"status": "NEEDS_REVISION", "highest_severity": "Major", "key_findings": ["no eviction"], "artifact_index": [{"path": "review", "sections": ["findings"]}]}}'
    exit 0
  fi ;;
esac
echo '{"artefact_type": "Review", "artefact_payload": {"status": "DONE", "severity": "Minor"}}'
`

// TestToolFetchesAnOmittedReviewSection: on real binaries, a rework whose
// review was omitted for its author's memory sees the review's size and
// sections in its input, fetches a section with sett-read, and is refused
// another workflow's artefact.
func TestToolFetchesAnOmittedReviewSection(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, readChannelConfig)
	for name, body := range map[string]string{"planner.sh": readChannelPlanner, "critic.sh": readChannelCritic} {
		if err := os.WriteFile(filepath.Join(s.Dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s.Up("planner", "critic")
	other := s.PostGoal("a plain cache")
	if w := s.WaitWorkflow(other, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("the other workflow %s: %s", w.Status, w.Outcome)
	}
	if err := os.WriteFile(filepath.Join(s.Dir, "other-id"), []byte(other), 0o644); err != nil {
		t.Fatal(err)
	}
	wf := s.PostGoal("a cache, rework me")
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s: %s", w.Status, w.Outcome)
	}

	var in struct {
		Feedback []struct {
			ID             string   `json:"id"`
			Payload        string   `json:"payload"`
			PayloadOmitted bool     `json:"payload_omitted"`
			PayloadBytes   int      `json:"payload_bytes"`
			Sections       []string `json:"sections"`
		} `json:"feedback"`
	}
	data, err := os.ReadFile(filepath.Join(s.Dir, "feedback-input.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &in); err != nil || len(in.Feedback) != 1 {
		t.Fatalf("feedback input: %v, %d reviews", err, len(in.Feedback))
	}
	r := in.Feedback[0]
	review, err := s.BB.GetArtefact(t.Context(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if r.Payload != "" || !r.PayloadOmitted || r.PayloadBytes != len(review.Payload) ||
		!reflect.DeepEqual(r.Sections, []string{"findings", "severity", "status"}) {
		t.Errorf("the omitted review in the input: payload %q omitted %v bytes %d (stored %d) sections %v",
			r.Payload, r.PayloadOmitted, r.PayloadBytes, len(review.Payload), r.Sections)
	}
	got := readFile(t, s.Dir, "fetched-section.txt")
	if got != "the cache has no eviction policy" {
		t.Errorf("sett-read ID#findings gave %q (stderr %q)", got, readFile(t, s.Dir, "fetched-section.err"))
	}
	if out, errText := readFile(t, s.Dir, "fetched-other.txt"), readFile(t, s.Dir, "fetched-other.err"); out != "" ||
		!strings.Contains(errText, "not found in this workflow") || !strings.Contains(errText, "other exit 1") {
		t.Errorf("sett-read of another workflow's artefact gave %q, stderr %q; want refused", out, errText)
	}
	// The channel is the run's own: its socket is gone with the tool.
	if socks, _ := filepath.Glob(filepath.Join(s.Dir, ".sett-read-*.sock")); len(socks) != 0 {
		t.Errorf("sockets left in the workspace: %v", socks)
	}
}

func readFile(t *testing.T, dir, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// longPlanConfig: a planner that writes a long Plan with a memory, a
// coder that implements it, and a tester whose input holds the Plan in
// its context chain and which fetches it with sett-read.
const longPlanConfig = `version: "1.0"
orchestrator: {bid_timeout: 3s, lease_ttl: 3s}
agents:
  planner: {command: [sh, planner.sh], bidding_strategy: exclusive, consumes: [GoalDefined]}
  coder: {command: [sh, coder.sh], bidding_strategy: exclusive, consumes: [Plan]}
  tester: {command: [sh, tester.sh], bidding_strategy: exclusive, consumes: [CodeChange]}
`

// longPlanner writes a Plan of about 15 KB (over the cub's 8 KiB
// LongPayload) and a memory standing in for it.
const longPlanner = `cat > /dev/null
p=""; i=0
while [ $i -lt 1200 ]; do p="$p step $i."; i=$((i+1)); done
printf '{"artefact_type": "Plan", "artefact_payload": "# Plan\\n%s", "memory": {"status": "DONE", "summary": "1200 steps", "artifact_index": [{"path": "plan", "sections": ["Plan"]}]}}\n' "$p"
`

// longPlanCoder keeps its input and writes a CodeChange.
const longPlanCoder = `cat > coder-input.json
printf '%s\n' '{"artefact_type": "CodeChange", "artefact_payload": "done"}'
`

// longPlanTester keeps its input, fetches the Plan of its context chain
// with sett-read, and writes a TestReport.
const longPlanTester = `in=$(cat)
printf '%s' "$in" > tester-input.json
id=$(printf '%s' "$in" | grep -o '"id":"[^"]*","logical_id":"[^"]*","version":[0-9]*,"structural_type":"[^"]*","type":"Plan"' | head -n1 | sed 's/^"id":"//; s/".*//')
sett-read "$id" > fetched-plan.txt 2> fetched-plan.err
printf '%s\n' '{"artefact_type": "TestReport", "artefact_payload": "ok", "structural_type": "Terminal"}'
`

// TestToolFetchesALongPlanLeftOutOfItsInput: on real binaries, a Plan
// over 8 KiB whose author left a memory reaches the coder whole (it is
// the coder's target), and the tester after it without its payload (its
// size and sections instead); the tester fetches it whole with sett-read.
func TestToolFetchesALongPlanLeftOutOfItsInput(t *testing.T) {
	t.Parallel()
	s := stacktest.New(t, longPlanConfig)
	for name, body := range map[string]string{"planner.sh": longPlanner, "coder.sh": longPlanCoder, "tester.sh": longPlanTester} {
		if err := os.WriteFile(filepath.Join(s.Dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s.Up("planner", "coder", "tester")
	wf := s.PostGoal("a long plan")
	if w := s.WaitWorkflow(wf, wait); w.Status != blackboard.WorkflowCompleted {
		s.DumpLogs()
		t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
	}
	plans := stacktest.OfType(s.Artefacts(wf), "Plan")
	if len(plans) != 1 || len(plans[0].Payload) <= 8<<10 {
		t.Fatalf("%d plans, want one over 8 KiB", len(plans))
	}
	plan := plans[0]
	type art struct {
		ID             string   `json:"id"`
		Payload        string   `json:"payload"`
		PayloadOmitted bool     `json:"payload_omitted"`
		PayloadBytes   int      `json:"payload_bytes"`
		Sections       []string `json:"sections"`
	}
	var coderIn struct {
		Target art `json:"target_artefact"`
	}
	readJSON(t, filepath.Join(s.Dir, "coder-input.json"), &coderIn)
	if coderIn.Target.ID != plan.ID || coderIn.Target.PayloadOmitted || coderIn.Target.Payload != plan.Payload {
		t.Errorf("the coder's target: id %s, omitted %v, %d bytes; want the whole Plan (a target is never left out)",
			coderIn.Target.ID, coderIn.Target.PayloadOmitted, len(coderIn.Target.Payload))
	}
	var testerIn struct {
		Chain []art `json:"context_chain"`
	}
	readJSON(t, filepath.Join(s.Dir, "tester-input.json"), &testerIn)
	var inChain *art
	for i := range testerIn.Chain {
		if testerIn.Chain[i].ID == plan.ID {
			inChain = &testerIn.Chain[i]
		}
	}
	if inChain == nil || !inChain.PayloadOmitted || inChain.Payload != "" || inChain.PayloadBytes != len(plan.Payload) ||
		!reflect.DeepEqual(inChain.Sections, []string{"Plan"}) {
		t.Fatalf("the Plan in the tester's context chain: %+v; want it left out, with its %d bytes and section Plan", inChain, len(plan.Payload))
	}
	fetched, _ := os.ReadFile(filepath.Join(s.Dir, "fetched-plan.txt"))
	if string(fetched) != plan.Payload {
		errOut, _ := os.ReadFile(filepath.Join(s.Dir, "fetched-plan.err"))
		t.Errorf("sett-read of the Plan gave %d bytes (%s), want its %d", len(fetched), errOut, len(plan.Payload))
	}
}

// readJSON decodes the JSON file at path into v.
func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
