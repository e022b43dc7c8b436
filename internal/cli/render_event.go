package cli

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/settdev/sett/internal/blackboard"
)

// eventRenderer prints events of the stream, one per line; `sett watch`
// and `sett forage --watch` share it.
type eventRenderer interface {
	render(ev blackboard.Event) error
}

// newEventRenderer returns the renderer for format "text" or "jsonl".
func newEventRenderer(w io.Writer, format string, style outputStyle, relative bool) eventRenderer {
	if format == "jsonl" {
		return &eventJSONRenderer{w: w}
	}
	// Start the columns at widths that fit the common values, so that a
	// stream rarely widens: clock times, the usual event names, short ids.
	return &eventTextRenderer{w: w, style: style, relative: relative, widths: [4]int{12, 22, 8, 8}}
}

// eventJSONRenderer prints one JSON object per event: id, event, ts (RFC
// 3339 with milliseconds, UTC), the four id fields (always present, ""
// when the event has none) and every other field of the event.
type eventJSONRenderer struct {
	w io.Writer
}

// eventJSONKeys are the fixed keys of a JSONL event, in output order.
var eventJSONKeys = []string{"id", "event", "ts", "workflow_id", "claim_id", "artefact_id", "agent"}

func (r *eventJSONRenderer) render(ev blackboard.Event) error {
	_, err := r.w.Write(eventJSON(ev))
	return err
}

// eventJSON encodes one event as a JSON line, the fixed keys first and the
// other fields sorted (a field that clashes with a fixed key is left out:
// the fixed key is the event's own).
func eventJSON(ev blackboard.Event) []byte {
	var b bytes.Buffer
	fixed := []string{ev.StreamID, string(ev.Type), rfc3339ms(eventTime(ev)), ev.WorkflowID, ev.ClaimID, ev.ArtefactID, ev.Agent}
	b.WriteByte('{')
	for i, k := range eventJSONKeys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeJSONPair(&b, k, fixed[i])
	}
	keys := make([]string, 0, len(ev.Fields))
	for k := range ev.Fields {
		if !slices.Contains(eventJSONKeys, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteByte(',')
		writeJSONPair(&b, k, ev.Fields[k])
	}
	b.WriteString("}\n")
	return b.Bytes()
}

func writeJSONPair(b *bytes.Buffer, k, v string) {
	kb, _ := json.Marshal(k) // strings always marshal
	vb, _ := json.Marshal(v)
	b.Write(kb)
	b.WriteByte(':')
	b.Write(vb)
}

// eventTime is when the event happened: its ts field, else the time in its
// stream id.
func eventTime(ev blackboard.Event) time.Time {
	if ev.TsMs > 0 {
		return msTime(ev.TsMs)
	}
	return msTime(streamIDMs(ev.StreamID))
}

// streamIDMs is the millisecond part of a stream id ("<ms>-<seq>").
func streamIDMs(id string) int64 {
	ms, _, _ := strings.Cut(id, "-")
	n, _ := strconv.ParseInt(ms, 10, 64)
	return n
}

