package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/settdev/sett/agents/internal/prompt"
	"github.com/settdev/sett/agents/llm/internal/answer"
	"github.com/settdev/sett/agents/llm/internal/provider"
	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/readchannel"
	"github.com/settdev/sett/internal/tool"
	toolio "github.com/settdev/sett/pkg/tool"
)

// Agent runs the LLM tool once. Config is required; the other fields may
// stay zero (real clock, real timers, the SDKs' HTTP clients).
type Agent struct {
	Config Config
	// Stdout receives the one answer or failure; Stderr the log lines.
	Stdout, Stderr io.Writer
	// ReadSocket is the cub's read channel (SETT_READ_SOCKET), where the
	// payloads left out of the input are fetched; "" for none.
	ReadSocket string
	// NowFunc and NewTimerFunc replace the clock and the retry timers (tests).
	NowFunc      func() time.Time
	NewTimerFunc func() backoff.Timer
	// HTTPClient replaces the SDKs' HTTP clients (tests).
	HTTPClient *http.Client
	// Provider replaces the provider the Config names (tests).
	Provider provider.Provider

	red *toolio.Redactor
}

// verdictSchema is the JSON Schema of the verdict, sent as
// Structured Outputs where the server supports them.
var verdictSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"verdict":  map[string]any{"type": "string", "enum": []string{"approve", "reject"}},
		"severity": map[string]any{"type": "string", "enum": []string{"Blocker", "Major", "Minor"}},
		"findings": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
	},
	"required":             []string{"verdict", "severity", "findings"},
	"additionalProperties": false,
}

// Run reads the tool input from stdin, asks the model and prints the answer
// or the failure on Stdout. It returns nil when it printed an answer, the
// failure otherwise (already printed; the caller only sets the exit code).
func (a *Agent) Run(ctx context.Context, stdin io.Reader) error {
	now := a.NowFunc
	if now == nil {
		now = time.Now
	}
	start := now()
	a.red = toolio.NewRedactor(a.Config.OpenAIKey, a.Config.AnthropicKey)
	usage, err := a.run(ctx, stdin, start, now)
	if err != nil {
		if wErr := toolio.WriteFailure(a.Stdout, err, usage, a.red); wErr != nil {
			return errors.Join(err, wErr)
		}
		a.logf("failed: %v", err)
	}
	return err
}

// run does the work; usage is what the model calls cost, also on failure.
func (a *Agent) run(ctx context.Context, stdin io.Reader, start time.Time, now func() time.Time) (*tool.Usage, error) {
	c := a.Config
	in, err := toolio.ReadInput(stdin)
	if err != nil {
		return nil, err
	}
	if err := toolio.FetchOmitted(&in, a.ReadSocket); err != nil {
		a.logf("some long artefacts left out of the input could not be fetched; the prompt notes it: %v", err)
	}
	tpl, err := prompt.Load(c.Template, c.TemplateDir)
	if err != nil {
		return nil, toolio.Permanent("%v (--template %s)", err, EnvTemplate)
	}
	artefactType, format := tpl.Role.ArtefactType, tpl.Role.Format
	if c.ArtefactType != "" {
		artefactType = c.ArtefactType
	}
	if c.Format != "" {
		format = c.Format
	}
	if format == "" {
		format = prompt.FormatText
	}
	if artefactType == "" && in.ClaimType != tool.ClaimTypeFeedback {
		return nil, toolio.Permanent("the template %s is not a shipped role, so its artefact type is unknown: set --artefact-type (%s)", c.Template, EnvArtefactType)
	}
	var commit *prompt.Commit
	if in.TargetArtefact.Type == "CodeCommit" {
		commit = commitView(ctx, c.Workspace, in.TargetArtefact.Payload)
	}
	p, err := tpl.Render(prompt.NewData(in, commit))
	if err != nil {
		return nil, toolio.Permanent("%v", err)
	}
	if err := c.checkKey(); err != nil {
		return nil, toolio.Permanent("%v", err)
	}

	prov := a.Provider
	if prov == nil {
		prov = a.newProvider(now)
	}
	r := &provider.Retrier{
		Deadline: start.Add(c.Timeout), MaxAttempts: c.MaxAttempts, NowFunc: now, NewTimerFunc: a.NewTimerFunc,
		NotifyFunc: func(err error, wait time.Duration) {
			a.logf("%v; retrying in %s", err, wait.Round(time.Millisecond))
		},
	}
	req := provider.Request{Model: c.Model, System: p.System, User: p.User, MaxTokens: c.MaxTokens,
		Temperature: c.Temperature, JSON: format.Structured()}
	if format == prompt.FormatVerdict {
		req.Schema, req.SchemaName = verdictSchema, "review_verdict"
	}
	a.logf("%s claim %s on %s v%d: template %s (%s), asking %s model %s", in.ClaimType, in.ClaimID,
		in.TargetArtefact.Type, in.TargetArtefact.Version, c.Template, tpl.Source, prov.Name(), c.Model)
	resp, err := r.Complete(ctx, prov, req)
	if err != nil {
		return nil, a.callFailure(err)
	}
	usage := &tool.Usage{Model: resp.Model, InputTokens: resp.InputTokens, OutputTokens: resp.OutputTokens}
	switch resp.Stop {
	case provider.StopLength:
		return usage, toolio.Permanent("the answer was cut at the token limit (%d output tokens): raise --max-tokens (%s); the model answered: %s",
			resp.OutputTokens, EnvMaxTokens, quoteTail(resp.Text))
	case provider.StopRefusal:
		return usage, toolio.Permanent("the model refused to answer: %s", quoteTail(resp.Text))
	}

	out, err := shape(format, artefactType, resp.Text)
	if err != nil {
		return usage, toolio.Permanent("%v", err)
	}
	if in.ClaimType == tool.ClaimTypeFeedback {
		// The rework keeps the type of the version it replaces.
		out.ArtefactType = ""
	}
	if format != prompt.FormatLearning {
		out.Memory = memoryOf(artefactType, in, out)
	}
	out.Usage = usage
	a.logf("answered %s in %d attempt(s), %s: %d input + %d output tokens (%s)", out.ArtefactType, resp.Attempts,
		now().Sub(start).Round(time.Millisecond), usage.InputTokens, usage.OutputTokens, usage.Model)
	return usage, toolio.WriteAnswer(a.Stdout, out)
}

