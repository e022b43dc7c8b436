package coder

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/settdev/sett/internal/tool"
)

// cliAnswer is what a coding CLI said when it finished.
type cliAnswer struct {
	// Text is its final message (Claude Code's "result"), or its stdout.
	Text string
	// IsError is set when the CLI reported a failure in its JSON result
	// although it exited 0.
	IsError bool
	// Usage is what it reported spending, or nil.
	Usage *tool.Usage
}

// parseCLIOutput reads Claude Code's `--output-format json` result
// ({"type": "result", "is_error", "result", "usage", "modelUsage", ...});
// any other output is kept as plain text.
func parseCLIOutput(stdout []byte) cliAnswer {
	text := strings.TrimSpace(string(stdout))
	var doc struct {
		Type    string `json:"type"`
		Subtype string `json:"subtype"`
		IsError bool   `json:"is_error"`
		Result  string `json:"result"`
		Usage   *struct {
			InputTokens              int64 `json:"input_tokens"`
			CacheCreationInputTokens int64 `json:"cache_creation_input_tokens"`
			CacheReadInputTokens     int64 `json:"cache_read_input_tokens"`
			OutputTokens             int64 `json:"output_tokens"`
		} `json:"usage"`
		ModelUsage map[string]json.RawMessage `json:"modelUsage"`
	}
	if !strings.HasPrefix(text, "{") || json.Unmarshal([]byte(text), &doc) != nil || doc.Type != "result" {
		return cliAnswer{Text: text}
	}
	a := cliAnswer{Text: strings.TrimSpace(doc.Result), IsError: doc.IsError}
	if a.Text == "" && doc.Subtype != "" && doc.Subtype != "success" {
		a.Text = doc.Subtype
	}
	if u := doc.Usage; u != nil {
		model := "claude-code"
		if len(doc.ModelUsage) > 0 {
			names := make([]string, 0, len(doc.ModelUsage))
			for name := range doc.ModelUsage {
				names = append(names, name)
			}
			slices.Sort(names)
			model = strings.Join(names, "+")
		}
		a.Usage = &tool.Usage{Model: model, InputTokens: u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
			OutputTokens: u.OutputTokens}
	}
	return a
}