// rfc3339ms formats t in UTC as RFC 3339 with milliseconds.
func rfc3339ms(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// eventTextRenderer prints aligned columns: time, event, workflow, agent
// and a one-line description. Columns only ever widen, so a stream stays
// aligned without buffering.
type eventTextRenderer struct {
	w        io.Writer
	style    outputStyle
	relative bool
	widths   [4]int
}

func (r *eventTextRenderer) render(ev blackboard.Event) error {
	now := r.style.Now()
	t := eventTime(ev)
	when := t.Local().Format("15:04:05.000")
	switch {
	case r.relative:
		when = ago(now, t)
	case t.Local().Format("2006-01-02") != now.Local().Format("2006-01-02"):
		when = t.Local().Format("2006-01-02 15:04:05.000")
	}
	agent := ev.Agent
	if agent == "" {
		agent = "-"
	}
	wf := "-"
	if ev.WorkflowID != "" {
		wf = blackboard.ShortID(ev.WorkflowID)
	}
	cols := []cell{
		{text: when, colour: colourGrey},
		{text: string(ev.Type), colour: eventColour(ev)},
		{text: wf},
		{text: agent},
	}
	var b strings.Builder
	for i, c := range cols {
		n := utf8.RuneCountInString(c.text)
		r.widths[i] = max(r.widths[i], n)
		b.WriteString(r.style.paint(c.colour, c.text))
		b.WriteString(strings.Repeat(" ", r.widths[i]-n+2))
	}
	b.WriteString(oneLine(eventDetails(ev)))
	b.WriteByte('\n')
	_, err := io.WriteString(r.w, b.String())
	return err
}

// eventColour picks an event's colour by what it means to a person:
// failures red, successes green, rework yellow, new work cyan, chatter
// grey.
func eventColour(ev blackboard.Event) colour {
	t := string(ev.Type)
	switch {
	case ev.Type == blackboard.EventWorkflowCompleted:
		switch blackboard.WorkflowStatus(ev.Field("status")) {
		case blackboard.WorkflowCompleted:
			return colourGreen
		case blackboard.WorkflowFailed, blackboard.WorkflowRejected:
			return colourRed
		}
		return colourYellow
	case ev.Type == blackboard.EventArtefactCreated && ev.Field("structural_type") == string(blackboard.StructuralFailure):
		return colourRed
	case strings.HasPrefix(t, "claim_terminated"), ev.Type == blackboard.EventToolFailed,
		ev.Type == blackboard.EventLeaseLost, ev.Type == blackboard.EventBudgetExceeded:
		return colourRed
	case ev.Type == blackboard.EventClaimCompleted, ev.Type == blackboard.EventReviewApproved:
		return colourGreen
	case ev.Type == blackboard.EventReviewRejected, ev.Type == blackboard.EventFeedbackClaimCreated,
		ev.Type == blackboard.EventArtefactReworked, ev.Type == blackboard.EventBidTimeout:
		return colourYellow
	case ev.Type == blackboard.EventArtefactCreated, ev.Type == blackboard.EventWorkflowStarted,
		ev.Type == blackboard.EventClaimGranted:
		return colourCyan
	case ev.Type == blackboard.EventBidSubmitted, ev.Type == blackboard.EventClaimTransitioned,
		ev.Type == blackboard.EventClaimCreated, ev.Type == blackboard.EventAgentRegistered,
		ev.Type == blackboard.EventLeaderElected:
		return colourGrey
	}
	return colourNone
}

// eventDetails describes an event in one line for people. Known events get
// a sentence; any other event lists its claim, artefact and fields.
func eventDetails(ev blackboard.Event) string {
	f := ev.Field
	claim := ""
	if ev.ClaimID != "" {
		claim = "claim " + blackboard.ShortID(ev.ClaimID)
	}
	switch ev.Type {
	case blackboard.EventArtefactCreated:
		s := fmt.Sprintf("%s v%s %s", f("type"), f("version"), blackboard.ShortID(ev.ArtefactID))
		if st := f("structural_type"); st != "" && st != string(blackboard.StructuralStandard) {
			s += " [" + st + "]"
		}
		if r := f("produced_by_role"); r != "" {
			s += " by " + r
		}
		if claim != "" {
			s += " for " + claim
		}
		return s
	case blackboard.EventWorkflowStarted:
		return "score " + cmp.Or(f("priority"), "0")
	case blackboard.EventWorkflowCompleted:
		return f("status") + ": " + f("reason")
	case blackboard.EventClaimCreated:
		return fmt.Sprintf("%s on %s (%s)", claim, blackboard.ShortID(ev.ArtefactID), f("status"))
	case blackboard.EventClaimTransitioned:
		return fmt.Sprintf("%s %s → %s", claim, f("from"), f("to"))
	case blackboard.EventBidSubmitted:
		return fmt.Sprintf("%s bid %s", claim, f("bid"))
	case blackboard.EventClaimGranted:
		return fmt.Sprintf("%s %s → %s", claim, f("phase"), f("agents"))
	case blackboard.EventReviewApproved:
		return fmt.Sprintf("%s review %s approved", claim, blackboard.ShortID(f("review_id")))
	case blackboard.EventReviewRejected:
		s := fmt.Sprintf("%s review %s rejected", claim, blackboard.ShortID(f("review_id")))
		if sev := f("severity"); sev != "" {
			s += " (" + sev + ")"
		}
		if r := f("verdict_reason"); r != "" {
			s += ": " + r
		}
		return s
	case blackboard.EventFeedbackClaimCreated:
		return fmt.Sprintf("%s iteration %s: rework of %s v%s", claim, f("iteration"), blackboard.ShortID(ev.ArtefactID), f("target_version"))
	}
	if r := f("reason"); r != "" && claim != "" {
		return claim + ": " + reasonForPeople(r) + restFields(ev, "reason")
	}
	parts := []string{}
	if claim != "" {
		parts = append(parts, claim)
	}
	if ev.ArtefactID != "" {
		parts = append(parts, "artefact "+blackboard.ShortID(ev.ArtefactID))
	}
	if rest := strings.TrimSpace(restFields(ev)); rest != "" {
		parts = append(parts, rest)
	}
	return strings.Join(parts, " ")
}

// restFields renders the event's fields except skip as " k=v k=v", ids
// shortened and values with spaces quoted.
func restFields(ev blackboard.Event, skip ...string) string {
	keys := make([]string, 0, len(ev.Fields))
	for k := range ev.Fields {
		if !slices.Contains(skip, k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		v := ev.Fields[k]
		if blackboard.ValidateID(v) == nil {
			v = blackboard.ShortID(v)
		} else if strings.ContainsAny(v, " \t\"") || v == "" {
			v = strconv.Quote(v)
		}
		b.WriteString(" " + k + "=" + v)
	}
	return b.String()
}

// noBidReason is the orchestrator's completion reason for a claim no
// agent bid on.
const noBidReason = "No agent bid (dead end)."

// reasonForPeople rewords a recorded reason where its words mislead: a
// claim nobody bids on is usually the configured end of a chain (no
// agent consumes the artefact's type), not an error.
func reasonForPeople(r string) string {
	if r == noBidReason {
		return "end of the chain: no agent takes this artefact further (none consumes its type)"
	}
	return r
}
