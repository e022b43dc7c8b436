package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/settdev/sett/internal/fakellm"
	"github.com/settdev/sett/internal/tool"
)

// TestFakeProviderAnswersInProcess runs the learner the way `sett init
// --vault` configures it without a model (LLM_PROVIDER=fake, nothing
// else): no server, no key, the demo script's learning for a rejection
// that came without a reason.
func TestFakeProviderAnswersInProcess(t *testing.T) {
	env := map[string]string{EnvProvider: ProviderFake}
	cfg, err := ParseConfig([]string{"--template", "learner"}, func(k string) string { return env[k] }, &bytes.Buffer{})
	if err != nil {
		t.Fatalf("ParseConfig with LLM_PROVIDER=fake alone: %v", err)
	}
	if cfg.Model == "" {
		t.Fatal("the fake provider has no default model")
	}
	in := reviewInput()
	in.ClaimType = tool.ClaimTypeLearn
	in.Feedback = []tool.Artefact{{ID: "h", Type: "HumanReview", ProducedByRole: "human", Payload: ""}}
	stdin, _ := json.Marshal(in)
	var stdout, stderr bytes.Buffer
	a := &Agent{Config: cfg, Stdout: &stdout, Stderr: &stderr}
	if err := a.Run(context.Background(), bytes.NewReader(stdin)); err != nil {
		t.Fatalf("the fake learner failed: %v\n%s", err, stderr.String())
	}
	out, err := tool.ParseOutput(stdout.Bytes(), in.ClaimType, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := fakellm.DemoScript().Rules[4].Answers[0]
	if out.ArtefactType != "Learning" || out.ArtefactPayload != want {
		t.Errorf("out = %+v, want the demo learning %q", out, want)
	}
}
