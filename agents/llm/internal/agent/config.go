package agent

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/settdev/sett/agents/internal/prompt"
	"github.com/settdev/sett/agents/llm/internal/provider"
)

// Environment variables the agent reads. None starts with SETT_ or
// mentions REDIS, which sett.yml refuses for tool environments.
const (
	EnvTemplate         = "LLM_TEMPLATE"
	EnvTemplateDir      = "LLM_TEMPLATE_DIR"
	EnvArtefactType     = "LLM_ARTEFACT_TYPE"
	EnvFormat           = "LLM_FORMAT"
	EnvProvider         = "LLM_PROVIDER"
	EnvModel            = "LLM_MODEL"
	EnvMaxTokens        = "LLM_MAX_TOKENS"
	EnvTemperature      = "LLM_TEMPERATURE"
	EnvJSONMode         = "LLM_JSON_MODE"
	EnvTimeout          = "LLM_TIMEOUT"
	EnvMaxAttempts      = "LLM_MAX_ATTEMPTS"
	EnvOpenAIBaseURL    = "OPENAI_BASE_URL"
	EnvOpenAIKey        = "OPENAI_API_KEY"
	EnvAnthropicBaseURL = "ANTHROPIC_BASE_URL"
	EnvAnthropicKey     = "ANTHROPIC_API_KEY"
	// EnvWorkspace is set by the cub: where a CodeCommit can be shown.
	EnvWorkspace = "SETT_WORKSPACE"
)

// The providers.
const (
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	// ProviderFake answers from Sett's bundled fake model (internal/fakellm's
	// demo script) inside this process: no server, no key, canned answers.
	// `sett init --vault` writes it when no model is configured.
	ProviderFake = "fake"
)

// DefaultTimeout bounds a call, retries included, when neither --timeout
// nor LLM_TIMEOUT says otherwise: a little under the cub's default tool
// timeout (10m), so that the tool reports its own failure before the cub
// kills it.
const DefaultTimeout = 9*time.Minute + 30*time.Second

// Config is the agent's configuration. The zero value is not usable: use
// ParseConfig.
type Config struct {
	// Template is a shipped role (planner, reviewer, writer, learner,
	// summariser) or the path of a template file. Required.
	Template string
	// TemplateDir overrides shipped templates file by file; "" none.
	TemplateDir string
	// ArtefactType overrides the role's artefact type; required for a
	// template file that is no role.
	ArtefactType string
	// Format overrides the role's answer format; "" keeps it (text for a
	// template file that is no role).
	Format prompt.Format
	// Provider is "openai" or "anthropic".
	Provider string
	// Model is the model name. Required.
	Model string
	// MaxTokens bounds each answer; 0 leaves it to the provider (4096 for
	// Anthropic, which requires one).
	MaxTokens int64
	// Temperature is sent when not nil.
	Temperature *float64
	// JSONMode is how OpenAI-compatible servers are asked for JSON.
	JSONMode provider.JSONMode
	// Timeout bounds the whole model call, retries included.
	Timeout time.Duration
	// MaxAttempts bounds the calls per claim.
	MaxAttempts int
	// OpenAIBaseURL, OpenAIKey, AnthropicBaseURL and AnthropicKey come
	// from the environment only.
	OpenAIBaseURL, OpenAIKey       string
	AnthropicBaseURL, AnthropicKey string
	// Workspace is the Git workspace (SETT_WORKSPACE; "" is the working
	// directory).
	Workspace string
}

// errUsage marks a configuration error (bad flag or variable).
var errUsage = errors.New("configuration error")

