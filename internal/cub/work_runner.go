package cub

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/failpoint"
	"github.com/settdev/sett/internal/readchannel"
	"github.com/settdev/sett/internal/retrypolicy"
	"github.com/settdev/sett/internal/reviewpolicy"
	"github.com/settdev/sett/internal/textcut"
	"github.com/settdev/sett/internal/tool"
	"github.com/settdev/sett/internal/writeretry"
)

// FailureToolExecution is the type of the Failure artefact written when a
// tool fails or answers something unusable.
const FailureToolExecution = "ToolExecutionFailure"

// LearningType is the type of a learner's answer when its tool names none.
const LearningType = "Learning"

// WorkRunner runs one leased grant: it reads the claim, target and
// workflow, builds the context chain, runs the tool with the JSON contract
// and writes the result — or a ToolExecutionFailure that says exactly what
// went wrong — as the grant's one output.
//
// Safe for concurrent use.
type WorkRunner struct {
	bb      *blackboard.Client
	cfg     WorkRunnerConfig
	builder *ContextBuilder
	m       *Metrics
	log     zerolog.Logger
	// RunFunc runs the tool; tool.Run unless a test replaces it.
	RunFunc func(context.Context, tool.Spec) tool.Result
	// BaseEnv is the environment tools inherit from after scrubbing.
	BaseEnv []string

	memMu sync.Mutex
	mem   blackboard.ToolMemory // the last tool memory read, by rev
}

// WorkRunnerParams is what NewWorkRunner wires together.
type WorkRunnerParams struct {
	Client *blackboard.Client
	Config WorkRunnerConfig
	// Builder builds the context chain a tool receives.
	Builder *ContextBuilder
	Metrics *Metrics
	// Log has no component; the runner adds its own.
	Log zerolog.Logger
}

// NewWorkRunner returns a runner for the agent p.Config describes.
func NewWorkRunner(p WorkRunnerParams) *WorkRunner {
	return &WorkRunner{bb: p.Client, cfg: p.Config, builder: p.Builder, m: p.Metrics, RunFunc: tool.Run, BaseEnv: os.Environ(),
		log: p.Log.With().Str("component", "work_runner").Logger()}
}

// ToolEnv is the tool's complete environment for a claim: the allow-listed
// base with the agent's environment_from_host names (never Redis
// credentials), the agent's configured environment and the SETT_*
// variables of the contract.
func (w *WorkRunner) ToolEnv(claimID string) []string {
	extra := make(map[string]string, len(w.cfg.Environment)+4)
	for k, v := range w.cfg.Environment {
		extra[k] = v
	}
	extra["SETT_INSTANCE"] = w.bb.Instance()
	extra["SETT_AGENT"] = w.cfg.Agent
	extra["SETT_CLAIM_ID"] = claimID
	extra["SETT_WORKSPACE"] = w.cfg.Workspace
	return tool.ScrubbedEnv(w.BaseEnv, w.cfg.EnvironmentFromHost, extra)
}

// Outcome says how a grant ended for the inbox loop.
type Outcome int

// Outcomes of Run.
const (
	// Retry: the grant must run again (a transient error, or the lease
	// was lost while the cub stops); its inbox entry stays pending.
	Retry Outcome = iota
	// Stored: the result was written, and in the same atomic step the
	// inbox entry acknowledged and the lease released.
	Stored
	// Dropped: the grant is over without a result from this run (stale,
	// delivered before, or its records are gone); the entry still needs
	// acknowledging.
	Dropped
)

