package learningsfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/google/renameio/v2"

	"github.com/settdev/sett/internal/blackboard"
)

// FileName is the name of the file in the vault root.
const FileName = "Agent_Memory.md"

// Template is the starter content of a new Agent_Memory.md (the learning loop's
// template, with Sett's agents in place of a single assistant).
const Template = `# Agent Memory

Learnings from past decisions. Every agent reads this file alongside the Company Handbook before it works.

## Patterns
<!-- New learnings are appended here automatically -->
`

// WarnAbove is the number of learnings past which Warning suggests
// pruning (the learning loop: more than 50).
const WarnAbove = 50

// RenderLine renders one learning as the line Sett appends, without a
// trailing newline:
//
//   - **<UTC time, RFC 3339 seconds>** — Rejected <type> for "<title>": <learning>
//
// The type is humanised ("Plan" → "plan", "CodeChange" → "code change"),
// the title and the learning are joined onto one line. An empty title
// reads "untitled task"; an empty learning "(no learning text)".
func RenderLine(l blackboard.Learning) string {
	at := time.UnixMilli(l.AtMs).UTC().Format(time.RFC3339)
	title := oneLine(l.Title)
	if title == "" {
		title = "untitled task"
	}
	text := oneLine(l.Text)
	if text == "" {
		text = "(no learning text)"
	}
	typ := HumaniseType(l.ArtefactType)
	if typ == "" {
		typ = "work"
	}
	// Double quotes inside the title would end the quoted title early
	// for a reader; single quotes keep it readable.
	title = strings.ReplaceAll(title, `"`, "'")
	return fmt.Sprintf("- **%s** — Rejected %s for \"%s\": %s", at, typ, title, text)
}

// HumaniseType turns an artefact type into lower-case words: "Plan" →
// "plan", "CodeChange" → "code change", "APISpec" → "api spec",
// "release_note" → "release note".
func HumaniseType(t string) string {
	runes := []rune(t)
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for i, r := range runes {
		switch {
		case r == '_' || r == '-' || unicode.IsSpace(r):
			flush()
			continue
		case unicode.IsUpper(r) && len(cur) > 0:
			prev := runes[i-1]
			nextLower := i+1 < len(runes) && unicode.IsLower(runes[i+1])
			// A new word starts at an upper-case letter after a lower-case
			// one or a digit ("codeChange"), or at the last capital of an
			// acronym that a lower-case word follows ("APISpec").
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				flush()
			}
		}
		cur = append(cur, r)
	}
	flush()
	return strings.Join(words, " ")
}

// Render returns a whole Agent_Memory.md: the template followed by one
// line per learning, in the order given (Learnings returns them oldest
// first). Used where there is no vault file to append to: an instance
// without a vault, or rebuilding a missing file.
func Render(learnings []blackboard.Learning) string {
	var b strings.Builder
	b.WriteString(Template)
	for _, l := range learnings {
		b.WriteString(RenderLine(l))
		b.WriteByte('\n')
	}
	return b.String()
}

// learningLine matches a line Sett appended (or one a human wrote in the
// same form): a bullet starting with a bold timestamp.
var learningLine = regexp.MustCompile(`^\s*[-*+] \*\*\d{4}-\d{2}-\d{2}T[^*]*\*\*`)

// Count returns the number of learnings in text: the lines in the form
// RenderLine writes (a bullet starting with a bold date and time). Other
// lines a human wrote do not count.
func Count(text string) int {
	n := 0
	for _, line := range strings.Split(text, "\n") {
		if learningLine.MatchString(line) {
			n++
		}
	}
	return n
}

// Warning returns the warning to show for a file holding n learnings, or
// "" when n is at most WarnAbove. Sett still appends past the limit; the
// human decides what to prune.
func Warning(n int) string {
	if n <= WarnAbove {
		return ""
	}
	return fmt.Sprintf("%s holds %d learnings (more than %d): every agent reads all of them before it works; "+
		"delete or merge the ones that no longer apply", FileName, n, WarnAbove)
}

// IsTemplate reports whether text is the starter template with nothing
// added (whitespace aside): such a file teaches a tool nothing.
func IsTemplate(text string) bool {
	return strings.Join(strings.Fields(text), " ") == strings.Join(strings.Fields(Template), " ")
}