// ParseConfig reads flags from args, each defaulting to its environment
// variable (getenv), and checks them. Errors wrap errUsage and name the
// flag and the variable. Usage text goes to usage.
func ParseConfig(args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	env := func(name string) string { return strings.TrimSpace(getenv(name)) }
	c := Config{
		OpenAIBaseURL: env(EnvOpenAIBaseURL), OpenAIKey: env(EnvOpenAIKey),
		AnthropicBaseURL: env(EnvAnthropicBaseURL), AnthropicKey: env(EnvAnthropicKey),
		Workspace: env(EnvWorkspace),
	}
	fs := flag.NewFlagSet("sett-agent-llm", flag.ContinueOnError)
	fs.SetOutput(usage)
	var format, jsonMode, maxTokens, temperature, timeout, maxAttempts string
	fs.StringVar(&c.Template, "template", env(EnvTemplate), "prompt template: "+prompt.RoleNames("|")+"|PATH ("+EnvTemplate+")")
	fs.StringVar(&c.TemplateDir, "template-dir", env(EnvTemplateDir), "directory whose <role>.tmpl and _common.tmpl override the shipped ones ("+EnvTemplateDir+")")
	fs.StringVar(&c.ArtefactType, "artefact-type", env(EnvArtefactType), "artefact type of the answers; default: the role's (Plan, Review, Document, Learning, Summary) ("+EnvArtefactType+")")
	fs.StringVar(&format, "format", env(EnvFormat), "answer format: text|verdict|learning|json; default: the role's ("+EnvFormat+")")
	fs.StringVar(&c.Provider, "provider", env(EnvProvider), "openai (any OpenAI-compatible server), anthropic, or fake (the bundled fake model, in process); default: anthropic when only ANTHROPIC_* is set, else openai ("+EnvProvider+")")
	fs.StringVar(&c.Model, "model", env(EnvModel), "model name, e.g. gpt-4o-mini, llama3.1, claude-sonnet-4-5 ("+EnvModel+")")
	fs.StringVar(&maxTokens, "max-tokens", env(EnvMaxTokens), "bound on each answer in tokens; default: the provider's (Anthropic: 4096) ("+EnvMaxTokens+")")
	fs.StringVar(&temperature, "temperature", env(EnvTemperature), "sampling temperature; default: the provider's ("+EnvTemperature+")")
	fs.StringVar(&jsonMode, "json-mode", env(EnvJSONMode), "how OpenAI-compatible servers are asked for JSON: schema|object|off (default schema; a server that refuses one gets the next) ("+EnvJSONMode+")")
	fs.StringVar(&timeout, "timeout", env(EnvTimeout), "bound on the model call, retries included (default "+DefaultTimeout.String()+", under the cub's 10m tool timeout) ("+EnvTimeout+")")
	fs.StringVar(&maxAttempts, "max-attempts", env(EnvMaxAttempts), "bound on the calls per claim, first one included (default "+strconv.Itoa(provider.DefaultMaxAttempts)+") ("+EnvMaxAttempts+")")
	if err := fs.Parse(args); err != nil {
		return Config{}, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("%w: unexpected arguments %q: the tool reads its input on stdin", errUsage, fs.Args())
	}
	bad := func(flagName, envName, format string, args ...any) error {
		return fmt.Errorf("%w: --%s (%s): %s", errUsage, flagName, envName, fmt.Sprintf(format, args...))
	}

	if c.Template == "" {
		return Config{}, bad("template", EnvTemplate, "not set: name a shipped template (%s) or the path of one", prompt.RoleNames(", "))
	}
	if format != "" {
		c.Format = prompt.Format(format)
		if !c.Format.Valid() {
			return Config{}, bad("format", EnvFormat, "%q is not a format: use text, verdict, learning or json", format)
		}
	}
	if c.Provider == "" {
		c.Provider = ProviderOpenAI
		if (c.AnthropicKey != "" || c.AnthropicBaseURL != "") && c.OpenAIKey == "" && c.OpenAIBaseURL == "" {
			c.Provider = ProviderAnthropic
		}
	}
	if c.Provider != ProviderOpenAI && c.Provider != ProviderAnthropic && c.Provider != ProviderFake {
		return Config{}, bad("provider", EnvProvider, "%q is not a provider: use openai (also for Ollama, vLLM, llama.cpp, LM Studio: set OPENAI_BASE_URL), anthropic, or fake (Sett's bundled fake model)", c.Provider)
	}
	if c.Provider == ProviderFake && c.Model == "" {
		c.Model = "sett-fake"
	}
	if c.Model == "" {
		return Config{}, bad("model", EnvModel, "not set: name the model to call, e.g. gpt-4o-mini, llama3.1 or claude-sonnet-4-5")
	}
	if maxTokens != "" {
		n, err := strconv.ParseInt(maxTokens, 10, 64)
		if err != nil || n <= 0 {
			return Config{}, bad("max-tokens", EnvMaxTokens, "%q is not a positive whole number", maxTokens)
		}
		c.MaxTokens = n
	}
	if temperature != "" {
		f, err := strconv.ParseFloat(temperature, 64)
		if err != nil || f < 0 || f > 2 {
			return Config{}, bad("temperature", EnvTemperature, "%q is not a number between 0 and 2", temperature)
		}
		c.Temperature = &f
	}
	c.JSONMode = provider.JSONSchema
	if jsonMode != "" {
		c.JSONMode = provider.JSONMode(jsonMode)
		if !c.JSONMode.Valid() {
			return Config{}, bad("json-mode", EnvJSONMode, "%q is not a JSON mode: use schema, object or off", jsonMode)
		}
	}
	c.Timeout = DefaultTimeout
	if timeout != "" {
		d, err := time.ParseDuration(timeout)
		if err != nil || d <= 0 {
			return Config{}, bad("timeout", EnvTimeout, "%q is not a positive duration such as 90s or 5m", timeout)
		}
		c.Timeout = d
	}
	c.MaxAttempts = provider.DefaultMaxAttempts
	if maxAttempts != "" {
		n, err := strconv.Atoi(maxAttempts)
		if err != nil || n < 1 {
			return Config{}, bad("max-attempts", EnvMaxAttempts, "%q is not a whole number of at least 1", maxAttempts)
		}
		c.MaxAttempts = n
	}
	return c, nil
}

// keyVar is the variable that holds the provider's key.
func (c Config) keyVar() string {
	if c.Provider == ProviderAnthropic {
		return EnvAnthropicKey
	}
	return EnvOpenAIKey
}

// baseURLVar and baseURL name the provider's endpoint setting.
func (c Config) baseURLVar() string {
	if c.Provider == ProviderAnthropic {
		return EnvAnthropicBaseURL
	}
	return EnvOpenAIBaseURL
}

func (c Config) baseURL() string {
	if c.Provider == ProviderAnthropic {
		return c.AnthropicBaseURL
	}
	return c.OpenAIBaseURL
}

func (c Config) key() string {
	if c.Provider == ProviderAnthropic {
		return c.AnthropicKey
	}
	return c.OpenAIKey
}

// checkKey reports a missing key: the public APIs need one; a server given
// by its base URL (Ollama, vLLM, a proxy) may not.
func (c Config) checkKey() error {
	if c.Provider == ProviderFake || c.key() != "" || c.baseURL() != "" {
		return nil
	}
	if c.Provider == ProviderAnthropic {
		return fmt.Errorf("%s is not set: put your Anthropic API key in this agent's environment (sett.yml: agents.<name>.environment.%s)",
			EnvAnthropicKey, EnvAnthropicKey)
	}
	return fmt.Errorf("%s is not set: put your OpenAI API key in this agent's environment (sett.yml: agents.<name>.environment.%s), "+
		"or set %s to an OpenAI-compatible server that needs no key (Ollama: http://<host>:11434/v1)", EnvOpenAIKey, EnvOpenAIKey, EnvOpenAIBaseURL)
}
