package answer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// thinkBlock matches the reasoning that some models (DeepSeek R1, Qwen 3
// through Ollama or vLLM) put before their answer.
var thinkBlock = regexp.MustCompile(`(?s)^\s*<(think|thinking|reasoning)>.*?</(think|thinking|reasoning)>`)

// Clean removes a leading reasoning block and surrounding white space.
func Clean(s string) string {
	return strings.TrimSpace(thinkBlock.ReplaceAllString(s, ""))
}

// fence matches a Markdown code fence: the opening line with an optional
// language, the body, the closing line.
var fence = regexp.MustCompile("(?s)```[A-Za-z0-9_+-]*[ \t]*\r?\n(.*?)\r?\n?```")

// Text returns a Markdown answer as the payload: cleaned, and unwrapped
// when the whole answer is one fenced block (```markdown … ```).
func Text(s string) (string, error) {
	t := Clean(s)
	if m := fence.FindStringSubmatchIndex(t); m != nil && m[0] == 0 && m[1] == len(t) {
		t = strings.TrimSpace(t[m[2]:m[3]])
	}
	if t == "" {
		return "", &ParseError{Reason: "the model's answer is empty", Answer: s}
	}
	return t, nil
}

// Object returns the first JSON object in s: the whole answer, the first
// fenced block that holds one, or the first "{" after leading prose from
// which an object decodes (trailing text is ignored).
func Object(s string) (json.RawMessage, error) {
	t := Clean(s)
	var candidates []string
	candidates = append(candidates, t)
	for _, m := range fence.FindAllStringSubmatch(t, -1) {
		candidates = append(candidates, strings.TrimSpace(m[1]))
	}
	for _, c := range candidates {
		if obj, ok := firstObject(c); ok {
			return obj, nil
		}
	}
	return nil, &ParseError{Reason: "the model's answer holds no JSON object", Answer: s}
}

// firstObject decodes an object starting at each "{" of s in turn.
func firstObject(s string) (json.RawMessage, bool) {
	for i := 0; i < len(s); i++ {
		j := strings.IndexByte(s[i:], '{')
		if j < 0 {
			return nil, false
		}
		i += j
		dec := json.NewDecoder(strings.NewReader(s[i:]))
		var obj json.RawMessage
		if dec.Decode(&obj) == nil && bytes.HasPrefix(obj, []byte("{")) {
			return obj, true
		}
	}
	return nil, false
}

// Verdict is the structured review: what the review policy reads.
type Verdict struct {
	// Verdict is "approve" or "reject".
	Verdict string `json:"verdict"`
	// Severity is the worst problem found: Blocker, Major or Minor (other
	// values are kept; the review policy counts them as the worst).
	Severity string `json:"severity,omitempty"`
	// Findings says what to change, one sentence each; never nil.
	Findings []string `json:"findings"`
}

// knownSeverities are the severities the reviewer template names, worst
// first.
var knownSeverities = []string{"Blocker", "Major", "Minor"}

