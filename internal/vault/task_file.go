package vault

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/priority"
)

// Ignored reports whether a file name is none of the vault's business:
// hidden files, editor and Obsidian temporary, trash and conflict files,
// and anything that is not Markdown.
func Ignored(name string) bool {
	lower := strings.ToLower(name)
	switch {
	case strings.HasPrefix(name, "."), strings.HasPrefix(name, "~"):
		return true
	case !strings.HasSuffix(lower, ".md"):
		return true
	case strings.Contains(lower, ".sync-conflict"), strings.Contains(lower, "conflicted copy"),
		strings.Contains(lower, "(conflict"), strings.Contains(lower, ".tmp"):
		return true
	}
	return false
}

// vaultFile is a Markdown file read from a vault folder.
type vaultFile struct {
	Path string
	Name string
	Data []byte
	Info fs.FileInfo
	Doc  *Doc
}

// refusal is a file the vault will not read, and why.
type refusal struct {
	Path   string
	Reason string
}

// readFile reads dir/name when it is safe to: a regular file (never a
// link), inside the vault, at most maxBytes, UTF-8, with valid
// frontmatter. Otherwise it returns the reason, and the file is left as
// it is. A file that vanished gives (nil, "").
func readFile(root, dir, name string, maxBytes int64) (*vaultFile, string) {
	p := filepath.Join(dir, name)
	fi, err := os.Lstat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ""
		}
		return nil, "cannot read it: " + err.Error()
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		target, terr := filepath.EvalSymlinks(p)
		if terr == nil && !inside(root, target) {
			return nil, "the path escapes the vault (a link to " + target + "): Sett only reads files inside the vault"
		}
		return nil, "a symbolic link: Sett never follows links in the vault; copy the file here instead"
	}
	if !fi.Mode().IsRegular() {
		return nil, ""
	}
	if real, err := filepath.EvalSymlinks(p); err != nil || !inside(root, real) {
		return nil, "the path escapes the vault (its folder links outside it): Sett only reads files inside the vault"
	}
	if fi.Size() > maxBytes {
		return nil, fmt.Sprintf("too large: %d bytes, over vault.max_file_bytes (%d); shorten it or raise the limit", fi.Size(), maxBytes)
	}
	data, err := readLimited(p, maxBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, ""
		}
		return nil, "cannot read it: " + err.Error()
	}
	if int64(len(data)) > maxBytes {
		return nil, fmt.Sprintf("too large: over vault.max_file_bytes (%d); shorten it or raise the limit", maxBytes)
	}
	if after, err := os.Lstat(p); err != nil || stampOf(after) != stampOf(fi) || int64(len(data)) != fi.Size() {
		// Written to while read: its writer is not done; the settle
		// period starts again.
		return nil, ""
	}
	if !utf8.Valid(data) {
		return nil, "not UTF-8 text: save it as UTF-8"
	}
	doc, err := ParseDoc(data)
	if err != nil {
		return nil, err.Error() + ": fix the YAML between the two --- lines"
	}
	return &vaultFile{Path: p, Name: name, Data: data, Info: fi, Doc: doc}, ""
}

// readLimited reads at most max+1 bytes of path: enough to tell a file
// over the limit without reading all of it.
func readLimited(path string, max int64) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return io.ReadAll(io.LimitReader(fh, max+1))
}

// inside reports whether p is root or below it (both resolved).
func inside(root, p string) bool {
	r, err := filepath.EvalSymlinks(root)
	if err != nil {
		r = root
	}
	rel, err := filepath.Rel(r, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// task is a task file turned into a goal.
type task struct {
	File  *vaultFile
	Goal  *blackboard.Artefact
	Score int
}

// taskKeys are the frontmatter keys a task file may use (the
// scheduling rules); other keys are kept as metadata too.
var taskKeys = []string{"priority", "deadline", "from", "subject", "type", "approval_timeout"}

// goalID derives the goal id from the file's identity: its name, its
// content and its modification time. A crash between creating the goal
// and moving the file yields the same id on the next pass (the create
// then reports ErrExists and the move completes), so one file starts
// exactly one workflow; the same text dropped again later has a new
// modification time and starts a new one.
func goalID(f *vaultFile) string {
	sum := sha256.Sum256(f.Data)
	return blackboard.DeriveID("vault-task", f.Name, hex.EncodeToString(sum[:]), strconv.FormatInt(f.Info.ModTime().UnixNano(), 10))
}

// parseTask turns a task file into its goal, scored with w at now.
// Errors name the bad field; the file is then refused.
func parseTask(f *vaultFile, w priority.Weights, now time.Time) (*task, error) {
	d := f.Doc
	body := strings.TrimSpace(stripSett(d.Body))
	if body == "" {
		return nil, errors.New("no instructions: write what to do below the frontmatter")
	}
	score, err := priority.Score(priority.Input{Priority: d.Get("priority"), Deadline: d.Get("deadline"), From: d.Get("from")}, w, now)
	if err != nil {
		return nil, fmt.Errorf("invalid frontmatter: %v", err)
	}
	if raw := d.Get("approval_timeout"); raw != "" {
		if d, err := time.ParseDuration(raw); err != nil || d < 0 {
			return nil, fmt.Errorf("invalid frontmatter: approval_timeout %q is not a duration (use e.g. 30m or 24h)", raw)
		}
	}
	meta := map[string]string{}
	for k, v := range d.Map() {
		meta[k] = strings.TrimSpace(v)
	}
	for _, k := range settTaskKeys {
		delete(meta, k) // an earlier run's, not the task's
	}
	meta["vault_file"] = f.Name
	meta["channel"] = "vault"
	g := blackboard.NewGoal(body, score, "vault", meta)
	id := goalID(f)
	g.ID, g.LogicalID, g.WorkflowID = id, id, id
	if s := d.Get("subject"); s != "" {
		g.Summary = oneLine(s, 200)
	}
	return &task{File: f, Goal: g, Score: score}, nil
}

// oneLine joins s onto one line and cuts it to n bytes at a rune
// boundary.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