// maxAppendAttempts bounds Append's retries when the file keeps changing
// under it (a human saving at that very moment).
const maxAppendAttempts = 5

// ErrBusy is returned by Append when the file changed during every
// attempt to append to it.
var ErrBusy = errors.New("learningsfile: the file kept changing while appending; try again")

// Append adds line (a trailing newline is added) to the end of the file at
// path, creating it from Template first when it does not exist. What the
// file holds is kept byte for byte; a missing final newline is added before
// the line.
//
// The write is atomic: a temporary file in the same folder is written,
// fsynced and renamed over the file, and the folder is fsynced. If the
// file changes between reading it and the rename (a human saving), the
// append starts over so the human's edit is not lost; after a few such
// attempts it returns ErrBusy. A symbolic link at path is refused (the
// vault never follows links). Append does not lock against other writers:
// the caller is the file's one writer.
func Append(path, line string) error {
	line = strings.TrimRight(line, "\r\n")
	for attempt := 0; attempt < maxAppendAttempts; attempt++ {
		old, before, err := readStamped(path)
		if err != nil {
			return err
		}
		var next bytes.Buffer
		if before == nil {
			next.WriteString(Template)
		} else {
			next.Write(old)
			if len(old) > 0 && old[len(old)-1] != '\n' {
				next.WriteByte('\n')
			}
		}
		next.WriteString(line)
		next.WriteByte('\n')
		ok, err := replaceIfUnchanged(path, next.Bytes(), before)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
	return fmt.Errorf("%w: %s", ErrBusy, path)
}

// readStamped reads a regular file and its stamp; a missing file gives a
// nil stamp and no error.
func readStamped(path string) ([]byte, *stamp, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("learningsfile: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("learningsfile: %s is not a regular file (a link or a folder?); Sett will not write through it", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("learningsfile: %w", err)
	}
	st := stampOf(fi)
	return data, &st, nil
}

// replaceIfUnchanged writes data to path atomically unless the file no
// longer matches before (nil: the file must still be missing). It reports
// whether it wrote.
func replaceIfUnchanged(path string, data []byte, before *stamp) (bool, error) {
	dir := filepath.Dir(path)
	pf, err := renameio.NewPendingFile(path, renameio.WithTempDir(dir), renameio.WithPermissions(0o644), renameio.WithExistingPermissions())
	if err != nil {
		return false, fmt.Errorf("learningsfile: %w", err)
	}
	defer func() { _ = pf.Cleanup() }()
	if _, err := pf.Write(data); err != nil {
		return false, fmt.Errorf("learningsfile: write %s: %w", path, err)
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if before != nil {
			return false, nil
		}
	case err != nil:
		return false, fmt.Errorf("learningsfile: %w", err)
	default:
		if before == nil || stampOf(fi) != *before {
			return false, nil
		}
	}
	if err := pf.CloseAtomicallyReplace(); err != nil {
		return false, fmt.Errorf("learningsfile: replace %s: %w", path, err)
	}
	return true, syncDir(dir)
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("learningsfile: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("learningsfile: fsync %s: %w", dir, err)
	}
	return nil
}

// oneLine joins the lines of s with single spaces.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// SourceHandWritten is the Source of a learning a person wrote into
// Agent_Memory.md by hand: HandWritten returns them.
const SourceHandWritten = "hand_written"

// HandWritten returns the learnings in text (Agent_Memory.md as tools
// read it) that Sett did not record: the list items a person wrote, in
// file order, each as a Learning with Source SourceHandWritten and the
// line as Text. Lines that render a recorded learning, and the template,
// are left out.
func HandWritten(text string, recorded []blackboard.Learning) []blackboard.Learning {
	known := make(map[string]bool, len(recorded))
	for _, l := range recorded {
		known[oneLine(RenderLine(l))] = true
	}
	var out []blackboard.Learning
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		if len(t) < 3 || !strings.ContainsRune("-*+", rune(t[0])) || t[1] != ' ' {
			continue // not a list item
		}
		if known[oneLine(t)] {
			continue
		}
		out = append(out, blackboard.Learning{Source: SourceHandWritten, Text: strings.TrimSpace(t[2:])})
	}
	return out
}
