package cli

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/termsafe"
)

// workflowProgress is what `forage --wait` knows about one workflow, built
// from its events alone: the open claims and their phases, the agents
// working (granted and not yet delivered), the feedback iteration and the
// outcome. The zero value is not usable; see newWorkflowProgress.
type workflowProgress struct {
	workflowID string
	claims     map[string]blackboard.ClaimStatus
	working    map[string]map[string]bool
	iteration  int
	artefacts  int
	claimSeen  bool
	ended      bool
	status     blackboard.WorkflowStatus
	reason     string
	// retries holds the retries waiting for their backoff, by claim and
	// agent; approvals the artefacts waiting for a human, by claim.
	retries   map[string]pendingRetry
	approvals map[string]string
	// types remembers each artefact's type, to name an artefact awaiting
	// approval.
	types map[string]string
	// unanswered holds, per claim still collecting bids past its
	// deadline, the configured agents it waits for (bids_requested_again)
	// and since when (ms, Redis clock).
	unanswered map[string]unansweredBids
}

// pendingRetry is one failed attempt whose retry waits for its backoff.
type pendingRetry struct {
	agent   string
	attempt int // the attempt that failed
	max     int
	due     time.Time
	failure string // the Failure artefact's id
	summary string // its summary, once looked up
}

// retryKey names one agent's retry on one claim.
func retryKey(claimID, agent string) string { return claimID + "/" + agent }

func newWorkflowProgress(workflowID string) *workflowProgress {
	return &workflowProgress{
		workflowID: workflowID,
		claims:     map[string]blackboard.ClaimStatus{},
		working:    map[string]map[string]bool{},
		unanswered: map[string]unansweredBids{},
		retries:    map[string]pendingRetry{},
		approvals:  map[string]string{},
		types:      map[string]string{},
	}
}

// unansweredBids is what a claim waits for past its bid deadline.
type unansweredBids struct {
	agents  string
	sinceMs int64
}

// apply folds one event in, received at now; events of other workflows
// are ignored.
func (p *workflowProgress) apply(ev blackboard.Event, now time.Time) {
	if ev.WorkflowID != p.workflowID {
		return
	}
	switch ev.Type {
	case blackboard.EventRetryScheduled:
		attempt, _ := strconv.Atoi(ev.Field("attempt"))
		maxAttempts, _ := strconv.Atoi(ev.Field("max_attempts"))
		delay, _ := strconv.ParseInt(ev.Field("delay_ms"), 10, 64)
		p.retries[retryKey(ev.ClaimID, ev.Agent)] = pendingRetry{agent: ev.Agent, attempt: attempt, max: maxAttempts,
			due: now.Add(time.Duration(delay) * time.Millisecond), failure: ev.Field("failure_id")}
	case blackboard.EventRetryGranted:
		delete(p.retries, retryKey(ev.ClaimID, ev.Agent))
		if p.working[ev.ClaimID] == nil {
			p.working[ev.ClaimID] = map[string]bool{}
		}
		p.working[ev.ClaimID][ev.Agent] = true
	case blackboard.EventArtefactCreated:
		p.artefacts++
		if ev.ArtefactID != "" {
			p.types[ev.ArtefactID] = ev.Field("type")
		}
		if ev.ClaimID != "" && ev.Agent != "" {
			delete(p.working[ev.ClaimID], ev.Agent)
		}
	case blackboard.EventClaimCreated:
		p.claimSeen = true
		st := blackboard.ClaimStatus(ev.Field("status"))
		p.claims[ev.ClaimID] = st
		if st == blackboard.ClaimPendingApproval {
			p.approvals[ev.ClaimID] = ev.ArtefactID
		}
	case blackboard.EventClaimTransitioned:
		to := blackboard.ClaimStatus(ev.Field("to"))
		delete(p.approvals, ev.ClaimID)
		if to != blackboard.ClaimPendingConsensus {
			delete(p.unanswered, ev.ClaimID)
		}
		if to.Final() {
			delete(p.claims, ev.ClaimID)
			delete(p.working, ev.ClaimID)
			for k := range p.retries {
				if strings.HasPrefix(k, ev.ClaimID+"/") {
					delete(p.retries, k)
				}
			}
		} else {
			p.claims[ev.ClaimID] = to
			if to == blackboard.ClaimPendingApproval {
				p.approvals[ev.ClaimID] = ev.ArtefactID
			}
		}
	case blackboard.EventBidsRequestedAgain:
		waited, _ := strconv.ParseInt(ev.Field("waiting_ms"), 10, 64)
		p.unanswered[ev.ClaimID] = unansweredBids{agents: strings.ReplaceAll(ev.Field("agents"), ",", ", "), sinceMs: ev.TsMs - waited}
	case blackboard.EventClaimGranted:
		agents := map[string]bool{}
		for _, a := range strings.Split(ev.Field("agents"), ",") {
			if a != "" {
				agents[a] = true
			}
		}
		p.working[ev.ClaimID] = agents
	case blackboard.EventFeedbackClaimCreated:
		if n, err := strconv.Atoi(ev.Field("iteration")); err == nil && n > p.iteration {
			p.iteration = n
		}
		if ev.Agent != "" {
			p.working[ev.ClaimID] = map[string]bool{ev.Agent: true}
		}
	case blackboard.EventWorkflowCompleted:
		p.ended = true
		p.status = blackboard.WorkflowStatus(ev.Field("status"))
		p.reason = ev.Field("reason")
	}
}

