package scaffold

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

//go:embed templates coding
var templates embed.FS

// Template names `sett init --template` accepts, with the embedded
// directory each one writes.
const (
	// TemplateDefault is a writer and a reviewer that run as they are,
	// and agents/hello/ (a tiny tool and a guide to writing agents).
	TemplateDefault = "default"
	// TemplateCoding is a coding pipeline: planner (LLM) → your approval →
	// reviewer (LLM) → coder (Claude Code) → reviewer (LLM).
	TemplateCoding = "coding"
)

// templateDirs maps each template to its embedded directory.
var templateDirs = map[string]string{TemplateDefault: "templates", TemplateCoding: "coding"}

// Templates lists the template names, sorted.
func Templates() []string { return []string{TemplateCoding, TemplateDefault} }

// File is one file `sett init` writes.
type File struct {
	// Path is relative to the workspace, with forward slashes.
	Path string
	// Mode is the permission: 0755 for scripts, 0644 otherwise.
	Mode fs.FileMode
	// Content is the file's bytes.
	Content []byte
}

// Files returns the scaffold in lexical order of path:
// agents/hello/README.md, agents/hello/hello.sh and sett.yml.
func Files() []File {
	files, _ := TemplateFiles(TemplateDefault)
	return files
}

// TemplateFiles returns the files of the named template in lexical order
// of path. It returns an error wrapping ErrUnknownTemplate, listing the
// templates, for a name it does not know.
func TemplateFiles(name string) ([]File, error) {
	root, ok := templateDirs[name]
	if !ok {
		return nil, fmt.Errorf("%w %q: use one of %s", ErrUnknownTemplate, name, strings.Join(Templates(), ", "))
	}
	var out []File
	err := fs.WalkDir(templates, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := templates.ReadFile(p)
		if err != nil {
			return err
		}
		mode := fs.FileMode(0o644)
		if path.Ext(p) == ".sh" {
			mode = 0o755
		}
		out = append(out, File{Path: strings.TrimPrefix(p, root+"/"), Mode: mode, Content: b})
		return nil
	})
	if err != nil {
		// The templates are compiled in; failing to read them is a build
		// defect, not a runtime condition.
		panic(fmt.Sprintf("scaffold: embedded templates unreadable: %v", err))
	}
	return out, nil
}

// Write writes the scaffold into dir and returns the paths it wrote
// (relative, forward slashes). Unless force is set it first checks that
// none of the files exists and, if any does, writes nothing and returns
// an error wrapping ErrExists that lists them. With force, existing files
// are overwritten.
func Write(dir string, force bool) ([]string, error) {
	return WriteTemplate(dir, TemplateDefault, force)
}

// WriteTemplate is Write for the named template; an unknown name is an
// error wrapping ErrUnknownTemplate and writes nothing.
func WriteTemplate(dir, name string, force bool) ([]string, error) {
	files, err := TemplateFiles(name)
	if err != nil {
		return nil, err
	}
	if !force {
		var existing []string
		for _, f := range files {
			if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f.Path))); err == nil {
				existing = append(existing, f.Path)
			}
		}
		if len(existing) > 0 {
			return nil, fmt.Errorf("%w: %s (pass --force to overwrite)", ErrExists, strings.Join(existing, ", "))
		}
	}
	var written []string
	for _, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(f.Path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return written, fmt.Errorf("scaffold: %w", err)
		}
		if err := os.WriteFile(p, f.Content, f.Mode); err != nil {
			return written, fmt.Errorf("scaffold: %w", err)
		}
		// WriteFile keeps the mode of an existing file; --force must still
		// leave the script executable.
		if err := os.Chmod(p, f.Mode); err != nil {
			return written, fmt.Errorf("scaffold: %w", err)
		}
		written = append(written, f.Path)
	}
	return written, nil
}

// GitignoreEntry is the line EnsureGitignore adds: the workspace's private
// directory (instance records, local runtime state).
const GitignoreEntry = ".sett/"

// EnsureGitignore adds GitignoreEntry to dir/.gitignore, creating the file
// if needed, unless the file already ignores .sett (as ".sett", ".sett/",
// "/.sett" or "/.sett/"). It reports whether it changed the file.
func EnsureGitignore(dir string) (bool, error) {
	p := filepath.Join(dir, ".gitignore")
	b, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("scaffold: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		switch strings.TrimSpace(line) {
		case ".sett", ".sett/", "/.sett", "/.sett/":
			return false, nil
		}
	}
	var add bytes.Buffer
	if len(b) > 0 && !bytes.HasSuffix(b, []byte("\n")) {
		add.WriteByte('\n')
	}
	add.WriteString(GitignoreEntry + "\n")
	if err := appendFile(p, add.Bytes()); err != nil {
		return false, err
	}
	return true, nil
}

// appendFile appends b to the file at p, creating it (0644) if needed.
func appendFile(p string, b []byte) error {
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("scaffold: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	return nil
}

// VaultIgnoreComment is the line EnsureVaultIgnored writes above a
// vault's .gitignore entry; `sett forage` knows such an entry as init's.
const VaultIgnoreComment = "# Sett vault: Sett rewrites Dashboard.md and moves task files (sett init --vault)"

// EnsureVaultIgnored adds the vault folder rel (relative to dir, with
// forward slashes) to dir/.gitignore as "/rel/", under
// VaultIgnoreComment, unless a line already names it. A vault inside a
// Git workspace would otherwise make the tree dirty whenever Sett
// updates it, and `sett forage` refuses a dirty tree. It reports
// whether it changed the file.
func EnsureVaultIgnored(dir, rel string) (bool, error) {
	rel = strings.Trim(filepath.ToSlash(rel), "/")
	if rel == "" || rel == "." || strings.HasPrefix(rel, "../") || rel == ".." {
		return false, nil // not inside the workspace
	}
	p := filepath.Join(dir, ".gitignore")
	b, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("scaffold: %w", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.Trim(strings.TrimSpace(line), "/") == rel {
			return false, nil
		}
	}
	var add bytes.Buffer
	if len(b) > 0 && !bytes.HasSuffix(b, []byte("\n")) {
		add.WriteByte('\n')
	}
	add.WriteString(VaultIgnoreComment + "\n/" + rel + "/\n")
	if err := appendFile(p, add.Bytes()); err != nil {
		return false, err
	}
	return true, nil
}