// Run executes grant g (read from the inbox at readAt, with view read when
// its lease was taken) and reports how it ended. fence (nil: none) is the
// lease's deadline, which a sandboxed tool cannot outlive.
func (w *WorkRunner) Run(ctx context.Context, g blackboard.InboxEntry, view *blackboard.GrantView, readAt time.Time, fence *tool.Fence) (Outcome, error) {
	log := w.log.With().Str("claim_id", g.ClaimID).Str("workflow_id", g.WorkflowID).Str("grant", string(g.Grant)).Logger()
	chain, err := w.builder.Build(ctx, view.Target, view.Claim)
	if err != nil {
		return Retry, err
	}
	if chain.Truncated {
		log.Warn().Int("depth", w.builder.Depth).Msg("context chain cut at the depth limit")
	}
	input := tool.Input{
		ClaimID:        g.ClaimID,
		ClaimType:      tool.ClaimType(g.Grant),
		TargetArtefact: toToolArtefact(view.Target),
		Workflow: tool.Workflow{ID: view.Workflow.ID, Goal: view.Workflow.Goal,
			Iteration: view.Claim.Iteration, Priority: view.Workflow.Priority},
		Instance: w.bb.Instance(),
		Agent:    w.cfg.Agent,
	}
	mem, err := w.toolMemory(ctx, view.ToolMemoryRev)
	if err != nil {
		return Retry, err
	}
	input.Memory.Learnings, input.Memory.Handbook = mem.Learnings, mem.Handbook
	byID := make(map[string]*blackboard.Artefact, len(chain.Artefacts))
	for _, a := range chain.Artefacts {
		input.ContextChain = append(input.ContextChain, toToolArtefact(a))
		byID[a.ID] = a
	}
	if g.Grant == blackboard.GrantFeedback || g.Grant == blackboard.GrantLearn {
		if input.Feedback, err = w.feedback(ctx, view.Claim, byID); err != nil {
			return Retry, err
		}
		// Each review once (issue 28): the reviews are in feedback, so the
		// context chain does not repeat them.
		input.ContextChain = withoutFeedback(input.ContextChain, input.Feedback)
	}
	input.Memory.Shared = sharedMemory(view.SharedMemory)
	input.Memory.Upstream = upstreamMemories(view.Memories)
	if g.Grant != blackboard.GrantLearn {
		omitPayloads(input.ContextChain, input.Memory.Upstream, input.TargetArtefact.ID)
		omitPayloads(input.Feedback, input.Memory.Upstream, input.TargetArtefact.ID)
	}
	// MarshalJSON itself, not json.Marshal: the latter re-scans the whole
	// document a custom marshaller returns, and tool inputs carry the
	// context chain's payloads.
	stdin, err := input.MarshalJSON()
	if err != nil {
		return Retry, fmt.Errorf("cub: encode tool input: %w", err)
	}
	env := w.ToolEnv(g.ClaimID)
	// The memory-first fetch channel (sett-read): open for this run only,
	// serving this workflow's artefacts only.
	if rs, err := w.readServer(ctx, g.ClaimID, view.Workflow.ID); err != nil {
		log.Warn().Err(err).Msg("the sett-read channel could not be opened; the tool runs without it")
	} else {
		defer rs.Close()
		env = append(env, readchannel.EnvSocket+"="+rs.Path)
	}
	spec := tool.Spec{Command: w.cfg.Command, Dir: w.cfg.Workspace, Env: env, Stdin: stdin,
		Timeout: w.cfg.ToolTimeout, MaxStdout: w.cfg.MaxOutput, MaxStderr: w.cfg.MaxOutput, StopGrace: w.cfg.StopGrace,
		Ledger: w.cfg.ToolLedger, Sandbox: w.cfg.Sandbox, Fence: fence}
	w.m.StartLatency.Observe(time.Since(readAt).Seconds())
	w.m.ToolsRunning.Inc()
	log.Info().Int("context", len(input.ContextChain)).Msg("running tool")
	res := w.RunFunc(ctx, spec)
	w.m.ToolsRunning.Dec()
	outcome := "ok"
	if res.Failure != "" {
		outcome = string(res.Failure)
	}
	w.m.ToolExits.WithLabelValues(outcome).Inc()
	w.m.ToolDuration.WithLabelValues(outcome).Observe(res.Duration.Seconds())
	if len(res.Stderr) > 0 {
		log.Info().Str("stderr", textcut.Bytes(string(res.Stderr), 8192)).Msg("tool stderr")
	}
	if ctx.Err() != nil {
		// The lease was lost or the cub is stopping: the grant is re-issued
		// or redelivered, so this run leaves no result.
		return Retry, ctx.Err()
	}
	failpoint.Hit("cub-tool-finished")
	art := w.result(ctx, view, g.InboxMessage, res)
	stored, err := w.write(ctx, log, view, g, art, res)
	if stored == Stored && art.Metadata[metaMemoryAction] != "" {
		w.warnMemory(ctx, log, art)
	}
	return stored, err
}

// readServer opens the fetch channel of one tool run: a socket in the
// workspace (visible inside the sandbox), or in the temporary directory
// when the workspace path is too long for a socket.
func (w *WorkRunner) readServer(ctx context.Context, claimID, workflowID string) (*readchannel.Server, error) {
	name := ".sett-read-" + blackboard.DeriveID("read", claimID, strconv.FormatInt(time.Now().UnixNano(), 10))[:12] + ".sock"
	path := filepath.Join(w.cfg.Workspace, name)
	if w.cfg.Workspace == "" || len(path) > 100 {
		path = filepath.Join(os.TempDir(), name)
	}
	return readchannel.Listen(ctx, path, workflowID, func(ctx context.Context, id string) (*readchannel.Artefact, error) {
		if blackboard.ValidateID(id) != nil {
			return nil, readchannel.ErrNotFound
		}
		a, err := w.bb.GetArtefact(ctx, id)
		if errors.Is(err, blackboard.ErrNotFound) {
			return nil, readchannel.ErrNotFound
		}
		if err != nil {
			return nil, err
		}
		return &readchannel.Artefact{WorkflowID: a.WorkflowID, Payload: a.Payload}, nil
	})
}

