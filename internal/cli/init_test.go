package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/scaffold"
	"github.com/settdev/sett/internal/tool"
)

func TestInitWritesAConfigThatLoadsAndAWorkingExampleTool(t *testing.T) {
	dir := t.TempDir()
	out, _, err := runLifecycle(t, dir, nil, nil, "init")
	if err != nil {
		t.Fatalf("sett init: %v", err)
	}
	if !strings.Contains(out, "sett up --runtime local") || !strings.Contains(out, "added .sett/ to .gitignore") {
		t.Errorf("output:\n%s", out)
	}

	cfg, warnings, err := config.Load(filepath.Join(dir, "sett.yml"))
	if err != nil {
		t.Fatalf("the scaffolded sett.yml does not load: %v", err)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings: %v", warnings)
	}
	writer, reviewer := cfg.Agents["writer"], cfg.Agents["reviewer"]
	if strings.Join(writer.Command, " ") != "sett-writer --type Plan" || writer.Image != "sett-example-writer:local" {
		t.Errorf("writer = %+v", writer)
	}
	if strings.Join(reviewer.Command, " ") != "sett-reviewer" || reviewer.Image != "sett-example-reviewer:local" || reviewer.BiddingStrategy != config.BidReview {
		t.Errorf("reviewer = %+v", reviewer)
	}

	// The commented-out hello agent is valid once uncommented.
	b, err := os.ReadFile(filepath.Join(dir, "sett.yml"))
	if err != nil {
		t.Fatal(err)
	}
	uncommented := strings.NewReplacer("  # hello:", "  hello:", "  #   ", "    ").Replace(string(b))
	cfg, _, err = config.Parse([]byte(uncommented), "sett.yml")
	if err != nil {
		t.Fatalf("sett.yml with hello uncommented: %v", err)
	}
	if got := strings.Join(cfg.Agents["hello"].Command, " "); got != "sh agents/hello/hello.sh" {
		t.Errorf("hello command = %q", got)
	}

	// The hello tool, run as the cub would (in the workspace), prints
	// output the cub accepts.
	script := filepath.Join(dir, "agents", "hello", "hello.sh")
	if st, err := os.Stat(script); err != nil || st.Mode().Perm()&0o111 == 0 {
		t.Fatalf("hello.sh is not executable: %v", err)
	}
	input, err := json.Marshal(tool.Input{ClaimID: "c1", ClaimType: tool.ClaimTypeClaim, Instance: "demo", Agent: "hello",
		TargetArtefact: tool.Artefact{ID: "a1", Type: "Plan", Payload: "step 1"}})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), "sh", "agents/hello/hello.sh")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "SETT_AGENT=hello", "SETT_CLAIM_ID=c1"}
	cmd.Stdin = bytes.NewReader(input)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("hello.sh: %v\n%s", err, stderr.String())
	}
	got, err := tool.ParseOutput(stdout.Bytes(), tool.ClaimTypeClaim, 1<<20)
	if err != nil {
		t.Fatalf("hello.sh output is not valid tool output: %v\n%s", err, stdout.String())
	}
	if got.ArtefactType != "Greeting" || got.Summary == "" || !strings.Contains(got.ArtefactPayload, "Hello from hello") {
		t.Errorf("hello.sh output = %+v", got)
	}
	if !strings.Contains(stderr.String(), "claim c1") {
		t.Errorf("hello.sh did not log to stderr: %q", stderr.String())
	}
}

func TestInitNeverOverwritesWithoutForce(t *testing.T) {
	dir := t.TempDir()
	mine := []byte("version: \"1.0\" # mine\n")
	if err := os.WriteFile(filepath.Join(dir, "sett.yml"), mine, 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := runLifecycle(t, dir, nil, nil, "init")
	if !errors.Is(err, scaffold.ErrExists) || !strings.Contains(err.Error(), "sett.yml") || !strings.Contains(err.Error(), "--force") {
		t.Fatalf("err = %v, want ErrExists naming sett.yml and --force", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sett.yml")); !bytes.Equal(b, mine) {
		t.Error("sett.yml was changed")
	}
	if _, err := os.Stat(filepath.Join(dir, "agents")); !errors.Is(err, os.ErrNotExist) {
		t.Error("init wrote some files although it refused")
	}

	if _, _, err := runLifecycle(t, dir, nil, nil, "init", "--force"); err != nil {
		t.Fatalf("init --force: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "sett.yml")); bytes.Equal(b, mine) {
		t.Error("--force left sett.yml as it was")
	}
	// A second init --force adds no second .gitignore entry.
	if _, _, err := runLifecycle(t, dir, nil, nil, "init", "--force"); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if strings.Count(string(b), ".sett/") != 1 {
		t.Errorf(".gitignore = %q, want one .sett/ entry", b)
	}
}

// TestInitCodingTemplate scaffolds the coding pipeline: a sett.yml that
// loads, with planner, reviewer, coder and learner wired as the template
// says and plans gated on a human approval.
func TestInitCodingTemplate(t *testing.T) {
	dir := t.TempDir()
	out, _, err := runLifecycle(t, dir, nil, nil, "init", "--template", "coding")
	if err != nil {
		t.Fatalf("sett init --template coding: %v", err)
	}
	if !strings.Contains(out, "sett approve PLAN") || !strings.Contains(out, "agents/README.md") {
		t.Errorf("output:\n%s", out)
	}
	cfg, warnings, err := config.Load(filepath.Join(dir, "sett.yml"))
	if err != nil {
		t.Fatalf("the coding sett.yml does not load: %v", err)
	}
	if len(warnings) > 0 {
		t.Errorf("the coding sett.yml warns on every `sett up`: %q", warnings)
	}
	want := map[string]string{
		"planner":  "sett-agent-llm --template planner",
		"reviewer": "sett-agent-llm --template reviewer",
		"coder":    "sett-coder",
		"learner":  "sett-agent-llm --template learner",
	}
	for name, cmd := range want {
		a, ok := cfg.Agents[name]
		if !ok || strings.Join(a.Command, " ") != cmd {
			t.Errorf("agent %s = %+v, want command %q", name, a, cmd)
		}
	}
	if cfg.Agents["reviewer"].BiddingStrategy != config.BidReview || !strings.Contains(strings.Join(cfg.Agents["reviewer"].Consumes, ","), "CodeCommit") {
		t.Errorf("reviewer = %+v, want a reviewer of plans and commits", cfg.Agents["reviewer"])
	}
	if !cfg.Approvals.Gates("Plan", "planner") {
		t.Errorf("plans are not gated on a human approval: %+v", cfg.Approvals)
	}
	if _, err := os.Stat(filepath.Join(dir, "agents", "README.md")); err != nil {
		t.Errorf("agents/README.md: %v", err)
	}
	if _, _, err := runLifecycle(t, t.TempDir(), nil, nil, "init", "--template", "nope"); ExitCode(err) != ExitUsage ||
		!strings.Contains(err.Error(), `unknown template "nope": use one of coding, default`) {
		t.Errorf("unknown template: exit %d, %v", ExitCode(err), err)
	}
}
