package integration

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/cli"
	"github.com/settdev/sett/internal/priority"
	"github.com/settdev/sett/internal/stacktest"
)

// settCLI runs `sett args...` in process against the stack's instance and
// workspace, and returns its standard output.
func settCLI(t *testing.T, s *stacktest.Stack, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	env := map[string]string{"SETT_REDIS_URL": s.Redis.URL(), "SETT_INSTANCE": s.Instance}
	app := &cli.App{In: strings.NewReader(""), Out: &out, Err: &errOut, Dir: s.Dir, Now: time.Now,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	root := cli.NewRoot(app)
	root.SetArgs(append([]string{"--no-color"}, args...))
	if err := root.ExecuteContext(t.Context()); err != nil {
		t.Fatalf("sett %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String()
}

// scoredGoal is one goal posted through `sett forage` with its flags.
type scoredGoal struct {
	id    string
	flags []string
	score int
}

// forageScored posts a goal with forage's priority flags and checks the
// score it reports against the priority package's.
func forageScored(t *testing.T, s *stacktest.Stack, w priority.Weights, text string, in priority.Input) scoredGoal {
	t.Helper()
	args := []string{"forage", "--goal", text, "-o", "json"}
	var flags []string
	if in.Priority != "" {
		flags = append(flags, "--priority", in.Priority)
	}
	if in.Deadline != "" {
		flags = append(flags, "--deadline", in.Deadline)
	}
	if in.From != "" {
		flags = append(flags, "--from", in.From)
	}
	var res struct {
		WorkflowID string `json:"workflow_id"`
		Score      int    `json:"score"`
	}
	if err := json.Unmarshal([]byte(settCLI(t, s, append(args, flags...)...)), &res); err != nil {
		t.Fatal(err)
	}
	want, err := priority.Score(in, w, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if res.Score != want {
		t.Fatalf("forage %v scored %d, want %d", flags, res.Score, want)
	}
	return scoredGoal{id: res.WorkflowID, flags: flags, score: res.Score}
}

// TestForageScoresOrderGrants is the scheduling rules' scheduling under contention
// with goals posted by `sett forage --priority --deadline --from`: with one
// slot, grants follow the scores the weights give (ties by age), and an
// urgent goal posted mid-run overtakes everything still waiting.
func TestForageScoresOrderGrants(t *testing.T) {
	t.Parallel()
	orch := "  max_concurrent_claims: 1\n  priority:\n    important_senders: [ceo@company.com, \"@legal.example\"]"
	s := stacktest.New(t, schedulingConfig(orch, "", ""))
	s.Up("worker")
	ctx := t.Context()
	w := priority.DefaultWeights()
	w.ImportantSenders = []string{"ceo@company.com", "@legal.example"}
	if _, err := s.BB.Pause(ctx, "test", "", blackboard.ControlFromCLI); err != nil {
		t.Fatal(err)
	}
	// Deadlines far from the bounds (2 h, 1 day, 1 week), so the seconds
	// the test takes cannot move a goal across one.
	now := time.Now().UTC()
	prios := []string{"high", "medium", "low", "3", ""}
	deadlines := []string{now.Add(time.Hour).Format(time.RFC3339), now.Add(12 * time.Hour).Format(time.RFC3339),
		now.Add(72 * time.Hour).Format(time.RFC3339), now.Add(30 * 24 * time.Hour).Format(time.RFC3339), ""}
	senders := []string{"ceo@company.com", "client@example.com", "Legal <counsel@legal.example>", ""}
	var goals []scoredGoal
	for i := 0; i < 30; i++ {
		in := priority.Input{Priority: prios[i%5], Deadline: deadlines[(i/5+i)%5], From: senders[i%4]}
		if sc, _ := priority.Score(in, w, now); sc >= 40 {
			in.From = "" // keep the top score for the urgent goal below
		}
		goals = append(goals, forageScored(t, s, w, fmt.Sprintf("goal %d", i), in))
	}
	waitWaiting(t, s, 30)
	// The claims carry the scores the scheduler orders by.
	for _, g := range goals {
		if wf, err := s.BB.GetWorkflow(ctx, g.id); err != nil || wf.Priority != g.score {
			t.Fatalf("workflow %s: %+v, %v; want priority %d", g.id, wf, err, g.score)
		}
	}
	want := slices.Clone(goals)
	sort.SliceStable(want, func(a, b int) bool { return want[a].score > want[b].score })
	distinct := map[int]bool{}
	for _, g := range goals {
		distinct[g.score] = true
	}
	if len(distinct) < 6 {
		t.Fatalf("only %d distinct scores: the mix does not exercise the order", len(distinct))
	}

	settCLI(t, s, "resume")
	s.Eventually(wait, "ten grants", func() bool { return len(grantOrder(t, s)) >= 10 })
	settCLI(t, s, "pause", "--reason", "post an urgent goal")
	urgent := forageScored(t, s, w, "urgent", priority.Input{Priority: "high",
		Deadline: now.Add(30 * time.Minute).Format(time.RFC3339), From: "ceo@company.com"})
	if urgent.score != 40 {
		t.Fatalf("urgent goal scored %d, want the scheduling rules' 40", urgent.score)
	}
	s.Eventually(wait, "the urgent goal to wait", func() bool {
		ws, err := s.BB.WaitingClaims(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		return slices.ContainsFunc(ws, func(w blackboard.WaitingClaim) bool {
			return w.ClaimID == blackboard.DeriveID("claim", urgent.id)
		})
	})
	before := len(grantOrder(t, s))
	settCLI(t, s, "resume")
	for _, g := range append(goals, urgent) {
		if wf := s.WaitWorkflow(g.id, wait); wf.Status != blackboard.WorkflowCompleted {
			t.Fatalf("workflow %s %s (%s)", g.id, wf.Status, wf.Outcome)
		}
	}
	got := grantOrder(t, s)
	if len(got) != 31 {
		t.Fatalf("%d grants, want 31", len(got))
	}
	if got[before] != urgent.id {
		t.Errorf("grant %d after the urgent goal arrived went to %s, want the urgent goal %s", before+1, got[before], urgent.id)
	}
	rest := slices.Delete(slices.Clone(got), before, before+1)
	var wantIDs []string
	for _, g := range want {
		wantIDs = append(wantIDs, g.id)
	}
	if !slices.Equal(rest, wantIDs) {
		t.Errorf("grant order (score#posting):\n got %v\nwant %v", scoresOf(rest, goals), scoresOf(wantIDs, goals))
	}
	// hoard shows the score on the workflow.
	if tree := settCLI(t, s, "hoard", "--workflow", urgent.id, "-o", "tree"); !strings.Contains(tree, "score 40") {
		t.Errorf("hoard tree does not show the score:\n%s", tree)
	}
}

func scoresOf(order []string, goals []scoredGoal) []string {
	var out []string
	for _, id := range order {
		i := slices.IndexFunc(goals, func(g scoredGoal) bool { return g.id == id })
		out = append(out, fmt.Sprintf("%d#%d", goals[i].score, i))
	}
	return out
}