// toolMemory returns the learnings and handbook at revision rev, reading
// them only when rev differs from the cached copy (they change rarely;
// every grant already carries the revision).
func (w *WorkRunner) toolMemory(ctx context.Context, rev int64) (blackboard.ToolMemory, error) {
	w.memMu.Lock()
	cached := w.mem
	w.memMu.Unlock()
	if rev == cached.Rev {
		return cached, nil
	}
	m, err := w.bb.GetToolMemory(ctx)
	if err != nil {
		return blackboard.ToolMemory{}, err
	}
	w.memMu.Lock()
	if m.Rev > w.mem.Rev || m.Rev == 0 {
		w.mem = m
	}
	w.memMu.Unlock()
	return m, nil
}

// feedback returns the reviews a feedback claim carries, from the chain
// when they are in it.
func (w *WorkRunner) feedback(ctx context.Context, cl *blackboard.Claim, byID map[string]*blackboard.Artefact) ([]tool.Artefact, error) {
	var missing []string
	for _, id := range cl.AdditionalContextIDs {
		if byID[id] == nil {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		arts, err := w.bb.GetArtefacts(ctx, missing)
		if err != nil {
			return nil, err
		}
		for _, a := range arts {
			if a != nil {
				byID[a.ID] = a
			}
		}
	}
	out := make([]tool.Artefact, 0, len(cl.AdditionalContextIDs))
	for _, id := range cl.AdditionalContextIDs {
		if a := byID[id]; a != nil {
			out = append(out, toToolArtefact(a))
		}
	}
	return out, nil
}

// result turns the tool's run into the artefact to write: the tool's
// answer, or a Failure saying exactly what was wrong with the run.
func (w *WorkRunner) result(ctx context.Context, view *blackboard.GrantView, g blackboard.InboxMessage, res tool.Result) *blackboard.Artefact {
	target := view.Target
	if res.Failure != "" {
		// A failing tool may still have said why, and whether a retry can
		// help: {"error": "...", "retryable": false} on stdout.
		f := failureInfo{kind: string(res.Failure), detail: res.Detail, exitCode: res.ExitCode}
		if rep, err := tool.ParseOutput(res.Stdout, tool.ClaimTypeFeedback, 0); err == nil && rep.Error != "" {
			f.detail = res.Detail + ": " + rep.Error
			f.retryable, f.usage = rep.Retryable, rep.Usage
		} else if line := lastLine(res.StderrTail); line != "" && res.Failure != tool.FailureStartFailed {
			// The summary is what listings show: the tool's last word on
			// stderr is usually the reason ("exit status 1: connection
			// refused").
			f.detail = res.Detail + ": " + line
		}
		return w.failure(view, g, f, tool.FailureReport(res, w.cfg.Command))
	}
	out, err := tool.ParseOutput(res.Stdout, tool.ClaimType(g.Grant), w.cfg.MaxPayload)
	if err != nil {
		kind := string(retrypolicy.KindInvalidOutput)
		var oe *tool.OutputError
		if errors.As(err, &oe) && oe.Field == "" {
			// Not one JSON object at all: the tool is broken, and the
			// retry policy fails it at once.
			kind = string(retrypolicy.KindUnreadableOutput)
		}
		return w.failure(view, g, failureInfo{kind: kind, detail: err.Error(), exitCode: res.ExitCode},
			tool.FailureReport(res, w.cfg.Command))
	}
	if u := out.Usage; u != nil && w.cfg.MaxTokensPerClaim > 0 && u.InputTokens+u.OutputTokens > w.cfg.MaxTokensPerClaim {
		// A retry would spend as much again: the failure is permanent.
		no := false
		return w.failure(view, g, failureInfo{kind: "token_budget", exitCode: res.ExitCode, retryable: &no, usage: u,
			detail: fmt.Sprintf("the run used %d tokens (%d in, %d out), more than max_tokens_per_claim (%d) of agent %s",
				u.InputTokens+u.OutputTokens, u.InputTokens, u.OutputTokens, w.cfg.MaxTokensPerClaim, w.cfg.Agent)},
			tool.FailureReport(res, w.cfg.Command))
	}
	if out.Error != "" {
		return w.failure(view, g, failureInfo{kind: "tool_error", detail: out.Error, exitCode: res.ExitCode,
			retryable: out.Retryable, usage: out.Usage}, tool.FailureReport(res, w.cfg.Command))
	}
	if g.Grant == blackboard.GrantReview {
		if err := reviewpolicy.CheckStructured(out.ArtefactPayload); err != nil {
			return w.failure(view, g, failureInfo{kind: "invalid_output", detail: err.Error(), exitCode: res.ExitCode,
				usage: out.Usage}, tool.FailureReport(res, w.cfg.Command))
		}
	}
	mem, memWarning := readMemory(out.Memory)
	id := blackboard.NewID()
	a := &blackboard.Artefact{
		ID: id, LogicalID: id, Version: 1,
		StructuralType:  blackboard.StructuralStandard,
		Type:            out.ArtefactType,
		Payload:         out.ArtefactPayload,
		SourceArtefacts: []string{target.ID},
		ProducedByRole:  w.cfg.Role,
		ProducedByAgent: w.cfg.Agent,
		WorkflowID:      target.WorkflowID,
		ClaimID:         g.ClaimID,
		Summary:         out.Summary,
		Depth:           target.Depth + 1,
		Memory:          mem,
		Metadata: map[string]string{
			"grant": string(g.Grant), "token": g.Token,
			"tool_duration_ms": strconv.FormatInt(res.Duration.Milliseconds(), 10),
		},
	}
	addAttempt(a.Metadata, g)
	addUsage(a.Metadata, out.Usage)
	for k, v := range memWarning {
		a.Metadata[k] = v
	}
	if out.StructuralType != "" {
		a.StructuralType = blackboard.StructuralType(out.StructuralType)
	}
	switch g.Grant {
	case blackboard.GrantReview:
		a.StructuralType = blackboard.StructuralReview
	case blackboard.GrantLearn:
		// A learning ends its chain: nobody bids on it.
		a.StructuralType = blackboard.StructuralTerminal
		if a.Type == "" {
			a.Type = LearningType
		}
		a.SourceArtefacts = append([]string{target.ID}, view.Claim.AdditionalContextIDs...)
	case blackboard.GrantFeedback:
		// The rework is the next version of the target's thread: same
		// logical id and type, sources = the target plus the reviews. The
		// tool never manages versions.
		a.LogicalID = target.LogicalID
		a.Version = target.Version + 1
		a.Type = target.Type
		a.StructuralType = target.StructuralType
		a.SourceArtefacts = append([]string{target.ID}, view.Claim.AdditionalContextIDs...)
		a.Depth = target.Depth
	}
	if a.Type == CommitType && a.StructuralType != blackboard.StructuralReview {
		if err := CheckCommit(ctx, w.cfg.Workspace, a.Payload); err != nil {
			return w.failure(view, g, failureInfo{kind: "invalid_commit", detail: err.Error(), exitCode: res.ExitCode,
				usage: out.Usage}, tool.FailureReport(res, w.cfg.Command))
		}
	}
	return a
}

// lastLine returns the last non-empty line of a stream's tail, made
// valid UTF-8 and cut to 160 bytes; "" when there is none.
func lastLine(tail []byte) string {
	text := strings.TrimRight(strings.ToValidUTF8(string(tail), "\uFFFD"), " \t\r\n")
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[i+1:]
	}
	return textcut.Bytes(strings.TrimSpace(text), 160)
}

