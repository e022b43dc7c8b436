package coder

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
)

// Environment variables the wrapper reads (none starts with SETT_ or
// mentions REDIS, which sett.yml refuses for tool environments).
const (
	EnvCommand      = "CODER_COMMAND"
	EnvTemplate     = "CODER_TEMPLATE"
	EnvTemplateDir  = "CODER_TEMPLATE_DIR"
	EnvTimeout      = "CODER_TIMEOUT"
	EnvBranchPrefix = "CODER_BRANCH_PREFIX"
	EnvAuthorName   = "CODER_AUTHOR_NAME"
	EnvAuthorEmail  = "CODER_AUTHOR_EMAIL"
	// EnvWorkspace is set by the cub.
	EnvWorkspace = "SETT_WORKSPACE"
)

// PromptPlaceholder in the command is replaced by the prompt; without it,
// the prompt is written to the CLI's stdin.
const PromptPlaceholder = "{prompt}"

// DefaultCommand runs Claude Code headless: the prompt on stdin, one JSON
// result on stdout, file edits accepted without asking.
var DefaultCommand = []string{"claude", "-p", "--output-format", "json", "--permission-mode", "acceptEdits"}

// DefaultTimeout bounds one CLI run: a little under the cub's default tool
// timeout (10m), so that the wrapper reports the timeout itself. Coding
// runs take long: raise the agent's `timeout:` and CODER_TIMEOUT together.
const DefaultTimeout = 9*time.Minute + 30*time.Second

// Config is the wrapper's configuration; use ParseConfig.
type Config struct {
	// Command is the CLI's argv; PromptPlaceholder marks where the prompt
	// goes, else it goes to stdin.
	Command []string
	// Template and TemplateDir choose the prompt template (see
	// agents/internal/prompt); default "coder".
	Template, TemplateDir string
	// Timeout bounds the CLI run.
	Timeout time.Duration
	// BranchPrefix starts the workflow's branch name; default "sett/".
	BranchPrefix string
	// AuthorName and AuthorEmail sign the commit when Git has no identity
	// configured (user.name/user.email, GIT_AUTHOR_*).
	AuthorName, AuthorEmail string
	// Workspace is the Git workspace; "" is the working directory.
	Workspace string
}

var errUsage = errors.New("configuration error")

// ParseConfig reads flags (defaulting to the environment through getenv);
// the arguments after the flags, when any, are the CLI command.
func ParseConfig(args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	env := func(k string) string { return strings.TrimSpace(getenv(k)) }
	c := Config{Workspace: env(EnvWorkspace)}
	fs := flag.NewFlagSet("sett-coder", flag.ContinueOnError)
	fs.SetOutput(usage)
	var command, timeout string
	fs.StringVar(&command, "command", env(EnvCommand), `the coding CLI as a JSON list, e.g. ["claude","-p","--output-format","json"]; "{prompt}" marks where the prompt goes, else it goes to stdin (`+EnvCommand+`); or give the command after the flags`)
	fs.StringVar(&c.Template, "template", orDefault(env(EnvTemplate), "coder"), "prompt template: coder or the path of a .tmpl file ("+EnvTemplate+")")
	fs.StringVar(&c.TemplateDir, "template-dir", env(EnvTemplateDir), "directory whose coder.tmpl and _common.tmpl override the shipped ones ("+EnvTemplateDir+")")
	fs.StringVar(&timeout, "timeout", env(EnvTimeout), "bound on the CLI run (default "+DefaultTimeout.String()+") ("+EnvTimeout+")")
	fs.StringVar(&c.BranchPrefix, "branch-prefix", orDefault(env(EnvBranchPrefix), "sett/"), "prefix of the workflow's branch ("+EnvBranchPrefix+")")
	fs.StringVar(&c.AuthorName, "author-name", orDefault(env(EnvAuthorName), "Sett coder"), "commit author when Git has no identity ("+EnvAuthorName+")")
	fs.StringVar(&c.AuthorEmail, "author-email", orDefault(env(EnvAuthorEmail), "sett-coder@localhost"), "commit author e-mail when Git has no identity ("+EnvAuthorEmail+")")
	if err := fs.Parse(args); err != nil {
		return Config{}, fmt.Errorf("%w: %v", errUsage, err)
	}
	switch {
	case fs.NArg() > 0 && command != "":
		return Config{}, fmt.Errorf("%w: the command is given twice: by --command (%s) and after the flags (%q); give it once", errUsage, EnvCommand, fs.Args())
	case fs.NArg() > 0:
		c.Command = fs.Args()
	case command != "":
		if err := json.Unmarshal([]byte(command), &c.Command); err != nil || len(c.Command) == 0 || c.Command[0] == "" {
			return Config{}, fmt.Errorf(`%w: --command (%s) must be a JSON list of strings such as ["claude","-p","--output-format","json"], got %q`, errUsage, EnvCommand, command)
		}
	default:
		c.Command = append([]string(nil), DefaultCommand...)
	}
	c.Timeout = DefaultTimeout
	if timeout != "" {
		d, err := time.ParseDuration(timeout)
		if err != nil || d <= 0 {
			return Config{}, fmt.Errorf("%w: --timeout (%s): %q is not a positive duration such as 20m", errUsage, EnvTimeout, timeout)
		}
		c.Timeout = d
	}
	if strings.ContainsAny(c.BranchPrefix, " ~^:?*[\\") || strings.Contains(c.BranchPrefix, "..") {
		return Config{}, fmt.Errorf("%w: --branch-prefix (%s): %q cannot start a Git branch name", errUsage, EnvBranchPrefix, c.BranchPrefix)
	}
	return c, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
