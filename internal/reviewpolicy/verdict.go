package reviewpolicy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/settdev/sett/internal/memory"
)

// Verdict is what one reviewer said, as Judge reads it.
type Verdict struct {
	// Status is DONE (approve), NEEDS_REVISION (reject) or ERROR (the
	// reviewer could not review). Judge always sets it.
	Status memory.Status `json:"status"`
	// Severity is the overall severity as stated (trimmed), "" when none:
	// the payload's, else the agent memory's.
	Severity string `json:"severity,omitempty"`
	// MemorySeverity is the agent memory's highest_severity when the
	// payload states a different one of its own; "" otherwise. Decide
	// counts it with the others, so the worst of payload and memory wins.
	MemorySeverity string `json:"memory_severity,omitempty"`
	// Findings are the payload's findings, when it listed any.
	Findings []Finding `json:"findings,omitempty"`
	// Feedback is the payload text for a verdict that does not approve:
	// what goes back to the author. "" for approvals.
	Feedback string `json:"-"`
	// Basis says which input decided Status.
	Basis Basis `json:"basis"`
	// Reason is a short explanation for logs and events, such as
	// "verdict reject" or "free-text review".
	Reason string `json:"reason"`
	// Gaps are the contract gaps noticed while reading: values Judge could
	// not read or that contradict each other.
	Gaps []string `json:"gaps,omitempty"`
}

// Approves reports whether the verdict approves (Status DONE).
func (v Verdict) Approves() bool { return v.Status == memory.StatusDone }

// Finding is one finding of a structured review.
type Finding struct {
	Severity string `json:"severity,omitempty"`
	Text     string `json:"text"`
}

// Basis says which input decided a verdict's status.
type Basis string

// The bases, in order of precedence.
const (
	// BasisPayload: the payload's verdict or status field.
	BasisPayload Basis = "payload"
	// BasisMemory: the reviewer's agent memory.
	BasisMemory Basis = "memory"
	// BasisLegacy: the legacy payload forms ({} approves, anything else
	// rejects).
	BasisLegacy Basis = "legacy"
)

// AllBases lists every basis.
func AllBases() []Basis { return []Basis{BasisPayload, BasisMemory, BasisLegacy} }

// Valid reports whether b is one of AllBases.
func (b Basis) Valid() bool {
	for _, x := range AllBases() {
		if b == x {
			return true
		}
	}
	return false
}

// noSeverity reports whether s states no severity: empty, "N/A" or "none".
func noSeverity(s string) bool {
	s = strings.TrimSpace(s)
	return s == "" || strings.EqualFold(s, "N/A") || strings.EqualFold(s, "none")
}

// statusOrder ranks statuses from best to worst, for "the worse wins".
var statusOrder = map[memory.Status]int{memory.StatusDone: 0, memory.StatusNeedsRevision: 1, memory.StatusError: 2}

// Judge reads one review: its payload (the Review artefact's payload text)
// and, when the reviewer's tool returned one, its agent memory (nil when
// none). The package documentation gives the precedence. Judge never
// fails: what it cannot read is a rejection and a contract gap.
//
// The legacy forms keep their meaning (the orchestrator's JudgeReview
// before this package): {} and [] approve, {"verdict": "approve"} approves,
// {"verdict": "reject"} rejects, an empty payload is not an approval, and
// any other JSON or free text is a rejection whose text is the feedback.
func Judge(payload string, mem *memory.AgentMemory) Verdict {
	p := strings.TrimSpace(payload)
	var v Verdict
	var doc map[string]json.RawMessage
	isObject := json.Unmarshal([]byte(p), &doc) == nil && doc != nil

	if isObject {
		v.readStructured(doc)
	}
	if mem != nil {
		switch {
		case v.Status == "" && mem.Status.Valid():
			v.Status, v.Basis, v.Reason = mem.Status, BasisMemory, "memory status "+string(mem.Status)
		case v.Status != "" && mem.Status.Valid() && mem.Status != v.Status:
			// Conflicting signals take the worst case.
			worse := v.Status
			if statusOrder[mem.Status] > statusOrder[v.Status] {
				worse = mem.Status
				v.Basis, v.Reason = BasisMemory, "memory status "+string(mem.Status)+" (worse than the payload's "+string(v.Status)+")"
			}
			v.Gaps = append(v.Gaps, fmt.Sprintf("the payload says %s but the agent memory says %s; read as the worse, %s", v.Status, mem.Status, worse))
			v.Status = worse
		}
		switch ms := strings.TrimSpace(mem.HighestSeverity); {
		case noSeverity(ms):
		case noSeverity(v.Severity):
			v.Severity = ms
		case !strings.EqualFold(ms, v.Severity):
			v.MemorySeverity = ms
		}
	}
	if v.Status == "" {
		v.Basis = BasisLegacy
		switch {
		case p == "{}" || p == "[]" || (isObject && len(doc) == 0) || isEmptyArray(p):
			v.Status, v.Reason = memory.StatusDone, "empty review (approval)"
		case p == "":
			v.Status, v.Reason = memory.StatusNeedsRevision, "empty payload is not an approval"
		case isObject:
			v.Status, v.Reason = memory.StatusNeedsRevision, "structured review without a verdict"
		case json.Valid([]byte(p)):
			v.Status, v.Reason = memory.StatusNeedsRevision, "JSON review that is not an object"
		default:
			v.Status, v.Reason = memory.StatusNeedsRevision, "free-text review"
		}
	}
	if noSeverity(v.Severity) {
		v.Severity = ""
	}
	if !v.Approves() {
		v.Feedback = p
	}
	return v
}