// phaseNames says what a claim in each status is doing.
var phaseNames = map[blackboard.ClaimStatus]string{
	blackboard.ClaimPendingConsensus:  "bidding",
	blackboard.ClaimPendingApproval:   "awaiting approval",
	blackboard.ClaimPendingReview:     "review",
	blackboard.ClaimPendingParallel:   "parallel",
	blackboard.ClaimPendingExclusive:  "exclusive",
	blackboard.ClaimPendingAssignment: "rework",
}

// phases lists the phases of the open claims in lifecycle order.
func (p *workflowProgress) phases() []string {
	var out []string
	for _, st := range blackboard.AllClaimStatuses() {
		for _, s := range p.claims {
			if s == st {
				out = append(out, phaseNames[st])
				break
			}
		}
	}
	return out
}

// agents lists the agents at work, sorted.
func (p *workflowProgress) agents() []string {
	set := map[string]bool{}
	for _, as := range p.working {
		for a := range as {
			set[a] = true
		}
	}
	out := make([]string, 0, len(set))
	for a := range set {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// summary is the progress line without the elapsed time, at now (which
// counts down the retries' backoffs).
func (p *workflowProgress) summary(now time.Time) string {
	s := p.base() + fmt.Sprintf(" · %d artefact(s)", p.artefacts) + p.waiting()
	for _, r := range p.pendingRetries() {
		s += " · " + r.describe(now)
	}
	return s
}

// step is the progress line without counters or clocks: a log prints a
// line when it changes, so it gets one line per step that matters (a
// phase, an agent at work, a retry, an approval), not one per artefact.
func (p *workflowProgress) step() string {
	s := p.base() + p.waiting()
	for _, r := range p.pendingRetries() {
		s += fmt.Sprintf(" · %s: retry %d/%d: %s", r.agent, r.attempt+1, r.max, r.summary)
	}
	return s
}

// base renders the phase, the agents at work and the iteration.
func (p *workflowProgress) base() string {
	phase := "starting"
	if ph := p.phases(); len(ph) > 0 {
		phase = strings.Join(ph, ", ")
	} else if p.claimSeen {
		phase = "between claims"
	}
	working := "none"
	if as := p.agents(); len(as) > 0 {
		working = strings.Join(as, ", ")
	}
	return fmt.Sprintf("phase: %s · working: %s · iteration %d", phase, working, p.iteration)
}

// waiting renders what the workflow waits for: agents that have not
// answered a claim's bid requests, and human decisions, with the commands.
func (p *workflowProgress) waiting() string {
	var s string
	ids := make([]string, 0, len(p.unanswered))
	for id := range p.unanswered {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		u := p.unanswered[id]
		s += fmt.Sprintf(" · waiting for an answer from %s (asked again since %s)", u.agents,
			time.UnixMilli(u.sinceMs).Format("15:04:05"))
	}
	for _, id := range p.approvalArtefacts() {
		what := blackboard.ShortID(id)
		if t := p.types[id]; t != "" {
			what = t + " " + what
		}
		s += fmt.Sprintf(" · awaiting approval of %s: sett approve %s, or sett reject %s --reason TEXT", what, blackboard.ShortID(id), blackboard.ShortID(id))
	}
	return s
}

// approvalArtefacts lists the artefacts awaiting approval, sorted.
func (p *workflowProgress) approvalArtefacts() []string {
	out := make([]string, 0, len(p.approvals))
	for _, id := range p.approvals {
		if id != "" {
			out = append(out, id)
		}
	}
	sort.Strings(out)
	return out
}

// pendingRetries lists the retries waiting for their backoff, by agent.
func (p *workflowProgress) pendingRetries() []pendingRetry {
	out := make([]pendingRetry, 0, len(p.retries))
	for _, r := range p.retries {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].agent < out[j].agent })
	return out
}

// noteFailure records the summary of a Failure a pending retry follows.
func (p *workflowProgress) noteFailure(failureID, summary string) {
	for k, r := range p.retries {
		if r.failure == failureID {
			r.summary = summary
			p.retries[k] = r
		}
	}
}

// describe renders a pending retry: "coder: retry 2/5 in 57s: exit_nonzero:
// exit status 1: connection refused".
func (r pendingRetry) describe(now time.Time) string {
	left := max(r.due.Sub(now), 0).Round(time.Second)
	s := fmt.Sprintf("%s: retry %d/%d in %s", r.agent, r.attempt+1, r.max, left)
	if r.summary != "" {
		s += ": " + r.summary
	}
	return s
}

// progressLine shows the progress of a wait. On a terminal it is one line
// redrawn in place; elsewhere it prints a plain line whenever the state
// changes (never the same line twice), so logs stay readable.
type progressLine struct {
	w     io.Writer
	tty   bool
	style outputStyle
	start time.Time
	last  string
	drawn bool
}

// update shows p if it changed since the last update: on a terminal any
// change (the retries' countdowns too); in a log only a new step.
func (l *progressLine) update(p *workflowProgress) {
	now := l.style.Now()
	elapsed := humanDuration(now.Sub(l.start))
	key := p.step()
	if l.tty {
		key = elapsed + p.summary(now)
	}
	if key == l.last {
		return
	}
	l.last = key
	s := termsafe.Line(p.summary(now))
	if l.tty {
		fmt.Fprintf(l.w, "\r\x1b[K%s %s", l.style.paint(colourCyan, "⟳ "+elapsed), s)
		l.drawn = true
		return
	}
	fmt.Fprintf(l.w, "[%s] %s\n", elapsed, s)
}

// clear removes the redrawn line before the outcome is printed.
func (l *progressLine) clear() {
	if l.tty && l.drawn {
		fmt.Fprint(l.w, "\r\x1b[K")
		l.drawn = false
	}
}
