package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/connect"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/termsafe"
)

// statusReport is what `sett status` shows; it is also its JSON form.
type statusReport struct {
	Instance  string         `json:"instance"`
	Redis     redisReport    `json:"redis"`
	Leader    *leaderReport  `json:"leader"`
	Paused    bool           `json:"paused"`
	Pause     *pauseReport   `json:"pause,omitempty"`
	Queue     *queueReport   `json:"queue,omitempty"`
	Workflows workflowReport `json:"workflows"`
	// Running lists the highest-scored running workflows with their tokens.
	Running []runningWorkflow `json:"running_workflows"`
	Tokens  *tokenReport      `json:"tokens,omitempty"`
	Agents  []agentReport     `json:"agents"`
	Claims  claimReport       `json:"claims"`
	// Retries are the failed attempts whose retry waits for its backoff.
	Retries  []pendingRetryView `json:"pending_retries"`
	Warnings []string           `json:"warnings,omitempty"`
	// Isolation is how the local runtime isolates tools ("" elsewhere).
	Isolation string `json:"isolation,omitempty"`
	// Vault is the vault bridge's health (nil: no vault reported).
	Vault *vaultView `json:"vault,omitempty"`
	// StopFiles are the .sett_stop files that exist (they pause the
	// instance).
	StopFiles []string `json:"stop_files,omitempty"`
}

// pauseReport says since when, by whom and why the instance is paused.
type pauseReport struct {
	SinceMs int64  `json:"since_ms"`
	By      string `json:"by,omitempty"`
	Reason  string `json:"reason,omitempty"`
	Source  string `json:"source"`
}

// queueReport counts what the scheduler holds.
type queueReport struct {
	Running int64 `json:"running"`
	Waiting int64 `json:"waiting"`
}

type redisReport struct {
	URL       string  `json:"url,omitempty"`
	Reachable bool    `json:"reachable"`
	LatencyMs float64 `json:"latency_ms,omitempty"`
	Error     string  `json:"error,omitempty"`
	// Topology is the Sentinel set or Cluster with its current
	// master(s); nil for a single node.
	Topology *blackboard.RedisTopology `json:"topology,omitempty"`
}

type leaderReport struct {
	// Holder is "" when no orchestrator holds the lease.
	Holder string `json:"holder"`
	Epoch  int64  `json:"epoch"`
	TTLMs  int64  `json:"ttl_ms"`
}

type workflowReport struct {
	Running  int            `json:"running"`
	Total    int64          `json:"total"`
	ByStatus map[string]int `json:"by_status"`
	// Examined is below Total when only the newest workflows were read.
	Examined int `json:"examined"`
}

type agentReport struct {
	Name       string `json:"name"`
	Role       string `json:"role,omitempty"`
	Configured bool   `json:"configured"`
	Registered bool   `json:"registered"`
	Alive      bool   `json:"alive"`
	// HeartbeatTTLMs is how long the heartbeat lives without renewal.
	HeartbeatTTLMs int64 `json:"heartbeat_ttl_ms,omitempty"`
	// HeartbeatAgeMs is the time since the last heartbeat, known when
	// sett.yml gives the heartbeat TTL.
	HeartbeatAgeMs *int64 `json:"heartbeat_age_ms,omitempty"`
	// Queued counts the inbox entries waiting (bid requests and grants).
	Queued  int64      `json:"queued"`
	Working []workItem `json:"working"`
}

// workItem is a grant an agent holds and has not delivered yet.
type workItem struct {
	ClaimID      string `json:"claim_id"`
	ArtefactID   string `json:"artefact_id"`
	ArtefactType string `json:"artefact_type,omitempty"`
	WorkflowID   string `json:"workflow_id"`
	Grant        string `json:"grant"`
}

type claimReport struct {
	Active   int            `json:"active"`
	ByStatus map[string]int `json:"by_status"`
	// Unanswered lists claims past their bid deadline that still wait
	// for configured agents to answer (they are asked again until
	// orchestrator.no_bid_timeout, then the workflow fails naming them).
	Unanswered []unansweredClaim `json:"unanswered,omitempty"`
}

// unansweredClaim is a claim waiting for agents that have not answered.
type unansweredClaim struct {
	ClaimID      string   `json:"claim_id"`
	WorkflowID   string   `json:"workflow_id"`
	ArtefactType string   `json:"artefact_type,omitempty"`
	Agents       []string `json:"agents"`
	Rounds       int      `json:"rounds"`
	SinceMs      int64    `json:"since_ms"`
}

