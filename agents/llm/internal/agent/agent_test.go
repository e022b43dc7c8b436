package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/settdev/sett/internal/fakellm"
	"github.com/settdev/sett/internal/tool"
)

const testKey = "sk-test-abcdef-0123456789"

// fakeClock records the retry waits and moves forward by them; its
// timers fire at once, so no test waits in wall time.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	waits []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer() backoff.Timer { return &fakeTimer{c: c, ch: make(chan time.Time, 1)} }

type fakeTimer struct {
	c  *fakeClock
	ch chan time.Time
}

func (t *fakeTimer) Start(d time.Duration) {
	t.c.mu.Lock()
	t.c.now = t.c.now.Add(d)
	t.c.waits = append(t.c.waits, d)
	t.c.mu.Unlock()
	t.ch <- time.Time{}
}
func (t *fakeTimer) Stop()               {}
func (t *fakeTimer) C() <-chan time.Time { return t.ch }

// run is one run of the agent against a fake provider.
type run struct {
	fs       *fakellm.Server
	stdout   string
	stderr   string
	err      error
	waits    []time.Duration
	out      tool.Output // parsed as the cub parses it (ok runs)
	failure  tool.Output // parsed as the cub parses a failing tool's stdout
	parseErr error
}

// runAgent runs the agent with cfg (its base URLs pointed at a fakellm
// serving script) on input.
func runAgent(t *testing.T, script fakellm.Script, cfg Config, in tool.Input) run {
	t.Helper()
	fs := fakellm.New(script)
	srv := httptest.NewServer(fs)
	t.Cleanup(srv.Close)
	if cfg.Provider == ProviderAnthropic {
		cfg.AnthropicBaseURL = srv.URL
	} else {
		cfg.OpenAIBaseURL = srv.URL + "/v1"
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = time.Minute
	}
	if cfg.MaxAttempts == 0 {
		cfg.MaxAttempts = 4
	}
	if cfg.JSONMode == "" {
		cfg.JSONMode = "schema"
	}
	clock := &fakeClock{now: time.Now()}
	var stdout, stderr bytes.Buffer
	a := &Agent{Config: cfg, Stdout: &stdout, Stderr: &stderr, NowFunc: clock.Now, NewTimerFunc: clock.NewTimer}
	stdin, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	r := run{fs: fs, err: a.Run(context.Background(), bytes.NewReader(stdin))}
	r.stdout, r.stderr, r.waits = stdout.String(), stderr.String(), clock.waits
	if r.err == nil {
		r.out, r.parseErr = tool.ParseOutput(stdout.Bytes(), in.ClaimType, 0)
	} else {
		r.failure, r.parseErr = tool.ParseOutput(stdout.Bytes(), tool.ClaimTypeFeedback, 0)
	}
	if r.parseErr != nil {
		t.Fatalf("the cub would refuse this output: %v\n%s", r.parseErr, stdout.String())
	}
	return r
}

func feedbackInput() tool.Input {
	review := tool.Artefact{ID: "rev-1", Type: "Review", Version: 1, ProducedByRole: "reviewer", StructuralType: "Review",
		Payload: `{"verdict":"reject","severity":"Major","findings":["Name the files the plan changes."]}`}
	return tool.Input{
		ClaimID: "claim-7", ClaimType: tool.ClaimTypeFeedback,
		TargetArtefact: tool.Artefact{ID: "plan-1", LogicalID: "plan-1", Type: "Plan", Version: 1, ProducedByRole: "planner", Payload: "# Plan: v1\n1. Do it."},
		ContextChain: []tool.Artefact{review,
			{ID: "research-1", Type: "Research", Version: 1, ProducedByRole: "researcher", Payload: "The router lives in server/routes.go."},
			{ID: "goal-1", Type: "GoalDefined", Version: 1, ProducedByRole: "user", Payload: "Add a /health endpoint"}},
		Feedback: []tool.Artefact{review},
		Workflow: tool.Workflow{ID: "goal-1", Goal: "Add a /health endpoint", Iteration: 1},
		Memory: tool.Memory{
			Learnings: "# Agent Memory\n\n## Patterns\n- **2026-02-16T14:30:00Z** — Rejected plan for \"Invoice #99\": Never promise payment dates.",
			Handbook:  "# Company Handbook\nAlways be polite.",
			Shared:    "## Recent Decisions\n- Use net/http.",
		},
		Instance: "demo", Agent: "planner",
	}
}

