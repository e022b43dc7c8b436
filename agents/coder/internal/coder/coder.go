package coder

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/settdev/sett/agents/internal/prompt"
	"github.com/settdev/sett/internal/memory"
	"github.com/settdev/sett/internal/readchannel"
	"github.com/settdev/sett/internal/textcut"
	"github.com/settdev/sett/internal/tool"
	toolio "github.com/settdev/sett/pkg/tool"
)

// Commit trailers that tie a commit to its claim.
const (
	trailerWorkflow = "Sett-Workflow"
	trailerClaim    = "Sett-Claim"
	trailerAgent    = "Sett-Agent"
)

// CommitType is the artefact type of the answers.
const CommitType = "CodeCommit"

// tailLen bounds each output tail quoted in a failure.
const tailLen = 1500

// maxCLIStdout caps what the CLI may print (its JSON result).
const maxCLIStdout = 8 << 20

// secretVars are variables whose values never appear in what the wrapper
// prints: the CLI's keys.
var secretVars = []string{"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN", "OPENAI_API_KEY"}

// Coder runs the coding CLI for one claim. Config is required; Env is the
// CLI's environment (nil: the wrapper's own, which the cub has scrubbed).
type Coder struct {
	Config         Config
	Stdout, Stderr io.Writer
	Env            []string
	// ReadSocket is the cub's read channel (SETT_READ_SOCKET), where the
	// payloads left out of the input are fetched; "" for none.
	ReadSocket string

	red *toolio.Redactor
}

// Run reads the tool input from stdin, runs the CLI on the workflow's
// branch and prints the CodeCommit or the failure on Stdout. It returns
// nil when it printed a commit, the failure otherwise (already printed).
func (c *Coder) Run(ctx context.Context, stdin io.Reader) error {
	env := c.Env
	if env == nil {
		env = os.Environ()
	}
	var secrets []string
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && contains(secretVars, k) {
			secrets = append(secrets, v)
		}
	}
	c.red = toolio.NewRedactor(secrets...)
	usage, err := c.run(ctx, stdin, env)
	if err != nil {
		if wErr := toolio.WriteFailure(c.Stdout, err, usage, c.red); wErr != nil {
			return errors.Join(err, wErr)
		}
		c.logf("failed: %v", err)
	}
	return err
}