// readStructured reads the verdict, status, severity and findings fields.
func (v *Verdict) readStructured(doc map[string]json.RawMessage) {
	var fromVerdict, fromStatus memory.Status
	if raw, ok := doc["verdict"]; ok && !isNull(raw) {
		s, _ := jsonString(raw)
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "approve", "approved":
			fromVerdict = memory.StatusDone
		case "reject", "rejected":
			fromVerdict = memory.StatusNeedsRevision
		default:
			fromVerdict = memory.StatusNeedsRevision
			v.Gaps = append(v.Gaps, fmt.Sprintf("verdict %s is not approve or reject; read as a rejection", short(raw)))
		}
	}
	if raw, ok := doc["status"]; ok && !isNull(raw) {
		s, _ := jsonString(raw)
		word, _, _ := strings.Cut(s, ":")
		fromStatus = memory.Status(strings.ToUpper(strings.TrimSpace(word)))
		if !fromStatus.Valid() {
			fromStatus = memory.StatusNeedsRevision
			v.Gaps = append(v.Gaps, fmt.Sprintf("status %s is not DONE, NEEDS_REVISION or ERROR; read as NEEDS_REVISION", short(raw)))
		}
	}
	switch {
	case fromVerdict != "" && fromStatus != "":
		v.Status, v.Reason = fromStatus, "status "+string(fromStatus)
		if fromVerdict != fromStatus {
			if statusOrder[fromVerdict] > statusOrder[fromStatus] {
				v.Status, v.Reason = fromVerdict, "verdict "+verdictWord(fromVerdict)
			}
			v.Gaps = append(v.Gaps, fmt.Sprintf("verdict %s and status %s disagree; read as %s", verdictWord(fromVerdict), fromStatus, v.Status))
		}
	case fromVerdict != "":
		v.Status, v.Reason = fromVerdict, "verdict "+verdictWord(fromVerdict)
	case fromStatus != "":
		v.Status, v.Reason = fromStatus, "status "+string(fromStatus)
	}
	if v.Status != "" {
		v.Basis = BasisPayload
	}

	if raw, ok := doc["severity"]; ok && !isNull(raw) {
		if s, ok := jsonString(raw); ok {
			v.Severity = strings.TrimSpace(s)
		} else {
			v.Gaps = append(v.Gaps, fmt.Sprintf("severity %s is not a string; ignored", short(raw)))
		}
	}
	if raw, ok := doc["findings"]; ok && !isNull(raw) {
		v.Findings = v.readFindings(raw)
	}
}

// findingTextKeys are the fields a finding object may hold its text in,
// in order of preference.
var findingTextKeys = []string{"text", "message", "description", "summary", "title", "finding"}

func (v *Verdict) readFindings(raw json.RawMessage) []Finding {
	if s, ok := jsonString(raw); ok {
		return []Finding{{Text: strings.TrimSpace(s)}}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		v.Gaps = append(v.Gaps, fmt.Sprintf("findings %s is not a list; ignored", short(raw)))
		return nil
	}
	out := make([]Finding, 0, len(items))
	for _, item := range items {
		if s, ok := jsonString(item); ok {
			out = append(out, Finding{Text: strings.TrimSpace(s)})
			continue
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(item, &obj) != nil || obj == nil {
			out = append(out, Finding{Text: compact(item)})
			continue
		}
		f := Finding{Text: compact(item)}
		for _, k := range findingTextKeys {
			if s, ok := jsonString(obj[k]); ok && strings.TrimSpace(s) != "" {
				f.Text = strings.TrimSpace(s)
				break
			}
		}
		if s, ok := jsonString(obj["severity"]); ok && !noSeverity(s) {
			f.Severity = strings.TrimSpace(s)
		}
		out = append(out, f)
	}
	return out
}

func verdictWord(s memory.Status) string {
	if s == memory.StatusDone {
		return "approve"
	}
	return "reject"
}

func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func isEmptyArray(p string) bool {
	var a []json.RawMessage
	return strings.HasPrefix(p, "[") && json.Unmarshal([]byte(p), &a) == nil && len(a) == 0
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// short renders a JSON value for a message, cut to 60 bytes.
func short(raw json.RawMessage) string {
	s := compact(raw)
	if len(s) > 60 {
		s = strings.ToValidUTF8(s[:57], "") + "..."
	}
	return s
}