func reviewInput() tool.Input {
	return tool.Input{
		ClaimID: "claim-8", ClaimType: tool.ClaimTypeReview,
		TargetArtefact: tool.Artefact{ID: "plan-2", LogicalID: "plan-1", Type: "Plan", Version: 2, ProducedByRole: "planner", Payload: "# Plan: v2\n1. Edit health.go."},
		ContextChain:   []tool.Artefact{{ID: "goal-1", Type: "GoalDefined", Version: 1, ProducedByRole: "user", Payload: "Add a /health endpoint"}},
		Workflow:       tool.Workflow{ID: "goal-1", Goal: "Add a /health endpoint"},
		Instance:       "demo", Agent: "reviewer",
	}
}

func openAIConfig(template string) Config {
	return Config{Template: template, Provider: ProviderOpenAI, Model: "gpt-test", OpenAIKey: testKey}
}

// between returns the text of s between the line "## from" and the next
// occurrence of until.
func between(t *testing.T, s, from, until string) string {
	t.Helper()
	i := strings.Index(s, "## "+from+"\n")
	if i < 0 {
		t.Fatalf("no section %q in:\n%s", from, s)
	}
	rest := s[i:]
	if j := strings.Index(rest[1:], until); until != "" && j >= 0 {
		rest = rest[:j+1]
	}
	return rest
}

func TestPromptCarriesMemoryContextAndFeedbackInTheirPlaces(t *testing.T) {
	for _, prov := range []string{ProviderOpenAI, ProviderAnthropic} {
		t.Run(prov, func(t *testing.T) {
			cfg := openAIConfig("planner")
			cfg.Provider, cfg.AnthropicKey = prov, testKey
			script := fakellm.Script{Rules: []fakellm.Rule{{Name: "planner", Match: []string{"You are the planner"},
				Answers: []string{"```markdown\n# Plan: v2\n\n1. Edit server/routes.go.\n```"}}}}
			r := runAgent(t, script, cfg, feedbackInput())
			if r.err != nil {
				t.Fatalf("%v\n%s", r.err, r.stderr)
			}
			rec := r.fs.Requests()[0]
			// the learning loop: the learnings under "## Agent Memory", next to
			// the handbook, in the instructions.
			if hb := between(t, rec.System, "Company Handbook", "## Agent Memory"); !strings.Contains(hb, "Always be polite.") {
				t.Errorf("handbook section:\n%s", hb)
			}
			if mem := between(t, rec.System, "Agent Memory", "## Answer"); !strings.Contains(mem, "Never promise payment dates.") {
				t.Errorf("agent memory section:\n%s", mem)
			}
			if ctx := between(t, rec.User, "Context", "## Shared memory"); !strings.Contains(ctx, "### Research v1 by researcher") ||
				!strings.Contains(ctx, "The router lives in server/routes.go.") {
				t.Errorf("context section:\n%s", ctx)
			}
			if sh := between(t, rec.User, "Shared memory of this workflow", "## Your previous plan"); !strings.Contains(sh, "Use net/http.") {
				t.Errorf("shared memory section:\n%s", sh)
			}
			if prev := between(t, rec.User, "Your previous plan (version 1)", "## Reviews to address"); !strings.Contains(prev, "1. Do it.") {
				t.Errorf("previous version:\n%s", prev)
			}
			if fb := between(t, rec.User, "Reviews to address", "Write version 2"); !strings.Contains(fb, "Verdict: reject (Major)\n- Name the files the plan changes.") {
				t.Errorf("feedback section:\n%s", fb)
			}
			if rec.Model != "gpt-test" || !rec.HasKey || rec.ResponseFormat != "" {
				t.Errorf("record = %+v", rec)
			}
			// The answer: the rework keeps its type, so none is given.
			if r.out.ArtefactType != "" || r.out.ArtefactPayload != "# Plan: v2\n\n1. Edit server/routes.go." || r.out.Summary != "Plan: v2" {
				t.Errorf("out = %+v", r.out)
			}
			if r.out.Usage == nil || r.out.Usage.Model != "gpt-test" || r.out.Usage.InputTokens <= 0 || r.out.Usage.OutputTokens <= 0 {
				t.Errorf("usage = %+v", r.out.Usage)
			}
		})
	}
}