func (c *Coder) run(ctx context.Context, stdin io.Reader, env []string) (*tool.Usage, error) {
	cfg := c.Config
	in, err := toolio.ReadInput(stdin)
	if err != nil {
		return nil, err
	}
	if err := toolio.FetchOmitted(&in, c.ReadSocket); err != nil {
		c.logf("some long artefacts left out of the input could not be fetched; the prompt notes it: %v", err)
	}
	switch in.ClaimType {
	case tool.ClaimTypeExclusive, tool.ClaimTypeClaim, tool.ClaimTypeFeedback:
	default:
		return nil, toolio.Permanent("the coder implements work (exclusive, claim and feedback claims), not %q claims: give it bidding_strategy exclusive", in.ClaimType)
	}
	wfID := in.Workflow.ID
	if wfID == "" {
		wfID = in.TargetArtefact.WorkflowID
	}
	short := shortID(wfID)
	if short == "" {
		return nil, toolio.Permanent("the tool input names no workflow (workflow.id), so the coder cannot name its branch")
	}
	branch := cfg.BranchPrefix + short

	tpl, err := prompt.Load(cfg.Template, cfg.TemplateDir)
	if err != nil {
		return nil, toolio.Permanent("%v (--template %s)", err, EnvTemplate)
	}
	p, err := tpl.Render(prompt.NewData(in, nil))
	if err != nil {
		return nil, toolio.Permanent("%v", err)
	}

	repo, err := OpenRepo(ctx, cfg.Workspace, env)
	if err != nil {
		return nil, err
	}
	unlock, busy, err := repo.lock(short)
	if err != nil {
		return nil, toolio.Transient("cannot lock the workflow's branch: %v", err)
	}
	if busy {
		return nil, toolio.Transient("another run of the coder is working on branch %s (it holds %s/%s.lock); try again when it is done",
			branch, repo.worktreesDir(), short)
	}
	defer unlock()

	// A run of this claim that committed before (the cub died before it
	// stored the answer): answer that commit again rather than run the CLI
	// twice.
	if hash, ok, err := repo.ClaimCommit(ctx, branch, in.ClaimID); err != nil {
		return nil, toolio.Transient("%v", err)
	} else if ok {
		c.logf("claim %s was committed before as %s on %s; answering that commit", in.ClaimID, hash, branch)
		summary := fmt.Sprintf("%s: %s (committed by an earlier run of this claim)", branch, shortHash(hash))
		return nil, toolio.WriteAnswer(c.Stdout, toolio.Answer{ArtefactType: CommitType, ArtefactPayload: hash,
			Summary: summary, Memory: commitMemory(in, branch, hash, summary, "")})
	}

	wt, err := repo.AddWorktree(ctx, short, branch)
	if err != nil {
		return nil, err
	}
	defer func() {
		// Removing the worktree must happen even when ctx is done: it
		// only touches files under .git.
		if err := wt.Remove(context.WithoutCancel(ctx)); err != nil {
			c.logf("cannot remove the worktree %s: %v", wt.Dir, err)
		}
	}()
	c.logf("%s claim %s: running %s on branch %s (from %s) in %s", in.ClaimType, in.ClaimID, cfg.Command[0], branch, shortHash(wt.Base), wt.Dir)

	argv, cliStdin := commandFor(cfg.Command, p.Text())
	res := tool.Run(ctx, tool.Spec{Command: argv, Dir: wt.Dir, Env: env, Stdin: []byte(cliStdin), Timeout: cfg.Timeout,
		MaxStdout: maxCLIStdout})
	if len(res.Stderr) > 0 {
		c.logf("%s stderr:\n%s", argv[0], strings.TrimRight(c.red.Redact(string(res.Stderr)), "\n"))
	}
	ans := parseCLIOutput(res.Stdout)
	switch {
	case res.Failure == tool.FailureTimeout:
		return ans.Usage, toolio.Transient("the coding CLI %s did not finish within %s (--timeout %s): %s%s", argv[0], cfg.Timeout, EnvTimeout, res.Detail, tails(res))
	case res.Failure == tool.FailureStartFailed:
		return nil, toolio.Permanent("the coding CLI could not start: %s; install it in the agent's image or set --command (%s)", res.Detail, EnvCommand)
	case res.Failure != "":
		return ans.Usage, fmt.Errorf("the coding CLI %s failed: %s%s", argv[0], res.Detail, tails(res))
	case ans.IsError:
		return ans.Usage, fmt.Errorf("the coding CLI %s reported an error: %s%s", argv[0], textcut.Runes(ans.Text, tailLen), tails(res))
	}

	msg := commitMessage(in, ans.Text)
	hash, stat, changed, err := wt.Commit(ctx, msg, Identity{Name: cfg.AuthorName, Email: cfg.AuthorEmail})
	if err != nil {
		return ans.Usage, toolio.Transient("cannot commit the CLI's changes: %v", err)
	}
	if !changed {
		return ans.Usage, toolio.Permanent("the coding CLI %s finished but changed nothing on branch %s%s", argv[0], branch, tails(res))
	}
	summary := fmt.Sprintf("%s: %s", branch, shortHash(hash))
	if stat != "" {
		summary += " (" + strings.TrimSpace(stat) + ")"
	}
	if first := firstLine(ans.Text); first != "" {
		summary += ": " + first
	}
	c.logf("committed %s on %s: %s", hash, branch, stat)
	return ans.Usage, toolio.WriteAnswer(c.Stdout, toolio.Answer{ArtefactType: CommitType, ArtefactPayload: hash,
		Summary: c.red.Redact(summary), Usage: ans.Usage, Memory: commitMemory(in, branch, hash, c.red.Redact(summary), strings.TrimSpace(stat))})
}

