package cli

import (
	"errors"
	"maps"
	"strings"
	"testing"
)

func TestParseGoalFile(t *testing.T) {
	cases := []struct {
		name        string
		file        string
		text        string
		meta        map[string]string
		errContains []string
	}{
		{
			name: "no frontmatter",
			file: "Add a /health endpoint\n\nReturn 200.\n",
			text: "Add a /health endpoint\n\nReturn 200.",
		},
		{
			name: "frontmatter with the usual keys",
			file: "---\npriority: 5\ndeadline: 2024-06-01\nfrom: alice@example.com\nsubject: Health check\n---\n\nAdd a /health endpoint.\n",
			text: "Add a /health endpoint.",
			meta: map[string]string{"priority": "5", "deadline": "2024-06-01", "from": "alice@example.com", "subject": "Health check"},
		},
		{
			name: "other scalar keys, quoting, CRLF, BOM and a null value",
			file: "\ufeff---\r\nteam: \"platform\"\r\nurgent: true\r\nestimate: 2.5\r\nnotes:\r\n---\r\nBody\r\n",
			text: "Body",
			meta: map[string]string{"team": "platform", "urgent": "true", "estimate": "2.5"},
		},
		{
			name: "empty frontmatter",
			file: "---\n---\nJust the body",
			text: "Just the body",
		},
		{
			name: "dots close the frontmatter",
			file: "---\nfrom: bob\n...\nBody",
			text: "Body", meta: map[string]string{"from": "bob"},
		},
		{
			name: "negative priority",
			file: "---\npriority: -2\n---\nlow",
			text: "low", meta: map[string]string{"priority": "-2"},
		},
		{
			name:        "invalid YAML names the file line",
			file:        "---\nfrom: alice\nsubject: [unclosed\n---\nBody",
			errContains: []string{"goal.md:3:", "invalid YAML"},
		},
		{
			name:        "a key without a colon",
			file:        "---\nfrom: alice\njust words\nsubject: x\n---\nBody",
			errContains: []string{"goal.md:3:", "invalid YAML", "could not find expected ':'"},
		},
		{
			name:        "an unclosed list between other keys",
			file:        "---\na: 1\nb: 2\nc: [x\nd: 4\n---\nBody",
			errContains: []string{"goal.md:4:", "did not find expected ',' or ']'"},
		},
		{
			name:        "a tab in the indentation",
			file:        "---\na: 1\n\tb: 2\n---\nBody",
			errContains: []string{"goal.md:3:", "tab character"},
		},
		{
			name:        "a list is not a scalar",
			file:        "---\nfrom: alice\ntags:\n  - a\n  - b\n---\nBody",
			errContains: []string{"goal.md:4:", "tags must be a single value", "not a list"},
		},
		{
			name:        "a mapping is not a scalar",
			file:        "---\nfrom:\n  name: alice\n---\nBody",
			errContains: []string{"goal.md:3:", "from must be a single value", "not a mapping"},
		},
		{
			name: "priority as a label, deadline and sender for the score",
			file: "---\nsubject: x\npriority: High\ndeadline: 2026-01-29T09:00:00Z\nfrom: CEO <ceo@company.com>\n---\nBody",
			text: "Body",
			meta: map[string]string{"subject": "x", "priority": "High", "deadline": "2026-01-29T09:00:00Z", "from": "CEO <ceo@company.com>"},
		},
		{
			name:        "priority neither a label nor an integer",
			file:        "---\nsubject: x\npriority: urgent\n---\nBody",
			errContains: []string{"goal.md:3:", `priority "urgent" is not high, medium, low or a whole number`},
		},
		{
			name:        "deadline in no known form",
			file:        "---\ndeadline: next tuesday\n---\nBody",
			errContains: []string{"goal.md:2:", `invalid deadline "next tuesday"`},
		},
		{
			name:        "priority with a fraction",
			file:        "---\npriority: 1.5\n---\nBody",
			errContains: []string{"goal.md:2:", `priority "1.5"`},
		},
		{
			name:        "priority beyond 32 bits",
			file:        "---\npriority: 99999999999\n---\nBody",
			errContains: []string{"goal.md:2:", "not high, medium, low or a whole number"},
		},
		{
			name:        "duplicate key",
			file:        "---\nfrom: a\nfrom: b\n---\nBody",
			errContains: []string{"goal.md:3:", `key "from" appears twice (first on line 2)`},
		},
		{
			name:        "never closed",
			file:        "---\nfrom: a\nBody without a closing line",
			errContains: []string{"goal.md:1:", "never closed"},
		},
		{
			name:        "not key-value pairs",
			file:        "---\n- a\n- b\n---\nBody",
			errContains: []string{"goal.md:2:", `"key: value" lines`},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := parseGoalFile("goal.md", []byte(tc.file))
			if len(tc.errContains) > 0 {
				if err == nil {
					t.Fatalf("parsed %+v, want an error", doc)
				}
				if !errors.Is(err, errGoalFile) {
					t.Errorf("error %v does not wrap errGoalFile", err)
				}
				for _, want := range tc.errContains {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q lacks %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if doc.Text != tc.text {
				t.Errorf("got text %q, want %q", doc.Text, tc.text)
			}
			if len(doc.Metadata) != len(tc.meta) || (len(tc.meta) > 0 && !maps.Equal(doc.Metadata, tc.meta)) {
				t.Errorf("metadata = %v, want %v", doc.Metadata, tc.meta)
			}
		})
	}
}
