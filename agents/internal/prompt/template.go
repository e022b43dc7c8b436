package prompt

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"text/template"
)

//go:embed templates/*.tmpl
var builtin embed.FS

// commonFile holds the partials every template is parsed with.
const commonFile = "_common.tmpl"

// Template is a loaded prompt template. It is safe for concurrent use once
// loaded; the zero value is not usable (use Load).
type Template struct {
	// Name is the role name, or the path of a template file.
	Name string
	// Source says where the role template came from: "built-in" or a
	// file path.
	Source string
	// Role is the shipped role whose settings apply: the role named
	// Name, or for a file whose base name is a role's ("reviewer.tmpl"),
	// that role. The zero Role for any other file: the caller decides
	// the artefact type and the format.
	Role Role
	t    *template.Template
}

// Prompt is a rendered prompt: the system instructions (may be empty) and
// the user message.
type Prompt struct {
	System string
	User   string
}

// Text is the prompt as one text, the system part first, for programs
// that take a single prompt (coding CLIs).
func (p Prompt) Text() string {
	if p.System == "" {
		return p.User
	}
	return p.System + "\n\n" + p.User
}

// Load loads the template spec: the name of a shipped role (see Roles)
// or the path of a template file (any spec with a path separator or the
// extension .tmpl). dir, when not "", is an override directory: its
// <name>.tmpl replaces a shipped role's template and its _common.tmpl the
// shipped partials. Errors wrap ErrTemplate and name the file at fault.
func Load(spec, dir string) (*Template, error) {
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return nil, fmt.Errorf("%w: no template given: name one of %s, or the path of a .tmpl file", ErrTemplate, RoleNames(", "))
	}
	t := &Template{Name: spec}
	var body []byte
	var err error
	if isPath(spec) {
		t.Source = spec
		if body, err = os.ReadFile(spec); err != nil {
			return nil, fmt.Errorf("%w %s: %v", ErrTemplate, spec, err)
		}
		t.Role, _ = LookupRole(strings.TrimSuffix(filepath.Base(spec), ".tmpl"))
	} else {
		role, ok := LookupRole(spec)
		if !ok {
			return nil, fmt.Errorf("%w %q is not a shipped template: name one of %s, or the path of a .tmpl file", ErrTemplate, spec, RoleNames(", "))
		}
		t.Role = role
		if body, t.Source, err = readTemplate(dir, spec+".tmpl"); err != nil {
			return nil, err
		}
	}

	common, commonSource, err := readTemplate(dir, commonFile)
	if err != nil {
		return nil, err
	}
	root := template.New(t.Name).Funcs(funcs).Option("missingkey=error")
	if _, err := root.New(commonFile).Parse(string(common)); err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrTemplate, commonSource, err)
	}
	// The role's file is parsed after the partials so that it may
	// redefine any of them.
	if _, err := root.New(t.Source).Parse(string(body)); err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrTemplate, t.Source, err)
	}
	if root.Lookup("user") == nil {
		return nil, fmt.Errorf(`%w %s defines no "user" block: wrap the prompt in {{define "user"}} ... {{end}} (and the instructions, optionally, in {{define "system"}} ... {{end}})`,
			ErrTemplate, t.Source)
	}
	t.t = root
	return t, nil
}

// isPath reports whether spec names a file rather than a role.
func isPath(spec string) bool {
	return strings.ContainsRune(spec, '/') || strings.ContainsRune(spec, filepath.Separator) || strings.HasSuffix(spec, ".tmpl")
}

// readTemplate returns dir/name when it exists, else the built-in file,
// and where it came from.
func readTemplate(dir, name string) ([]byte, string, error) {
	if dir != "" {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err == nil {
			return b, p, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, "", fmt.Errorf("%w %s: %v", ErrTemplate, p, err)
		}
	}
	b, err := builtin.ReadFile("templates/" + name)
	if err != nil {
		// Only reachable for a name that is not shipped: Load checks the
		// role names first.
		return nil, "", fmt.Errorf("%w %s: not shipped: %v", ErrTemplate, name, err)
	}
	return b, "built-in " + name, nil
}

// blankRuns matches three or more line breaks (with spaces between).
var blankRuns = regexp.MustCompile(`\n[ \t]*\n(?:[ \t]*\n)+`)

// Render executes the template on d. Runs of blank lines collapse to one
// and both parts are trimmed. An empty user prompt is an error wrapping
// ErrTemplate.
func (t *Template) Render(d Data) (Prompt, error) {
	var p Prompt
	if t.t.Lookup("system") != nil {
		s, err := t.exec("system", d)
		if err != nil {
			return Prompt{}, err
		}
		p.System = s
	}
	u, err := t.exec("user", d)
	if err != nil {
		return Prompt{}, err
	}
	if u == "" {
		return Prompt{}, fmt.Errorf(`%w %s: the "user" block rendered nothing for this %s claim`, ErrTemplate, t.Source, d.ClaimType)
	}
	p.User = u
	return p, nil
}

func (t *Template) exec(block string, d Data) (string, error) {
	var b bytes.Buffer
	if err := t.t.ExecuteTemplate(&b, block, d); err != nil {
		return "", fmt.Errorf("%w %s: %v", ErrTemplate, t.Source, err)
	}
	return strings.TrimSpace(blankRuns.ReplaceAllString(b.String(), "\n\n")), nil
}
