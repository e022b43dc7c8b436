package integration

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/stacktest"
	"github.com/settdev/sett/pkg/blackboard"
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