func TestReviewerVerdictIsThePayload(t *testing.T) {
	script := fakellm.Script{Rules: []fakellm.Rule{{Name: "rev", Match: []string{"You are a reviewer", "## Work to review: Plan v2"},
		Answers: []string{"Here is my review.\n```json\n{\"verdict\": \"reject\", \"severity\": \"major\", \"findings\": [\"Add a test.\"]}\n```\nThanks!"}}}}
	r := runAgent(t, script, openAIConfig("reviewer"), reviewInput())
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.out.ArtefactType != "Review" || r.out.ArtefactPayload != `{"verdict":"reject","severity":"Major","findings":["Add a test."]}` ||
		r.out.Summary != "reject (Major): Add a test." {
		t.Errorf("out = %+v", r.out)
	}
	if rec := r.fs.Requests()[0]; rec.ResponseFormat != "json_schema" {
		t.Errorf("the reviewer asks for Structured Outputs, got response_format %q", rec.ResponseFormat)
	}
}

func TestRateLimitThenAnswerHonoursRetryAfter(t *testing.T) {
	script := fakellm.Script{
		Rules:  []fakellm.Rule{{Name: "rev", Answers: []string{`{"verdict":"approve","severity":"Minor","findings":[]}`}}},
		Faults: []fakellm.Fault{{Status: 429, RetryAfter: "7", Times: 1}},
	}
	r := runAgent(t, script, openAIConfig("reviewer"), reviewInput())
	if r.err != nil {
		t.Fatal(r.err)
	}
	if lines := strings.Split(strings.TrimSpace(r.stdout), "\n"); len(lines) != 1 {
		t.Errorf("stdout holds %d lines: one answer only", len(lines))
	}
	if r.out.ArtefactPayload != `{"verdict":"approve","severity":"Minor","findings":[]}` {
		t.Errorf("out = %+v", r.out)
	}
	if len(r.waits) != 1 || r.waits[0] != 7*time.Second {
		t.Errorf("waits = %v, want [7s] (Retry-After)", r.waits)
	}
	if recs := r.fs.Requests(); len(recs) != 2 || recs[0].Status != 429 || recs[1].Status != 200 {
		t.Errorf("requests = %d", len(recs))
	}
	if !strings.Contains(r.stderr, "429 Too Many Requests") || !strings.Contains(r.stderr, "retrying in 7s") {
		t.Errorf("stderr = %s", r.stderr)
	}
}

func TestRefusedKeyIsPermanentAndNamesTheVariable(t *testing.T) {
	for _, tc := range []struct{ provider, keyVar string }{
		{ProviderOpenAI, EnvOpenAIKey}, {ProviderAnthropic, EnvAnthropicKey},
	} {
		t.Run(tc.provider, func(t *testing.T) {
			cfg := openAIConfig("reviewer")
			cfg.Provider, cfg.AnthropicKey = tc.provider, testKey
			r := runAgent(t, fakellm.Script{APIKey: "the-only-valid-key", Rules: []fakellm.Rule{{Name: "x", Answers: []string{"{}"}}}}, cfg, reviewInput())
			if r.err == nil {
				t.Fatal("a refused key succeeded")
			}
			f := r.failure
			if f.Retryable == nil || *f.Retryable || !strings.Contains(f.Error, "401 Unauthorized") ||
				!strings.Contains(f.Error, "set "+tc.keyVar+" to a valid key") {
				t.Errorf("failure = %+v", f)
			}
			if strings.Contains(r.stdout+r.stderr, testKey) {
				t.Error("the key was printed")
			}
			if n := len(r.fs.Requests()); n != 1 {
				t.Errorf("%d requests: a refused key is not retried", n)
			}
		})
	}
}

