package cli

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/settdev/sett/internal/priority"
)

// goalDoc is a goal as read from --goal-file: the body is the goal text,
// the YAML frontmatter its metadata.
type goalDoc struct {
	// Text is the body after the frontmatter, trimmed.
	Text string
	// Metadata holds every frontmatter key (priority, deadline and from
	// included, as written) as text.
	Metadata map[string]string
}

// errGoalFile marks a goal file whose frontmatter cannot be used.
var errGoalFile = errors.New("invalid goal file")

// goalFileError names the file and line of a problem: "goal.md:3: ...".
func goalFileError(name string, line int, format string, args ...any) error {
	return fmt.Errorf("%w: %s:%d: %s", errGoalFile, name, line, fmt.Sprintf(format, args...))
}

// yamlLineError matches go-yaml's "yaml: line N: message" errors.
var yamlLineError = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// yamlParserError matches the messages of go-yaml's parser (as opposed to
// its scanner). go-yaml v3 adds one to the 0-based line of scanner errors
// but not of parser errors, so these report the line before the problem.
var yamlParserError = regexp.MustCompile(`^did not find expected (<document start>|node content|key|'-' indicator|',' or '\]'|',' or '\}')$`)

// parseGoalFile reads a Markdown goal with optional YAML frontmatter: a
// first line "---", key: value lines, and a closing "---" (or "...").
// Scalar values of any key become metadata as text (dates and numbers as
// written); priority must be high, medium, low or a whole number, and
// deadline a date the priority package reads. Lists, mappings, duplicate
// keys and malformed YAML are refused with the file line.
func parseGoalFile(name string, data []byte) (goalDoc, error) {
	text := strings.TrimPrefix(string(data), "\ufeff")
	lines := strings.Split(text, "\n")
	if strings.TrimRight(lines[0], " \t\r") != "---" {
		return goalDoc{Text: strings.TrimSpace(text)}, nil
	}
	closing := -1
	for i := 1; i < len(lines); i++ {
		if l := strings.TrimRight(lines[i], " \t\r"); l == "---" || l == "..." {
			closing = i
			break
		}
	}
	if closing < 0 {
		return goalDoc{}, goalFileError(name, 1, `the frontmatter opened here is never closed: add a line "---" after its last key`)
	}
	doc := goalDoc{Text: strings.TrimSpace(strings.Join(lines[closing+1:], "\n"))}
	front := strings.Join(lines[1:closing], "\n")
	if strings.TrimSpace(front) == "" {
		return doc, nil
	}
	// The frontmatter starts on file line 2: YAML line n is file line n+1.
	const offset = 1
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(front), &root); err != nil {
		if m := yamlLineError.FindStringSubmatch(err.Error()); m != nil {
			n, _ := strconv.Atoi(m[1])
			if yamlParserError.MatchString(m[2]) {
				n++
			}
			return goalDoc{}, goalFileError(name, n+offset, "invalid YAML in the frontmatter: %s", m[2])
		}
		return goalDoc{}, fmt.Errorf("%w: %s: invalid YAML in the frontmatter (lines 2-%d): %s", errGoalFile, name, closing, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(root.Content) == 0 {
		return doc, nil // only comments
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode {
		return goalDoc{}, goalFileError(name, m.Line+offset, "the frontmatter must be \"key: value\" lines (priority, deadline, from, subject ...), not %s", nodeKind(m))
	}
	doc.Metadata = make(map[string]string, len(m.Content)/2)
	seen := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			return goalDoc{}, goalFileError(name, k.Line+offset, "a frontmatter key must be a plain name, not %s", nodeKind(k))
		}
		if first, dup := seen[k.Value]; dup {
			return goalDoc{}, goalFileError(name, k.Line+offset, "key %q appears twice (first on line %d)", k.Value, first)
		}
		seen[k.Value] = k.Line + offset
		if v.Kind == yaml.AliasNode && v.Alias != nil {
			v = v.Alias
		}
		if v.Kind != yaml.ScalarNode {
			return goalDoc{}, goalFileError(name, v.Line+offset, "%s must be a single value (text, number or date), not %s", k.Value, nodeKind(v))
		}
		if v.Tag == "!!null" {
			continue // "deadline:" with nothing after it sets nothing
		}
		switch k.Value {
		case "priority":
			if _, err := priority.ParsePriority(v.Value, priority.DefaultWeights()); err != nil {
				return goalDoc{}, goalFileError(name, v.Line+offset, "priority %q is not high, medium, low or a whole number (for example: priority: high)", v.Value)
			}
		case "deadline":
			if _, err := priority.ParseDeadline(v.Value); err != nil {
				return goalDoc{}, goalFileError(name, v.Line+offset, "%v", err)
			}
		}
		doc.Metadata[k.Value] = v.Value
	}
	return doc, nil
}

// nodeKind names a YAML node's kind for messages.
func nodeKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		return fmt.Sprintf("the value %q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "an empty document"
}