// maxIndexSections bounds the sections an answer's memory indexes (the
// memory must fit 30 rendered lines).
const maxIndexSections = 8

// memoryOf is the agent memory returned with an answer (issue 28, the
// memory contract): a verdict's status (DONE for approve, NEEDS_REVISION
// for reject), its first findings and severity; a text or JSON answer's
// summary and an artifact index entry pointing at its sections (Markdown
// headings, JSON keys), which a downstream tool can fetch with sett-read.
func memoryOf(artefactType string, in tool.Input, out toolio.Answer) *memory.AgentMemory {
	m := &memory.AgentMemory{Status: memory.StatusDone, Summary: toolio.MemoryText(out.Summary)}
	if v, ok := out.ArtefactPayload.(answer.Verdict); ok {
		if v.Verdict == "reject" {
			m.Status = memory.StatusNeedsRevision
		}
		m.HighestSeverity = v.Severity
		for _, f := range v.Findings {
			if len(m.KeyFindings) == memory.MaxKeyFindings {
				break
			}
			if f = toolio.MemoryText(f); f != "" {
				m.KeyFindings = append(m.KeyFindings, f)
			}
		}
		return m
	}
	if artefactType == "" {
		artefactType = in.TargetArtefact.Type
	}
	entry := memory.ArtifactEntry{Path: artefactType, Note: "this answer"}
	var payload string
	switch p := out.ArtefactPayload.(type) {
	case string:
		payload = p
	case json.RawMessage:
		payload = string(p)
	}
	for _, sec := range readchannel.Sections(payload) {
		if len(entry.Sections) == maxIndexSections {
			break
		}
		entry.Sections = append(entry.Sections, "§"+toolio.MemoryText(sec))
	}
	m.ArtifactIndex = []memory.ArtifactEntry{entry}
	if in.ClaimType == tool.ClaimTypeFeedback && len(in.Feedback) > 0 {
		m.Decisions = []string{toolio.MemoryText(fmt.Sprintf("reworked %s v%d after %d review(s)", in.TargetArtefact.Type, in.TargetArtefact.Version, len(in.Feedback)))}
	}
	return m
}

