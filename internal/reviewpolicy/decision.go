package reviewpolicy

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/settdev/sett/internal/memory"
)

// Outcome is what a review phase leads to.
type Outcome string

// The outcomes.
const (
	// OutcomeProceed: the phase passes; the claim moves on.
	OutcomeProceed Outcome = "proceed"
	// OutcomeRework: the work goes back to its author with the reviews in
	// Decision.Rejecting as feedback.
	OutcomeRework Outcome = "rework"
	// OutcomeFail: the claim is terminated (and its workflow fails) with
	// Decision.Reason.
	OutcomeFail Outcome = "fail"
	// OutcomeReplan: the phase failed for want of usable reviews and its
	// cluster's on_error is replan (Cluster.ApplyOnError): the work goes
	// back to the producer of an upstream artefact, with the phase's
	// reviews as feedback.
	OutcomeReplan Outcome = "replan"
)

// AllOutcomes lists every outcome.
func AllOutcomes() []Outcome {
	return []Outcome{OutcomeProceed, OutcomeRework, OutcomeFail, OutcomeReplan}
}

// Valid reports whether o is one of AllOutcomes.
func (o Outcome) Valid() bool { return slices.Contains(AllOutcomes(), o) }

// Rule names the rule that decided a phase; the values are the policy
// settings they come from, readable in events and redis-cli.
type Rule string

// The rules, in the order Decide applies them.
const (
	// RuleInvalidPolicy: the policy contradicts itself (Policy.Validate);
	// the phase fails rather than guess.
	RuleInvalidPolicy Rule = "invalid_policy"
	// RuleGate: a gate reviewer failed; the other reviews were skipped.
	RuleGate Rule = "gate"
	// RuleRequired: a required reviewer has no usable review.
	RuleRequired Rule = "required"
	// RuleBlocking: a blocking reviewer is at or above fail_at.
	RuleBlocking Rule = "blocking"
	// RuleQuorum: fewer usable non-advisory reviews than min_reviews.
	RuleQuorum Rule = "min_reviews"
	// RuleMaxMissing: more non-advisory reviews missing than max_missing.
	RuleMaxMissing Rule = "max_missing"
	// RuleReworkAt: a usable non-advisory review asks for rework.
	RuleReworkAt Rule = "rework_at"
	// RuleProceed: no rule stopped the phase.
	RuleProceed Rule = "proceed"
	// RuleAtLimit: the phase asked for rework at the cluster's revision
	// limit and the cluster's at_limit is proceed (Cluster.ApplyLimit).
	RuleAtLimit Rule = "at_limit"
)

// AllRules lists every rule in the order Decide applies them.
func AllRules() []Rule {
	return []Rule{RuleInvalidPolicy, RuleGate, RuleRequired, RuleBlocking, RuleQuorum, RuleMaxMissing, RuleReworkAt, RuleProceed, RuleAtLimit}
}

// Valid reports whether r is one of AllRules.
func (r Rule) Valid() bool { return slices.Contains(AllRules(), r) }

// ReviewRead is one review as Decide read it.
type ReviewRead struct {
	Agent string `json:"agent"`
	// Role is Role.String: "blocking, required", "advisory", "ordinary".
	Role  string `json:"role"`
	State State  `json:"state"`
	// Status is the verdict's status; "" unless delivered.
	Status memory.Status `json:"status,omitempty"`
	// Severity lists the severities the review stated, comma-separated,
	// as written.
	Severity string `json:"severity,omitempty"`
	// CountedAs is the taxonomy severity the review counted as; "" when
	// it counted as none.
	CountedAs string `json:"counted_as,omitempty"`
	// Usable: delivered with a status other than ERROR.
	Usable bool `json:"usable"`
}

// Decision is what Decide concluded, with everything it read, for the
// review_decision event and the shared memory's Recent Updates.
type Decision struct {
	Outcome Outcome `json:"outcome"`
	// Rule is the rule that decided.
	Rule Rule `json:"rule"`
	// Reason is one sentence, fit for a termination reason or an event.
	Reason string `json:"reason"`
	// ReviewsRead lists every review in the order read.
	ReviewsRead []ReviewRead `json:"reviews_read"`
	// SeveritiesSeen lists the distinct severities stated, in the order
	// read, in the taxonomy's spelling when they are in it.
	SeveritiesSeen []string `json:"severities_seen"`
	// Rejecting names, in the order read, the reviewers whose usable
	// reviews reject or reach rework_at (advisory ones included): the
	// reviews that go back to the author when the outcome is rework.
	Rejecting []string `json:"rejecting"`
	// Warning is set when the phase proceeds although a rule asked for
	// more (RuleAtLimit); the decision is then recorded as a warning.
	Warning bool `json:"warning,omitempty"`
	// ContractGaps lists what reviewers got wrong about the contract
	// (unknown or missing severities, unreadable or contradictory
	// verdicts), each starting with the agent name.
	ContractGaps []string `json:"contract_gaps"`
}