// failureInfo is what a Failure artefact records about a failed run.
type failureInfo struct {
	kind     string
	detail   string
	exitCode int
	// retryable is the tool's own judgement, nil when it gave none.
	retryable *bool
	usage     *tool.Usage
}

// addAttempt records which try of its retry policy a run was ("attempt n
// of N"); grants from before attempts existed carry only their
// token, which counted grant issues.
func addAttempt(meta map[string]string, g blackboard.InboxMessage) {
	if g.Attempt > 0 {
		meta["attempt"] = strconv.Itoa(g.Attempt)
		meta["max_attempts"] = strconv.Itoa(g.MaxAttempts)
		return
	}
	meta["attempt"] = g.Token
}

// addUsage records a model call's cost in an artefact's metadata, where
// token budgets and listings read it.
func addUsage(meta map[string]string, u *tool.Usage) {
	if u == nil {
		return
	}
	if u.Model != "" {
		meta["model"] = u.Model
	}
	meta["input_tokens"] = strconv.FormatInt(u.InputTokens, 10)
	meta["output_tokens"] = strconv.FormatInt(u.OutputTokens, 10)
}

func (w *WorkRunner) failure(view *blackboard.GrantView, g blackboard.InboxMessage, f failureInfo, report string) *blackboard.Artefact {
	id := blackboard.NewID()
	payload := fmt.Sprintf("Tool of agent %s failed on claim %s (%s grant).\nfailure:     %s\nreason:      %s\n\n%s",
		w.cfg.Agent, g.ClaimID, g.Grant, f.kind, f.detail, report)
	if len(payload) > w.cfg.MaxPayload {
		payload = payload[:w.cfg.MaxPayload-len("\n[truncated]")] + "\n[truncated]"
	}
	meta := map[string]string{"failure_kind": f.kind, "grant": string(g.Grant), "token": g.Token,
		"exit_code": strconv.Itoa(f.exitCode)}
	addAttempt(meta, g)
	if f.retryable != nil {
		meta["retryable"] = strconv.FormatBool(*f.retryable)
	}
	addUsage(meta, f.usage)
	return &blackboard.Artefact{
		ID: id, LogicalID: id, Version: 1,
		StructuralType:  blackboard.StructuralFailure,
		Type:            FailureToolExecution,
		Payload:         payload,
		SourceArtefacts: []string{view.Target.ID},
		ProducedByRole:  w.cfg.Role,
		ProducedByAgent: w.cfg.Agent,
		WorkflowID:      view.Target.WorkflowID,
		ClaimID:         g.ClaimID,
		Summary:         textcut.Bytes(strings.ReplaceAll(f.kind+": "+f.detail, "\n", " "), 200),
		Depth:           view.Target.Depth + 1,
		Metadata:        meta,
	}
}