// commitMemory is the agent memory returned with a commit (issue 28, the
// memory contract): DONE, the summary, the diff stat as a key finding, an
// artifact index entry naming the branch and commit, and, for a rework,
// the decision to rework after the reviews.
func commitMemory(in tool.Input, branch, hash, summary, stat string) *memory.AgentMemory {
	m := &memory.AgentMemory{Status: memory.StatusDone, Summary: toolio.MemoryText(summary),
		ArtifactIndex: []memory.ArtifactEntry{{Path: branch, Note: toolio.MemoryText("commit " + shortHash(hash) + " (git show " + shortHash(hash) + ")")}}}
	if stat != "" {
		m.KeyFindings = []string{toolio.MemoryText(stat)}
	}
	if in.ClaimType == tool.ClaimTypeFeedback && len(in.Feedback) > 0 {
		m.Decisions = []string{toolio.MemoryText(fmt.Sprintf("reworked %s v%d after %d review(s)", in.TargetArtefact.Type, in.TargetArtefact.Version, len(in.Feedback)))}
	}
	return m
}

// commandFor puts the prompt where the command asks for it: in place of
// every PromptPlaceholder argument, else on stdin.
func commandFor(command []string, prompt string) (argv []string, stdin string) {
	argv = append([]string(nil), command...)
	placed := false
	for i, a := range argv {
		if a == PromptPlaceholder {
			argv[i], placed = prompt, true
		}
	}
	if placed {
		return argv, ""
	}
	return argv, prompt
}

// commitMessage is the subject (the goal), the CLI's own account of what
// it did, and the trailers that tie the commit to its claim.
func commitMessage(in tool.Input, cliText string) string {
	var b strings.Builder
	subject := firstLine(in.Workflow.Goal)
	if subject == "" {
		subject = in.TargetArtefact.Type + " " + shortID(in.TargetArtefact.ID)
	}
	b.WriteString("sett: " + textcut.Runes(subject, 72) + "\n\n")
	if in.ClaimType == tool.ClaimTypeFeedback {
		fmt.Fprintf(&b, "Rework of %s v%d after %d review(s).\n\n", in.TargetArtefact.Type, in.TargetArtefact.Version, len(in.Feedback))
	}
	if t := strings.TrimSpace(cliText); t != "" {
		b.WriteString(textcut.Runes(t, 4000) + "\n\n")
	}
	fmt.Fprintf(&b, "%s: %s\n%s: %s\n%s: %s\n", trailerWorkflow, in.Workflow.ID, trailerClaim, in.ClaimID, trailerAgent, in.Agent)
	return b.String()
}

// tails quotes the end of the CLI's stdout and stderr for a failure.
func tails(res tool.Result) string {
	var b strings.Builder
	for _, s := range []struct {
		name string
		tail []byte
		n    int64
	}{{"stdout", res.StdoutTail, res.StdoutBytes}, {"stderr", res.StderrTail, res.StderrBytes}} {
		t := strings.TrimSpace(strings.ToValidUTF8(string(s.tail), ""))
		if t == "" {
			fmt.Fprintf(&b, "; %s: empty", s.name)
			continue
		}
		if len(t) > tailLen {
			t = "…" + strings.ToValidUTF8(t[len(t)-tailLen:], "")
		}
		fmt.Fprintf(&b, "; %s (%d bytes) ends with: %q", s.name, s.n, t)
	}
	return b.String()
}

// shortID is the first 8 characters of an id without dashes: the name of
// the workflow's branch.
func shortID(id string) string {
	id = strings.ReplaceAll(strings.TrimSpace(id), "-", "")
	var b strings.Builder
	for _, r := range id {
		if b.Len() == 8 {
			break
		}
		if r < 0x80 && (r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		}
	}
	return strings.ToLower(b.String())
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// logf writes one line to Stderr, secrets removed.
func (c *Coder) logf(format string, args ...any) {
	if c.Stderr != nil {
		fmt.Fprintln(c.Stderr, "sett-coder: "+c.red.Redact(fmt.Sprintf(format, args...)))
	}
}

// Main runs the wrapper as a process and returns its exit code: 0 with a
// commit printed, 1 with a failure printed, 2 for a configuration error
// (printed as a failure too).
func Main(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfg, err := ParseConfig(args, getenv, stderr)
	if err != nil {
		_ = toolio.WriteFailure(stdout, toolio.Permanent("sett-coder: %v", err), nil, nil)
		fmt.Fprintln(stderr, "sett-coder:", err)
		return 2
	}
	c := &Coder{Config: cfg, Stdout: stdout, Stderr: stderr, ReadSocket: getenv(readchannel.EnvSocket)}
	if err := c.Run(ctx, stdin); err != nil {
		return 1
	}
	return 0
}