// Line renders d as one line for the shared memory's Recent Updates:
// "review decision: rework (rework_at): <reason> Read: a DONE/Major, b
// missing. Gaps: ...".
func (d Decision) Line() string {
	var b strings.Builder
	fmt.Fprintf(&b, "review decision: %s (%s): %s", d.Outcome, d.Rule, d.Reason)
	if d.Warning {
		b.WriteString(" [warning]")
	}
	if len(d.ReviewsRead) > 0 {
		parts := make([]string, len(d.ReviewsRead))
		for i, r := range d.ReviewsRead {
			parts[i] = r.Agent + " " + r.summary()
		}
		b.WriteString(" Read: " + strings.Join(parts, ", ") + ".")
	}
	if len(d.ContractGaps) > 0 {
		b.WriteString(" Contract gaps: " + strings.Join(d.ContractGaps, "; ") + ".")
	}
	return b.String()
}

// summary is "DONE/Major", "NEEDS_REVISION", "missing" or "failed".
func (r ReviewRead) summary() string {
	if r.State != StateDelivered {
		return string(r.State)
	}
	s := string(r.Status)
	if r.Severity != "" {
		s += "/" + r.Severity
	}
	return s
}

// reading is Decide's working state for one review.
type reading struct {
	ReviewRead
	advisory bool
	blocking bool
	required bool
	rejects  bool
	rank     int // position in the taxonomy; len(Severities) for none
}

// Decide applies policy p to the reviews of one phase. It never fails: a
// policy that does not pass Validate fails the phase with
// RuleInvalidPolicy, and unreadable or unknown values count as the worst.
// The package documentation lists the rules and their order.
func Decide(p Policy, reviews []Review) Decision {
	p = p.WithDefaults()
	d := Decision{ReviewsRead: []ReviewRead{}, SeveritiesSeen: []string{}, Rejecting: []string{}, ContractGaps: []string{}}

	ordered := slices.Clone(reviews)
	slices.SortStableFunc(ordered, func(a, b Review) int {
		return cmp.Or(cmp.Compare(gateFirst(p, a), gateFirst(p, b)), cmp.Compare(group(a.Role), group(b.Role)), cmp.Compare(a.Agent, b.Agent))
	})
	none := len(p.Severities)
	reads := make([]reading, 0, len(ordered))
	for _, r := range ordered {
		rd := d.read(p, r, none)
		reads = append(reads, rd)
		d.ReviewsRead = append(d.ReviewsRead, rd.ReviewRead)
	}

	if err := p.Validate(); err != nil {
		return d.decide(OutcomeFail, RuleInvalidPolicy, err.Error())
	}
	reworkRank, _ := p.rank(p.ReworkAt)
	failRank, _ := p.rank(p.FailAt)
	for _, rd := range reads {
		if rd.usable() && (rd.rejects || rd.rank <= reworkRank) {
			d.Rejecting = append(d.Rejecting, rd.Agent)
		}
	}

	// 0. Gate reviewers: a failed gate decides alone.
	if reason, failed := d.gateCheck(p, reads, reworkRank); failed {
		return d.decide(OutcomeFail, RuleGate, reason)
	}

	// 1. Required and blocking reviewers, in reading order.
	for _, rd := range reads {
		switch {
		case rd.required && !rd.usable():
			return d.decide(OutcomeFail, RuleRequired, fmt.Sprintf("required reviewer %s has no usable review (%s)", rd.Agent, rd.why()))
		case rd.blocking && rd.usable() && rd.rank <= failRank:
			return d.decide(OutcomeFail, RuleBlocking, fmt.Sprintf("blocking reviewer %s reported %s, at or above fail_at %s", rd.Agent, rd.CountedAs, p.Severities[failRank]))
		}
	}

	// 2 and 3. Enough usable reviews, not too many missing.
	var usable int
	var missing []string
	for _, rd := range reads {
		switch {
		case rd.advisory:
		case rd.usable():
			usable++
		default:
			missing = append(missing, rd.Agent+" "+rd.why())
		}
	}
	if usable < p.MinReviews {
		return d.decide(OutcomeFail, RuleQuorum, fmt.Sprintf("%s from non-advisory reviewers, fewer than min_reviews %d", count(usable, "usable review"), p.MinReviews))
	}
	if p.MaxMissing != nil && len(missing) > *p.MaxMissing {
		return d.decide(OutcomeFail, RuleMaxMissing, fmt.Sprintf("%s missing, failed or ERROR (%s), more than max_missing %d",
			count(len(missing), "non-advisory review"), strings.Join(missing, ", "), *p.MaxMissing))
	}

	// 4. Rework.
	var asks []string
	for _, rd := range reads {
		if rd.advisory || !rd.usable() {
			continue
		}
		switch {
		case rd.rank <= reworkRank:
			asks = append(asks, fmt.Sprintf("%s (%s)", rd.Agent, rd.CountedAs))
		case rd.rejects && p.ReworkOnReject:
			asks = append(asks, fmt.Sprintf("%s (%s)", rd.Agent, rd.Status))
		}
	}
	if len(asks) > 0 {
		why := "at or above rework_at " + p.Severities[reworkRank]
		if p.ReworkOnReject {
			why = "rejecting, or at or above rework_at " + p.Severities[reworkRank]
		}
		return d.decide(OutcomeRework, RuleReworkAt, fmt.Sprintf("%s %s", strings.Join(asks, ", "), why))
	}
	return d.decide(OutcomeProceed, RuleProceed, fmt.Sprintf("%s, none at or above rework_at %s", count(usable, "usable review"), p.Severities[reworkRank]))
}