// ParseVerdict reads a reviewer's answer: a JSON object with "verdict"
// ("approve"/"reject", any case, also "approved"/"rejected"), optional
// "severity" (case fixed to Blocker/Major/Minor) and "findings" (strings;
// other values are kept as compact JSON text; one string counts as a
// list of one).
func ParseVerdict(s string) (Verdict, error) {
	raw, err := Object(s)
	if err != nil {
		return Verdict{}, &ParseError{Reason: `the model's answer holds no JSON verdict ({"verdict": "approve"|"reject", "severity": ..., "findings": [...]})`, Answer: s}
	}
	var doc struct {
		Verdict  *string         `json:"verdict"`
		Severity any             `json:"severity"`
		Findings json.RawMessage `json:"findings"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return Verdict{}, &ParseError{Reason: "the model's verdict is not usable: " + err.Error(), Answer: s}
	}
	if doc.Verdict == nil {
		return Verdict{}, &ParseError{Reason: `the model's JSON has no "verdict" field ("approve" or "reject")`, Answer: s}
	}
	var v Verdict
	switch strings.ToLower(strings.TrimSpace(*doc.Verdict)) {
	case "approve", "approved":
		v.Verdict = "approve"
	case "reject", "rejected":
		v.Verdict = "reject"
	default:
		return Verdict{}, &ParseError{Reason: fmt.Sprintf(`the model's verdict is %q; it must be "approve" or "reject"`, *doc.Verdict), Answer: s}
	}
	if sev, ok := doc.Severity.(string); ok {
		v.Severity = strings.TrimSpace(sev)
		for _, k := range knownSeverities {
			if strings.EqualFold(v.Severity, k) {
				v.Severity = k
			}
		}
	} else if doc.Severity != nil {
		return Verdict{}, &ParseError{Reason: "the model's severity is not a string (Blocker, Major or Minor)", Answer: s}
	}
	v.Findings, err = findings(doc.Findings)
	if err != nil {
		return Verdict{}, &ParseError{Reason: "the model's findings are not usable: " + err.Error(), Answer: s}
	}
	return v, nil
}

// findings reads a list of findings: strings, other values as JSON text.
func findings(raw json.RawMessage) ([]string, error) {
	out := []string{}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return out, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one = strings.TrimSpace(one); one != "" {
			out = append(out, one)
		}
		return out, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("findings must be a list of strings")
	}
	for _, item := range list {
		var s string
		if json.Unmarshal(item, &s) == nil {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
			continue
		}
		var b bytes.Buffer
		if err := json.Compact(&b, item); err != nil {
			return nil, err
		}
		out = append(out, b.String())
	}
	return out, nil
}

// maxLearningLen bounds a learning, in characters: the learner template
// asks for one or two sentences, and Agent_Memory.md is read before every
// piece of work.
const maxLearningLen = 800

// learningPrefix matches what models put before a learning despite being
// told not to: list markers, quote markers, headers, "Learning:".
var learningPrefix = regexp.MustCompile(`(?i)^(?:[#>*\-•\s]+|\d+[.)]\s+|(?:\*\*)?learning(?:\*\*)?\s*:\s*(?:\*\*)?)+`)

// Learning reads a learner's answer: ONE learning as one line of
// text. Reasoning, fences, list and header markers, a "Learning:" label and
// wrapping quotes are removed; an answer that is a JSON object with a
// "learning" string gives that string. Empty or overlong answers are
// errors.
func Learning(s string) (string, error) {
	t, err := Text(s)
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(t, "{") {
		if obj, ok := firstObject(t); ok {
			var doc struct {
				Learning string `json:"learning"`
			}
			if json.Unmarshal(obj, &doc) == nil && strings.TrimSpace(doc.Learning) != "" {
				t = doc.Learning
			}
		}
	}
	var lines, headings []string
	for _, line := range strings.Split(t, "\n") {
		line = strings.TrimSpace(line)
		heading := strings.HasPrefix(line, "#")
		line = strings.TrimSpace(learningPrefix.ReplaceAllString(line, ""))
		switch {
		case line == "":
		case heading:
			headings = append(headings, line)
		default:
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		// Only headings: the model put the learning in one.
		lines = headings
	}
	t = strings.Join(lines, " ")
	t = strings.TrimSpace(strings.Trim(t, `"“”'`))
	if t == "" {
		return "", &ParseError{Reason: "the model's answer holds no learning", Answer: s}
	}
	if n := utf8.RuneCountInString(t); n > maxLearningLen {
		return "", &ParseError{Reason: fmt.Sprintf("the learning is %d characters long; the learner asks for ONE learning of 1-2 sentences (at most %d characters)", n, maxLearningLen), Answer: s}
	}
	return t, nil
}

// Summary returns a one-line summary of a Markdown text: its first
// non-empty line without heading, list, quote and bold markers.
func Summary(text string) string {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			continue
		}
		line = strings.ReplaceAll(line, "**", "")
		line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#>*-• "))
		if line != "" {
			return line
		}
	}
	return ""
}