// write stores the result with the grant token, acknowledging the inbox
// entry in the same step. A refusal that means the grant is over
// (re-issued, already delivered) drops it; a result the blackboard rejects
// as invalid becomes a Failure; transient errors are retried while the
// lease is held.
func (w *WorkRunner) write(ctx context.Context, log zerolog.Logger, view *blackboard.GrantView, g blackboard.InboxEntry, art *blackboard.Artefact, res tool.Result) (Outcome, error) {
	for {
		// Retried in place until the lease ends (ctx is cancelled when the
		// keeper finds it lost): the work is done and worth keeping.
		err := writeretry.Until(ctx, time.Time{}, func(ctx context.Context) error {
			return w.bb.CreateArtefact(ctx, art, blackboard.WriteAuth{GrantToken: g.Token, InboxEntry: g.StreamID})
		}, func(err error, wait time.Duration) {
			w.m.WriteRetries.WithLabelValues("result").Inc()
			log.Warn().Err(err).Dur("wait", wait).Msg("writing the result failed; retrying while the lease lives")
		})
		switch {
		case err == nil:
			w.m.Artefacts.WithLabelValues(string(art.StructuralType)).Inc()
			ev := log.Info()
			if art.StructuralType == blackboard.StructuralFailure {
				ev = log.Warn()
			}
			ev.Str("artefact_id", art.ID).Str("type", art.Type).Str("structural_type", string(art.StructuralType)).
				Int("version", art.Version).Str("summary", art.Summary).Msg("result written")
			return Stored, nil
		case errors.Is(err, blackboard.ErrStaleGrant):
			log.Warn().Err(err).Msg("the grant was re-issued while the tool ran; result discarded")
			return Dropped, nil
		case errors.Is(err, blackboard.ErrExists):
			log.Info().Msg("result already stored (a replay); nothing to do")
			return Dropped, nil
		case errors.Is(err, blackboard.ErrNotFound):
			log.Warn().Err(err).Msg("the workflow of this grant no longer exists; result discarded")
			return Dropped, nil
		case (errors.Is(err, blackboard.ErrInvalid) || errors.Is(err, blackboard.ErrVersionConflict)) &&
			art.StructuralType != blackboard.StructuralFailure:
			art = w.failure(view, g.InboxMessage, failureInfo{kind: "rejected_result", detail: err.Error(), exitCode: res.ExitCode},
				tool.FailureReport(res, w.cfg.Command))
			continue
		}
		return Retry, err
	}
}

// withoutFeedback returns chain without the artefacts that are in
// feedback.
func withoutFeedback(chain, feedback []tool.Artefact) []tool.Artefact {
	if len(feedback) == 0 {
		return chain
	}
	in := make(map[string]bool, len(feedback))
	for _, f := range feedback {
		in[f.ID] = true
	}
	out := chain[:0:0]
	for _, a := range chain {
		if !in[a.ID] {
			out = append(out, a)
		}
	}
	return out
}
