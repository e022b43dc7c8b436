package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcnetwork "github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/fakellm"
)

// llmPipeline is a planner and a reviewer, both sett-agent-llm, asking the
// fake provider (sett-fake-llm on the instance's network as "fakellm").
// Its demo script makes the reviewer reject the first plan and approve the
// rework.
const llmPipeline = `version: "1.0"
orchestrator:
  bid_timeout: 3s
  lease_ttl: 6s
agents:
  planner:
    image: sett-agent-llm:local
    command: ["sett-agent-llm", "--template", "planner"]
    bidding_strategy: exclusive
    consumes: ["GoalDefined"]
    timeout: 2m
    environment:
      OPENAI_BASE_URL: http://fakellm:8080/v1
      OPENAI_API_KEY: sk-e2e-fake-key-0001
      LLM_MODEL: fake-gpt
      LLM_TIMEOUT: 90s
  reviewer:
    image: sett-agent-llm:local
    command: ["sett-agent-llm", "--template", "reviewer"]
    bidding_strategy: review
    consumes: ["Plan"]
    timeout: 2m
    environment:
      OPENAI_BASE_URL: http://fakellm:8080/v1
      OPENAI_API_KEY: sk-e2e-fake-key-0001
      LLM_MODEL: fake-gpt
      LLM_TIMEOUT: 90s
`

// The LLM agent in containers against the fake provider: a reviewer's
// structured verdict drives the feedback loop (Plan v1 rejected, v2
// approved), a 429 before the first plan costs a retry but no extra
// artefact, and every model artefact carries its token usage in metadata.
func TestLLMAgentsThroughContainers(t *testing.T) {
	t.Parallel()
	h := setup(t)
	ctx := context.Background()
	for _, img := range []string{"sett-agent-llm:local", "sett-fake-llm:local"} {
		if _, err := h.cli.ImageInspect(ctx, img); err != nil {
			t.Fatalf("image %s is missing: run `make images` (or `make test-e2e`, which builds it): %v", img, err)
		}
	}
	s := newStack(t, h, llmPipeline)
	s.mustUp()

	// The fake provider joins the instance's network under the name the
	// agents' OPENAI_BASE_URL uses. It is removed before the stack (LIFO
	// cleanups), so the network can go.
	fake, err := testcontainers.Run(ctx, "sett-fake-llm:local",
		testcontainers.WithCmd("--addr", ":8080", "--api-key", "sk-e2e-fake-key-0001",
			"--faults", `[{"status":429,"retry_after":"1","times":1,"match":["You are the planner"]}]`),
		tcnetwork.WithNetworkName([]string{"fakellm"}, "sett-"+s.name),
		testcontainers.WithExposedPorts("8080/tcp"),
		// Its log, not an HTTP probe: testcontainers' host guess is wrong
		// when the tests run inside a container (see TestRedisImage).
		testcontainers.WithWaitStrategy(wait.ForLog("sett-fake-llm: listening on").WithStartupTimeout(time.Minute)))
	testcontainers.CleanupContainer(t, fake)
	if err != nil {
		t.Fatal(err)
	}
	port, err := fake.MappedPort(ctx, "8080/tcp")
	if err != nil {
		t.Fatal(err)
	}
	// As in TestRedisImage: the daemon's loopback, not testcontainers'
	// host guess.
	fakeURL := "http://127.0.0.1:" + port.Port()

	wf := s.postGoal("Add a /health endpoint")
	w := s.waitWorkflow(wf, 3*time.Minute)
	arts := s.artefacts(wf)
	if w.Status != blackboard.WorkflowCompleted {
		t.Fatalf("workflow %s: %s (%s), want completed; artefacts %v", wf, w.Status, w.Outcome, types(arts))
	}
	m := byType(arts)
	if f := m["ToolExecutionFailure"]; len(f) > 0 {
		t.Errorf("failures: %s", f[0].Payload)
	}
	plans := m["Plan"]
	if len(plans) != 2 || plans[0].Version != 1 || plans[1].Version != 2 || plans[1].LogicalID != plans[0].LogicalID {
		t.Fatalf("plans = %v, want v1 and v2 of one thread (all: %v)", types(plans), types(arts))
	}
	if !strings.HasPrefix(plans[0].Payload, "# Plan: add a /health endpoint") || !strings.Contains(plans[1].Payload, "health_test.go") {
		t.Errorf("plans:\nv1: %s\nv2: %s", plans[0].Payload, plans[1].Payload)
	}
	reviews := m["Review"]
	if len(reviews) != 2 {
		t.Fatalf("%d reviews, want 2 (all: %v)", len(reviews), types(arts))
	}
	verdicts := map[string]string{}
	for _, r := range reviews {
		var v struct {
			Verdict  string   `json:"verdict"`
			Severity string   `json:"severity"`
			Findings []string `json:"findings"`
		}
		if err := json.Unmarshal([]byte(r.Payload), &v); err != nil {
			t.Fatalf("review payload is not the verdict JSON: %q", r.Payload)
		}
		target := ""
		for _, p := range plans {
			if len(r.SourceArtefacts) > 0 && r.SourceArtefacts[0] == p.ID {
				target = fmt.Sprintf("v%d", p.Version)
			}
		}
		verdicts[target] = v.Verdict + "/" + v.Severity
		if v.Verdict == "reject" && len(v.Findings) == 0 {
			t.Errorf("a rejection without findings: %s", r.Payload)
		}
	}
	if verdicts["v1"] != "reject/Major" || verdicts["v2"] != "approve/Minor" {
		t.Errorf("verdicts = %v, want v1 reject/Major and v2 approve/Minor", verdicts)
	}
	for _, a := range append(plans, reviews...) {
		if a.Metadata["model"] != "fake-gpt" || a.Metadata["input_tokens"] == "" || a.Metadata["input_tokens"] == "0" || a.Metadata["output_tokens"] == "" {
			t.Errorf("%s v%d by %s: metadata %v lacks the usage", a.Type, a.Version, a.ProducedByRole, a.Metadata)
		}
	}

	// What the provider saw: the 429, then each prompt once.
	resp, err := http.Get(fakeURL + "/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var recs []fakellm.Record
	if err := json.NewDecoder(resp.Body).Decode(&recs); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, fmt.Sprintf("%s:%d", r.Rule, r.Status))
		if !r.HasKey || r.Model != "fake-gpt" {
			t.Errorf("request %d: key %v, model %q", r.Seq, r.HasKey, r.Model)
		}
	}
	if want := ":429 planner:200 reviewer-plan:200 planner-rework:200 reviewer-plan:200"; strings.Join(got, " ") != want {
		t.Errorf("requests = %s, want %s", strings.Join(got, " "), want)
	}
	if len(recs) == 5 && !strings.Contains(recs[3].User, "## Reviews to address") {
		t.Errorf("the rework prompt lacks the review:\n%s", recs[3].User)
	}
}
