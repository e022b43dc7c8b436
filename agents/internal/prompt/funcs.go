package prompt

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/template"
	"unicode/utf8"
)

// funcs are the functions templates may call besides text/template's own.
var funcs = template.FuncMap{
	// trim removes leading and trailing white space.
	"trim": strings.TrimSpace,
	// lower lowercases a string.
	"lower": strings.ToLower,
	// clip keeps at most n characters of s and says how much it cut.
	"clip": clip,
	// short is the first 8 characters of an id, as listings show it.
	"short": func(id string) string {
		if len(id) > 8 {
			return id[:8]
		}
		return id
	},
	// review renders a review payload: a structured verdict as its
	// verdict, severity and findings, anything else as it is.
	"review": reviewText,
	// add adds two integers ("version {{add .Target.Version 1}}").
	"add": func(a, b int) int { return a + b },
}

// clip returns s cut to n characters, with a note of what was cut.
func clip(n int, s string) string {
	if n <= 0 || utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return fmt.Sprintf("%s\n[… %d more characters cut]", string(r[:n]), len(r)-n)
}

// reviewText renders a review's payload for a prompt. A structured review
// ({"verdict", "severity", "findings"} or the "status" form)
// becomes "Verdict: reject (Major)" and one line per finding; any other
// payload is the reviewer's text, trimmed.
func reviewText(payload string) string {
	var doc struct {
		Verdict  string `json:"verdict"`
		Status   string `json:"status"`
		Severity string `json:"severity"`
		Findings []any  `json:"findings"`
	}
	p := strings.TrimSpace(payload)
	if !strings.HasPrefix(p, "{") || json.Unmarshal([]byte(p), &doc) != nil || (doc.Verdict == "" && doc.Status == "") {
		return p
	}
	var b strings.Builder
	verdict := doc.Verdict
	if verdict == "" {
		verdict = doc.Status
	}
	b.WriteString("Verdict: " + verdict)
	if doc.Severity != "" {
		b.WriteString(" (" + doc.Severity + ")")
	}
	for _, f := range doc.Findings {
		switch v := f.(type) {
		case string:
			b.WriteString("\n- " + strings.TrimSpace(v))
		default:
			enc, _ := json.Marshal(v)
			b.WriteString("\n- " + string(enc))
		}
	}
	return b.String()
}