func newStatusCmd(app *App) *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show instance health, agents, claims and queues",
		Long: `Show the health of the instance: whether Redis answers, which orchestrator
holds the leader lease, every configured or registered agent with its
heartbeat, queued inbox entries and current work, the active claims by status,
the running workflows, and whether the instance is paused.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkFormat(format, "text", "json"); err != nil {
				return err
			}
			return runStatus(cmd, app, format)
		},
	}
	cmd.Flags().StringVarP(&format, "output", "o", "text", "output format: text or json")
	return cmd
}

func runStatus(cmd *cobra.Command, app *App, format string) error {
	ctx := cmd.Context()
	out := cmd.OutOrStdout()
	bb, rec, err := app.Connect(ctx)
	if err != nil {
		if errors.Is(err, instance.ErrNoInstance) || errors.Is(err, blackboard.ErrInvalid) || errors.Is(err, config.ErrEnv) ||
			strings.HasPrefix(err.Error(), "instance:") {
			return err
		}
		// The instance is known but its Redis does not answer: that is
		// the status to report.
		r := &statusReport{Instance: app.InstanceName(), Redis: redisReport{URL: app.redisShown(rec)}}
		return reportUnreachable(out, styleFor(app), format, r, err)
	}
	defer bb.Close()
	r, err := collectStatus(ctx, app, bb, rec)
	if err != nil {
		return err
	}
	if !r.Redis.Reachable {
		return reportUnreachable(out, styleFor(app), format, r, errors.New(r.Redis.Error))
	}
	if format == "json" {
		return writeJSONIndent(out, r)
	}
	renderStatus(out, styleFor(app), r)
	return nil
}

// reportUnreachable prints a report whose Redis did not answer and
// returns the error with exit code 1.
func reportUnreachable(out io.Writer, style outputStyle, format string, r *statusReport, err error) error {
	r.Redis.Reachable, r.Redis.Error = false, err.Error()
	if format == "json" {
		_ = writeJSONIndent(out, r)
	} else {
		fmt.Fprintf(out, "Instance   %s\nRedis      %s\n", termsafe.Line(cmp.Or(r.Instance, "?")), style.paint(colourRed, "unreachable"))
	}
	return &ExitError{Code: ExitFailure, Err: err}
}

// redisURLOf is the Redis URL the command connected to, as app.Connect
// chooses it.
func redisURLOf(app *App, rec *instance.Record) string {
	if app.redisURL != "" {
		return app.redisURL
	}
	if u := app.env("SETT_REDIS_URL"); u != "" {
		return u
	}
	if rec != nil {
		return rec.RedisURL
	}
	return ""
}

// redisShown is the Redis a command reached (or tried), for `sett status`:
// the external topology or compose stack it dialled, else the redacted
// URL.
func (a *App) redisShown(rec *instance.Record) string {
	if a.dialled != "" {
		return a.dialled
	}
	return connect.RedactURL(redisURLOf(a, rec))
}

// configuredAgents reads the agents of the workspace's sett.yml: their
// roles and the heartbeat TTL. A missing file is fine; a broken one is a
// warning.
func configuredAgents(workspace string) (roles map[string]string, heartbeatTTL time.Duration, warning string) {
	path := filepath.Join(workspace, config.DefaultFilename)
	if _, err := os.Stat(path); err != nil {
		return nil, 0, ""
	}
	cfg, _, err := config.Load(path)
	if err != nil {
		return nil, 0, fmt.Sprintf("%s not read (%v): only registered agents are listed", path, err)
	}
	roles = map[string]string{}
	for _, name := range cfg.AgentNames() {
		a, _ := cfg.Agent(name)
		roles[name] = a.Role
	}
	return roles, cfg.Orchestrator.AgentHeartbeatTTL.Std(), ""
}

// collectStatus reads everything the report shows, in a handful of
// pipelined round trips.
func collectStatus(ctx context.Context, app *App, bb *blackboard.Client, rec *instance.Record) (*statusReport, error) {
	r := &statusReport{Instance: bb.Instance(), Redis: redisReport{URL: app.redisShown(rec)}}
	start := time.Now()
	if err := bb.Ping(ctx); err != nil {
		r.Redis.Error = err.Error()
		return r, nil
	}
	r.Redis.Reachable = true
	r.Redis.LatencyMs = float64(time.Since(start).Microseconds()) / 1000
	if tp, err := bb.RedisTopology(ctx); err != nil {
		r.Warnings = append(r.Warnings, "redis topology: "+err.Error())
	} else if tp.Kind != blackboard.TopologySingle {
		r.Redis.Topology = &tp
	}

	li, err := bb.Leader(ctx)
	if err != nil {
		return nil, err
	}
	r.Leader = &leaderReport{Holder: li.Holder, Epoch: li.Epoch, TTLMs: li.TTL.Milliseconds()}

	ps, err := bb.GetPauseState(ctx)
	if err != nil {
		return nil, err
	}
	if ps.Paused {
		r.Paused = true
		r.Pause = &pauseReport{SinceMs: ps.SinceMs, By: ps.By, Reason: ps.Reason, Source: ps.Source}
	}
	sc, err := bb.CountScheduler(ctx)
	if err != nil {
		return nil, err
	}
	r.Queue = &queueReport{Running: sc.Running, Waiting: sc.Waiting}

	wc, err := bb.CountWorkflows(ctx, 0)
	if err != nil {
		return nil, err
	}
	r.Workflows = workflowReport{Running: wc.ByStatus[blackboard.WorkflowRunning], Total: wc.Total, Examined: wc.Examined, ByStatus: map[string]int{}}
	for st, n := range wc.ByStatus {
		r.Workflows.ByStatus[string(st)] = n
	}
	if r.Running, r.Tokens, err = collectRunning(ctx, bb, wc.Running); err != nil {
		return nil, err
	}

	// Claims by status, and who is working on what: a granted agent that
	// has not delivered its artefact yet.
	activeIDs, err := bb.ActiveClaims(ctx)
	if err != nil {
		return nil, err
	}
	claims, err := bb.GetClaims(ctx, activeIDs)
	if err != nil {
		return nil, err
	}
	outputs, err := bb.ClaimOutputs(ctx, activeIDs)
	if err != nil {
		return nil, err
	}
	r.Claims.ByStatus = map[string]int{}
	working := map[string][]workItem{}
	var targetIDs []string
	for i, c := range claims {
		if c == nil {
			continue
		}
		r.Claims.Active++
		r.Claims.ByStatus[string(c.Status)]++
		if c.Status == blackboard.ClaimPendingConsensus && c.BidRounds > 0 {
			r.Claims.Unanswered = append(r.Claims.Unanswered, unansweredClaim{ClaimID: c.ID, WorkflowID: c.WorkflowID,
				ArtefactType: c.ArtefactType, Agents: c.AwaitedAgents, Rounds: c.BidRounds, SinceMs: c.NoAnswerSinceMs})
		}
		for _, agent := range c.GrantedAgents() {
			if _, done := outputs[i][agent]; done {
				continue
			}
			working[agent] = append(working[agent], workItem{ClaimID: c.ID, ArtefactID: c.ArtefactID, WorkflowID: c.WorkflowID, Grant: string(c.Status.GrantKind())})
			targetIDs = append(targetIDs, c.ArtefactID)
		}
	}
	if len(targetIDs) > 0 {
		if targets, err := bb.GetArtefacts(ctx, targetIDs); err == nil {
			types := map[string]string{}
			for _, a := range targets {
				if a != nil {
					types[a.ID] = a.Type
				}
			}
			for _, items := range working {
				for i := range items {
					items[i].ArtefactType = types[items[i].ArtefactID]
				}
			}
		}
	}

	// Agents: the registry, plus those sett.yml configures.
	registered, err := bb.Agents(ctx)
	if err != nil {
		return nil, err
	}
	workspace := app.Workspace()
	if rec != nil && rec.Workspace != "" {
		workspace = rec.Workspace
	}
	if r.Retries, err = collectPendingRetries(ctx, bb, claims, configuredAttempts(workspace)); err != nil {
		return nil, err
	}
	if rec != nil && rec.Isolation != "" {
		r.Isolation = rec.Isolation
		if strings.HasPrefix(rec.Isolation, "none") {
			r.Warnings = append(r.Warnings, "tools are not isolated: "+rec.Isolation)
		}
	}
	roles, hbTTL, warning := configuredAgents(workspace)
	if warning != "" {
		r.Warnings = append(r.Warnings, warning)
	}
	if w := configChangedWarning(rec); w != "" {
		r.Warnings = append(r.Warnings, w)
	}
	if r.Vault, err = collectVault(ctx, bb); err != nil {
		return nil, err
	}
	r.StopFiles = presentStopFiles(stopFileDirs(app, workspace))
	names := map[string]bool{}
	for n := range registered {
		names[n] = true
	}
	for n := range roles {
		names[n] = true
	}
	for n := range working {
		names[n] = true
	}
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, n)
	}
	sort.Strings(list)
	live, err := bb.AgentLiveness(ctx, list)
	if err != nil {
		return nil, err
	}
	queued, err := bb.InboxLengths(ctx, list)
	if err != nil {
		return nil, err
	}
	for _, n := range list {
		reg, isReg := registered[n]
		role, isConf := roles[n]
		if role == "" {
			role = reg.Role
		}
		_, alive := live[n]
		if roles != nil && !isConf && !alive && len(working[n]) == 0 {
			// Removed from sett.yml and stopped: no longer part of the
			// instance, however long its registration stays.
			continue
		}
		a := agentReport{Name: n, Role: role, Configured: isConf, Registered: isReg, Queued: queued[n], Working: working[n]}
		if a.Working == nil {
			a.Working = []workItem{}
		}
		if ttl, ok := live[n]; ok {
			a.Alive = true
			a.HeartbeatTTLMs = ttl.Milliseconds()
			if hbTTL > 0 {
				ageMs := max(hbTTL-ttl, 0).Milliseconds()
				a.HeartbeatAgeMs = &ageMs
			}
		}
		r.Agents = append(r.Agents, a)
	}
	return r, nil
}

// topologyLine is the current master(s) of a Sentinel set or Cluster:
// "sentinel · master 10.0.0.5:6379 (from sentinel 10.0.0.7:26379)", or
// "cluster · 3 masters · slot 866 on 10.0.0.5:6379 · masters 10.0.0.5:6379
// (0-5460), ...".
func topologyLine(tp *blackboard.RedisTopology) string {
	if tp.Kind == blackboard.TopologySentinel && len(tp.Masters) == 1 {
		return fmt.Sprintf("sentinel · master %s (from %s)", termsafe.Line(tp.Masters[0].Addr), termsafe.Line(tp.Source))
	}
	var holder string
	masters := make([]string, len(tp.Masters))
	for i, m := range tp.Masters {
		masters[i] = fmt.Sprintf("%s (%s)", m.Addr, strings.Join(m.Slots, ","))
		if m.Instance {
			holder = m.Addr
			if len(m.Replicas) > 0 {
				holder += " (replicas " + strings.Join(m.Replicas, ", ") + ")"
			}
		}
	}
	return termsafe.Line(fmt.Sprintf("%s · %d masters · instance slot %d on %s · masters %s",
		tp.Kind, len(tp.Masters), tp.Slot, cmp.Or(holder, "no master (slot not served)"), strings.Join(masters, ", ")))
}

// renderStatus prints the report for people.
func renderStatus(w io.Writer, style outputStyle, r *statusReport) {
	head := newTable(w, style)
	kv := func(k string, v cell) { head.row(cell{text: k, colour: colourBold}, v) }
	kv("Instance", cell{text: r.Instance})
	redis := "reachable"
	if r.Redis.URL != "" {
		redis = r.Redis.URL + " · reachable"
	}
	kv("Redis", cell{text: fmt.Sprintf("%s · %.1fms", redis, r.Redis.LatencyMs), colour: colourGreen})
	if tp := r.Redis.Topology; tp != nil {
		kv("Topology", cell{text: topologyLine(tp)})
	}
	if r.Leader == nil || r.Leader.Holder == "" {
		epoch := int64(0)
		if r.Leader != nil {
			epoch = r.Leader.Epoch
		}
		kv("Leader", cell{text: fmt.Sprintf("none: no orchestrator holds the lease (last epoch %d); start one with `sett up`", epoch), colour: colourRed})
	} else {
		kv("Leader", cell{text: fmt.Sprintf("%s (epoch %d, lease %s left)", r.Leader.Holder, r.Leader.Epoch, humanDuration(time.Duration(r.Leader.TTLMs)*time.Millisecond))})
	}
	if r.Paused {
		text := "PAUSED"
		if p := r.Pause; p != nil {
			text += " since " + stamp(style.Now(), msTime(p.SinceMs))
			if p.By != "" {
				text += " by " + p.By
			}
			if p.Source == blackboard.ControlFromStopFile {
				text += " (the .sett_stop file)"
			}
			if p.Reason != "" {
				text += ": " + p.Reason
			}
		}
		kv("Paused", cell{text: text + " — `sett resume` continues", colour: colourYellow})
	} else {
		kv("Paused", cell{text: "not paused"})
	}
	if text, warn := stopFileLine(r.StopFiles, r.Paused); text != "" {
		c := cell{text: text}
		if warn {
			c.colour = colourYellow
		}
		kv("Stop file", c)
	}
	if r.Vault != nil {
		text, failing := vaultLine(style.Now(), r.Vault)
		c := cell{text: text}
		if failing {
			c.colour = colourRed
		}
		kv("Vault", c)
	}
	if q := r.Queue; q != nil {
		kv("Queue", cell{text: fmt.Sprintf("%d claims hold slots, %d wait (`sett queue`)", q.Running, q.Waiting)})
	}
	wf := fmt.Sprintf("%d running (%d in total)", r.Workflows.Running, r.Workflows.Total)
	if int64(r.Workflows.Examined) < r.Workflows.Total {
		wf += fmt.Sprintf(" — counted over the newest %d", r.Workflows.Examined)
	}
	kv("Workflows", cell{text: wf})
	kv("Claims", cell{text: fmt.Sprintf("%d active", r.Claims.Active)})
	for _, u := range r.Claims.Unanswered {
		what := u.ArtefactType
		if what == "" {
			what = "artefact"
		}
		kv("Waiting", cell{text: fmt.Sprintf("%s of workflow %s waits for %s to answer: asked again %d time(s) since %s (the workflow fails at orchestrator.no_bid_timeout)",
			what, blackboard.ShortID(u.WorkflowID), strings.Join(u.Agents, ", "), u.Rounds, ago(style.Now(), time.UnixMilli(u.SinceMs))), colour: colourYellow})
	}
	if tk := r.Tokens; tk != nil && tk.Total > 0 {
		kv("Tokens", cell{text: fmt.Sprintf("%d spent (%s)", tk.Total, agentTokensText(tk.ByAgent))})
	}
	_ = head.flush()
	writeRunning(w, style, r)

	fmt.Fprintln(w)
	if len(r.Agents) == 0 {
		fmt.Fprintln(w, "No agents registered or configured: add agents to sett.yml and run `sett up`.")
	} else {
		now := style.Now()
		t := newTable(w, style, "AGENT", "ROLE", "STATE", "HEARTBEAT", "QUEUED", "WORKING ON")
		for _, a := range r.Agents {
			state, sc := "alive", colourGreen
			switch {
			case !a.Registered && !a.Alive:
				state, sc = "never started", colourGrey
			case !a.Alive:
				state, sc = "down", colourRed
			}
			hb := "-"
			switch {
			case a.HeartbeatAgeMs != nil:
				hb = ago(now, now.Add(-time.Duration(*a.HeartbeatAgeMs)*time.Millisecond))
			case a.Alive:
				hb = "expires in " + humanDuration(time.Duration(a.HeartbeatTTLMs)*time.Millisecond)
			}
			work := "-"
			if len(a.Working) > 0 {
				parts := make([]string, len(a.Working))
				for i, wi := range a.Working {
					parts[i] = fmt.Sprintf("%s on %s %s (claim %s)", wi.Grant, cmp.Or(wi.ArtefactType, "artefact"), style.id(wi.ArtefactID), style.id(wi.ClaimID))
				}
				work = strings.Join(parts, "; ")
			}
			t.row(cell{text: a.Name}, cell{text: cmp.Or(a.Role, "-")}, cell{text: state, colour: sc}, cell{text: hb},
				cell{text: fmt.Sprint(a.Queued)}, cell{text: work})
		}
		_ = t.flush()
	}

	if len(r.Retries) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintf(w, "%s\n", style.paint(colourYellow, fmt.Sprintf("%d retry(ies) wait for their backoff:", len(r.Retries))))
		for _, rt := range r.Retries {
			fmt.Fprintf(w, "  %s\n", termsafe.Line(rt.text(style.Now())))
		}
	}
	if len(r.Claims.ByStatus) > 0 {
		fmt.Fprintln(w)
		t := newTable(w, style, "CLAIM STATUS", "COUNT")
		for _, st := range blackboard.AllClaimStatuses() {
			if n := r.Claims.ByStatus[string(st)]; n > 0 {
				t.row(cell{text: string(st)}, cell{text: fmt.Sprint(n)})
			}
		}
		_ = t.flush()
	}
	if r.Isolation != "" {
		fmt.Fprintf(w, "\nisolation: %s\n", termsafe.String(r.Isolation))
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(w, "\n%s %s\n", style.paint(colourYellow, "warning:"), termsafe.String(warn))
	}
}

// writeJSONIndent prints v as indented JSON.
func writeJSONIndent(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