func TestMissingKeyNamesTheVariable(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Template: "planner", Provider: ProviderOpenAI, Model: "m", Timeout: time.Minute}, "OPENAI_API_KEY is not set"},
		{Config{Template: "planner", Provider: ProviderAnthropic, Model: "m", Timeout: time.Minute}, "ANTHROPIC_API_KEY is not set"},
	} {
		var stdout bytes.Buffer
		// No base URL: the public API, which needs a key; the check comes
		// before any request.
		a := &Agent{Config: tc.cfg, Stdout: &stdout}
		in, _ := json.Marshal(reviewInput())
		if err := a.Run(context.Background(), bytes.NewReader(in)); err == nil {
			t.Fatal("ran without a key")
		}
		f, err := tool.ParseOutput(stdout.Bytes(), tool.ClaimTypeFeedback, 0)
		if err != nil || f.Retryable == nil || *f.Retryable || !strings.Contains(f.Error, tc.want) {
			t.Errorf("failure = %+v, %v", f, err)
		}
	}
}

func TestUnparseableAnswerFailsQuotingIt(t *testing.T) {
	script := fakellm.Script{Rules: []fakellm.Rule{{Name: "rev", Answers: []string{"Looks fine to me, ship it!"}}}}
	r := runAgent(t, script, openAIConfig("reviewer"), reviewInput())
	if r.err == nil {
		t.Fatal("an answer without a verdict succeeded")
	}
	f := r.failure
	if f.Retryable == nil || *f.Retryable || !strings.Contains(f.Error, `the model answered: "Looks fine to me, ship it!"`) {
		t.Errorf("failure = %+v", f)
	}
	if f.Usage == nil || f.Usage.OutputTokens == 0 {
		t.Errorf("the tokens spent are reported on failure too: %+v", f.Usage)
	}
}

func TestLearnerAnswersOneLearning(t *testing.T) {
	in := reviewInput()
	in.ClaimType = tool.ClaimTypeLearn
	in.Feedback = []tool.Artefact{{ID: "h", Type: "Review", ProducedByRole: "human", Payload: "No file names."}}
	in.Memory.Learnings = "# Agent Memory\n\n## Patterns\n"
	script := fakellm.Script{Rules: []fakellm.Rule{{Name: "learner", Match: []string{"You are reviewing a rejected plan", "No file names."},
		Answers: []string{"- Learning: Name every file a plan changes.\n"}}}}
	r := runAgent(t, script, openAIConfig("learner"), in)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.out.ArtefactType != "Learning" || r.out.ArtefactPayload != "Name every file a plan changes." {
		t.Errorf("out = %+v", r.out)
	}
	if rec := r.fs.Requests()[0]; !strings.Contains(rec.User, "## Current Agent Memory\n\n# Agent Memory") {
		t.Errorf("the current memory is not in the prompt:\n%s", rec.User)
	}
}

func TestOutageGivesUpRetryable(t *testing.T) {
	script := fakellm.Script{Rules: []fakellm.Rule{{Name: "x", Answers: []string{"x"}}}, Faults: []fakellm.Fault{{Status: 503}}}
	cfg := openAIConfig("planner")
	cfg.MaxAttempts = 3
	in := reviewInput()
	in.ClaimType = tool.ClaimTypeExclusive
	r := runAgent(t, script, cfg, in)
	if r.err == nil {
		t.Fatal("succeeded")
	}
	if f := r.failure; f.Retryable == nil || !*f.Retryable || !strings.Contains(f.Error, "gave up after 3 attempt(s)") {
		t.Errorf("failure = %+v", f)
	}
	if len(r.waits) != 2 {
		t.Errorf("waits = %v", r.waits)
	}
}