func (d Decision) decide(o Outcome, r Rule, reason string) Decision {
	d.Outcome, d.Rule, d.Reason = o, r, reason
	return d
}

// gateFirst orders gate reviewers before the others.
func gateFirst(p Policy, r Review) int {
	if slices.Contains(p.Gate, r.Agent) {
		return 0
	}
	return 1
}

// group orders reviewers: blocking, then other non-advisory, then advisory.
func group(r Role) int {
	switch {
	case r.Blocking:
		return 0
	case r.advisory():
		return 2
	}
	return 1
}

// read turns one review into a reading, recording severities seen and
// contract gaps in d.
func (d *Decision) read(p Policy, r Review, none int) reading {
	rd := reading{
		ReviewRead: ReviewRead{Agent: r.Agent, Role: r.Role.String(), State: r.State},
		advisory:   r.Role.advisory(), blocking: r.Role.Blocking, required: r.Role.Required,
		rank: none,
	}
	gap := func(format string, args ...any) {
		d.ContractGaps = append(d.ContractGaps, r.Agent+": "+fmt.Sprintf(format, args...))
	}
	if !r.State.Valid() {
		gap("review state %q is not delivered, failed or missing; read as missing", r.State)
		rd.State = StateMissing
	}
	if rd.State != StateDelivered {
		return rd
	}
	v := r.Verdict
	for _, g := range v.Gaps {
		gap("%s", g)
	}
	rd.Status = v.Status
	if !rd.Status.Valid() {
		gap("verdict status %q is not DONE, NEEDS_REVISION or ERROR; read as NEEDS_REVISION", v.Status)
		rd.Status = memory.StatusNeedsRevision
	}
	rd.Usable = rd.Status != memory.StatusError
	rd.rejects = rd.Status == memory.StatusNeedsRevision

	var stated []string
	if !noSeverity(v.Severity) {
		stated = append(stated, strings.TrimSpace(v.Severity))
	}
	if !noSeverity(v.MemorySeverity) {
		stated = append(stated, strings.TrimSpace(v.MemorySeverity))
	}
	for _, f := range v.Findings {
		if !noSeverity(f.Severity) {
			stated = append(stated, strings.TrimSpace(f.Severity))
		}
	}
	rd.Severity = strings.Join(stated, ", ")
	worst := p.Severities[0]
	for _, s := range stated {
		i, ok := p.rank(s)
		name := s
		if ok {
			name = p.Severities[i]
		} else {
			gap("severity %q is not one of [%s]; counted as %s", s, strings.Join(p.Severities, ", "), worst)
		}
		if !slices.ContainsFunc(d.SeveritiesSeen, func(x string) bool { return strings.EqualFold(x, name) }) {
			d.SeveritiesSeen = append(d.SeveritiesSeen, name)
		}
		rd.rank = min(rd.rank, i) // i is 0, the worst, when unknown
	}
	if len(stated) == 0 && rd.Usable {
		switch {
		case rd.rejects && !p.ReworkOnReject:
			// Without ReworkOnReject only a severity can send a rejection
			// back, so one without a severity must not slip through.
			gap("rejects without a severity; counted as %s", worst)
			rd.rank = 0
		case p.SeverityRequired:
			gap("gave no severity (severity_required); counted as %s", worst)
			rd.rank = 0
		}
	}
	if rd.rank < none {
		rd.CountedAs = p.Severities[rd.rank]
	}
	return rd
}

func (rd reading) usable() bool { return rd.Usable }

// why says why a review is not usable.
func (rd reading) why() string {
	switch {
	case rd.State == StateFailed:
		return "its tool failed"
	case rd.State == StateDelivered:
		return "status " + string(rd.Status)
	case rd.State == StateSkipped:
		return "skipped"
	}
	return "missing"
}

// count renders "1 usable review" or "3 usable reviews".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