// shape turns the model's text into the answer of a format.
func shape(format prompt.Format, artefactType, text string) (toolio.Answer, error) {
	out := toolio.Answer{ArtefactType: artefactType}
	switch format {
	case prompt.FormatVerdict:
		v, err := answer.ParseVerdict(text)
		if err != nil {
			return out, err
		}
		out.ArtefactPayload = v
		out.Summary = v.Verdict
		if v.Severity != "" && v.Verdict == "reject" {
			out.Summary += " (" + v.Severity + ")"
		}
		if len(v.Findings) > 0 {
			out.Summary += ": " + v.Findings[0]
		}
	case prompt.FormatLearning:
		l, err := answer.Learning(text)
		if err != nil {
			return out, err
		}
		out.ArtefactPayload, out.Summary = l, l
	case prompt.FormatJSON:
		obj, err := answer.Object(text)
		if err != nil {
			return out, err
		}
		out.ArtefactPayload, out.Summary = obj, artefactType+" (JSON)"
	default:
		t, err := answer.Text(text)
		if err != nil {
			return out, err
		}
		out.ArtefactPayload, out.Summary = t, answer.Summary(t)
	}
	return out, nil
}

// callFailure explains a failed model call: what happened and what to do,
// and whether a retry of the claim can help.
func (a *Agent) callFailure(err error) error {
	c := a.Config
	var se *provider.StatusError
	var gu *provider.GaveUpError
	switch {
	case errors.As(err, &gu):
		return toolio.Transient("the model call did not succeed: %v", err)
	case errors.Is(err, context.Canceled):
		return toolio.Transient("the model call was cancelled: %v", err)
	case provider.Classify(err).Auth:
		if c.key() == "" {
			return toolio.Permanent("%v: the server at %s=%s needs an API key: set %s in this agent's environment",
				err, c.baseURLVar(), c.baseURL(), c.keyVar())
		}
		return toolio.Permanent("%v: the API key was refused: set %s to a valid key (and check that it may use model %q)",
			err, c.keyVar(), c.Model)
	case errors.As(err, &se) && se.Code == http.StatusNotFound:
		where := "the provider's default endpoint"
		if c.baseURL() != "" {
			where = c.baseURLVar() + "=" + c.baseURL()
		}
		return toolio.Permanent("%v: check the model name (%s=%q) and the endpoint (%s; for OpenAI-compatible servers it ends in /v1)",
			err, EnvModel, c.Model, where)
	case errors.As(err, &se):
		return toolio.Permanent("the model call failed: %v", err)
	}
	return toolio.Transient("the model call failed: %v", err)
}

func (a *Agent) newProvider(now func() time.Time) provider.Provider {
	c := a.Config
	if c.Provider == ProviderFake {
		return provider.NewOpenAI(provider.OpenAIConfig{BaseURL: fakeBaseURL, JSONMode: c.JSONMode,
			HTTPClient: fakeClient(), NowFunc: now, LogFunc: a.logf})
	}
	if c.Provider == ProviderAnthropic {
		return provider.NewAnthropic(provider.AnthropicConfig{BaseURL: c.AnthropicBaseURL, APIKey: c.AnthropicKey,
			HTTPClient: a.HTTPClient, NowFunc: now})
	}
	return provider.NewOpenAI(provider.OpenAIConfig{BaseURL: c.OpenAIBaseURL, APIKey: c.OpenAIKey, JSONMode: c.JSONMode,
		HTTPClient: a.HTTPClient, NowFunc: now, LogFunc: a.logf})
}

// logf writes one line to Stderr, secrets removed.
func (a *Agent) logf(format string, args ...any) {
	if a.Stderr == nil {
		return
	}
	line := a.red.Redact(fmt.Sprintf(format, args...))
	fmt.Fprintln(a.Stderr, "sett-agent-llm: "+strings.TrimSpace(line))
}

// quoteTail quotes the end of a text (where a cut answer stopped).
func quoteTail(s string) string {
	const n = 400
	r := []rune(s)
	if len(r) <= n {
		return fmt.Sprintf("%q", s)
	}
	return fmt.Sprintf("…%q (%d characters in all)", string(r[len(r)-n:]), len(r))
}

// Main runs the tool as a process: flags and environment, stdin, stdout,
// stderr. It returns the exit code: 0 with an answer printed, 1 with a
// failure printed, 2 for a configuration error (also printed as a
// failure, so that the cub's Failure artefact says what to fix).
func Main(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := ParseConfig(args, getenv, stderr)
	if err != nil {
		red := toolio.NewRedactor(getenv(EnvOpenAIKey), getenv(EnvAnthropicKey))
		_ = toolio.WriteFailure(stdout, toolio.Permanent("sett-agent-llm: %v", err), nil, red)
		fmt.Fprintln(stderr, "sett-agent-llm:", red.Redact(err.Error()))
		return 2
	}
	a := &Agent{Config: cfg, Stdout: stdout, Stderr: stderr, ReadSocket: getenv(readchannel.EnvSocket)}
	if err := a.Run(ctx, stdin); err != nil {
		return 1
	}
	return 0
}
