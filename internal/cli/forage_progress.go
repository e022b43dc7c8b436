package cli

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/settdev/sett/internal/termsafe"
	"github.com/settdev/sett/pkg/blackboard"
)

// workflowProgress is what `forage --wait` knows about one workflow, built
// from its events alone: the open claims and their phases, the agents
// working (granted and not yet delivered), the feedback iteration and the
// outcome. The zero value is not usable; see newWorkflowProgress.
type workflowProgress struct {
	workflowID string
	claims     map[string]blackboard.ClaimStatus
	working    map[string]map[string]bool
	// unanswered holds, per claim still collecting bids past its
	// deadline, the configured agents it waits for (bids_requested_again)
	// and since when (ms, Redis clock).
	unanswered map[string]unansweredBids
	iteration  int
	artefacts  int
	claimSeen  bool
	ended      bool
	status     blackboard.WorkflowStatus
	reason     string
}

func newWorkflowProgress(workflowID string) *workflowProgress {
	return &workflowProgress{
		workflowID: workflowID,
		claims:     map[string]blackboard.ClaimStatus{},
		working:    map[string]map[string]bool{},
		unanswered: map[string]unansweredBids{},
	}
}

// unansweredBids is what a claim waits for past its bid deadline.
type unansweredBids struct {
	agents  string
	sinceMs int64
}

// apply folds one event in; events of other workflows are ignored.
func (p *workflowProgress) apply(ev blackboard.Event) {
	if ev.WorkflowID != p.workflowID {
		return
	}
	switch ev.Type {
	case blackboard.EventArtefactCreated:
		p.artefacts++
		if ev.ClaimID != "" && ev.Agent != "" {
			delete(p.working[ev.ClaimID], ev.Agent)
		}
	case blackboard.EventClaimCreated:
		p.claimSeen = true
		p.claims[ev.ClaimID] = blackboard.ClaimStatus(ev.Field("status"))
	case blackboard.EventClaimTransitioned:
		to := blackboard.ClaimStatus(ev.Field("to"))
		if to != blackboard.ClaimPendingConsensus {
			delete(p.unanswered, ev.ClaimID)
		}
		if to.Final() {
			delete(p.claims, ev.ClaimID)
			delete(p.working, ev.ClaimID)
		} else {
			p.claims[ev.ClaimID] = to
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

// summary is the progress line without the elapsed time.
func (p *workflowProgress) summary() string {
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
	line := fmt.Sprintf("phase: %s · working: %s · iteration %d · %d artefact(s)", phase, working, p.iteration, p.artefacts)
	ids := make([]string, 0, len(p.unanswered))
	for id := range p.unanswered {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		u := p.unanswered[id]
		line += fmt.Sprintf(" · waiting for an answer from %s (asked again since %s)", u.agents,
			time.UnixMilli(u.sinceMs).Format("15:04:05"))
	}
	return line
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

// update shows p if it changed since the last update.
func (l *progressLine) update(p *workflowProgress) {
	s := termsafe.Line(p.summary())
	if s == l.last {
		return
	}
	l.last = s
	elapsed := humanDuration(l.style.Now().Sub(l.start))
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