func TestModelNotFoundNamesTheSettings(t *testing.T) {
	script := fakellm.Script{Faults: []fakellm.Fault{{Status: 404, Message: "model 'gpt-test' not found"}}}
	r := runAgent(t, script, openAIConfig("planner"), feedbackInput())
	if f := r.failure; r.err == nil || *f.Retryable || !strings.Contains(f.Error, `check the model name (LLM_MODEL="gpt-test")`) ||
		!strings.Contains(f.Error, "OPENAI_BASE_URL=http://") {
		t.Errorf("failure = %+v", r.failure)
	}
}

func TestReviewerSeesTheCommitDiff(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("these tests need git")
	}
	ws := t.TempDir()
	gitIn := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", ws, "-c", "user.name=t", "-c", "user.email=t@x"}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	gitIn("init", "-q")
	if err := os.WriteFile(ws+"/health.go", []byte("package main\n// health answers 200\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitIn("add", "health.go")
	gitIn("commit", "-q", "-m", "add health")
	hash := gitIn("rev-parse", "HEAD")

	in := reviewInput()
	in.TargetArtefact = tool.Artefact{ID: "cc-1", Type: "CodeCommit", Version: 1, ProducedByRole: "coder", Payload: hash}
	cfg := openAIConfig("reviewer")
	cfg.Workspace = ws
	script := fakellm.Script{Rules: []fakellm.Rule{{Name: "rev", Answers: []string{`{"verdict":"approve","severity":"Minor","findings":[]}`}}}}
	r := runAgent(t, script, cfg, in)
	if r.err != nil {
		t.Fatal(r.err)
	}
	user := r.fs.Requests()[0].User
	if !strings.Contains(user, "Commit "+hash+":") || !strings.Contains(user, "+// health answers 200") {
		t.Errorf("the diff is not in the prompt:\n%s", user)
	}
}

func TestParseConfig(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	c, err := ParseConfig([]string{"--template", "reviewer"}, env(map[string]string{
		EnvModel: "claude-x", EnvAnthropicKey: "k", EnvTimeout: "2m", EnvMaxTokens: "100", EnvTemperature: "0.2"}), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Provider != ProviderAnthropic || c.Model != "claude-x" || c.Timeout != 2*time.Minute || c.MaxTokens != 100 || *c.Temperature != 0.2 ||
		c.MaxAttempts != 8 || c.JSONMode != "schema" {
		t.Errorf("config = %+v", c)
	}
	// Flags beat the environment; OPENAI_* makes openai the default.
	c, err = ParseConfig([]string{"--model", "flag-model"}, env(map[string]string{EnvTemplate: "planner", EnvModel: "env-model",
		EnvAnthropicKey: "k", EnvOpenAIBaseURL: "http://ollama:11434/v1"}), &bytes.Buffer{})
	if err != nil || c.Model != "flag-model" || c.Provider != ProviderOpenAI || c.Timeout != DefaultTimeout {
		t.Errorf("config = %+v, %v", c, err)
	}
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want string
	}{
		{nil, map[string]string{EnvModel: "m"}, "--template (LLM_TEMPLATE): not set"},
		{[]string{"--template", "planner"}, nil, "--model (LLM_MODEL): not set"},
		{[]string{"--template", "planner", "--model", "m", "--provider", "gemini"}, nil, `"gemini" is not a provider`},
		{[]string{"--template", "planner", "--model", "m"}, map[string]string{EnvTimeout: "soon"}, `--timeout (LLM_TIMEOUT): "soon"`},
		{[]string{"--template", "planner", "--model", "m", "--format", "yaml"}, nil, `"yaml" is not a format`},
		{[]string{"--template", "planner", "--model", "m", "extra"}, nil, "unexpected arguments"},
		{[]string{"--template", "planner", "--model", "m", "--max-attempts", "0"}, nil, "--max-attempts"},
	} {
		_, err := ParseConfig(tc.args, env(tc.env), &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseConfig(%v, %v) = %v, want %q", tc.args, tc.env, err, tc.want)
		}
	}
}
