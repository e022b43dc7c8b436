package daemon

import (
	"errors"
	"flag"
	"io"
	"os"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/observability"
	"github.com/settdev/sett/internal/secretfd"
)

// Flags holds the flags every daemon takes. Precedence: flag > SETT_*
// environment > sett.yml. The zero value is ready for Register; it is
// not safe for concurrent use.
type Flags struct {
	ConfigPath string
	Instance   string
	RedisURL   string
	HTTPAddr   string
	LogFormat  string
	LogLevel   string
}

// Register defines the common flags on fs; defaultHTTP is the default
// of --http-addr.
func (c *Flags) Register(fs *flag.FlagSet, defaultHTTP string) {
	fs.StringVar(&c.ConfigPath, "config", EnvOr("SETT_CONFIG", config.DefaultFilename), "path to sett.yml (env SETT_CONFIG)")
	fs.StringVar(&c.Instance, "instance", "", "instance name (env SETT_INSTANCE, or instance in sett.yml)")
	fs.StringVar(&c.RedisURL, "redis-url", "", "Redis URL (env SETT_REDIS_URL, or services.redis.url)")
	fs.StringVar(&c.HTTPAddr, "http-addr", defaultHTTP, "listen address for /healthz, /readyz and /metrics (env SETT_HTTP_ADDR)")
	fs.StringVar(&c.LogFormat, "log-format", EnvOr("SETT_LOG_FORMAT", "auto"), "log format: auto, json or console (env SETT_LOG_FORMAT)")
	fs.StringVar(&c.LogLevel, "log-level", EnvOr("SETT_LOG_LEVEL", "info"), "log level: debug, info, warn, error (env SETT_LOG_LEVEL)")
}

// Load reads sett.yml, applies the environment and flags, and validates.
// It returns the configuration's warnings; every error is a *UsageError.
func (c *Flags) Load() (*config.Config, []string, error) {
	cfg, warnings, err := config.Load(c.ConfigPath)
	if err != nil {
		return nil, nil, &UsageError{err}
	}
	// Secrets handed over on a pipe (the local runtime) take the place of
	// environment variables, which tools could read in /proc.
	secrets, err := secretfd.Read(os.LookupEnv)
	if err != nil {
		return nil, nil, &UsageError{err}
	}
	if err := cfg.ApplyEnv(secretfd.LookupEnv(secrets, os.LookupEnv)); err != nil {
		return nil, nil, &UsageError{err}
	}
	if c.Instance != "" {
		cfg.Instance = c.Instance
	}
	if c.RedisURL != "" {
		cfg.Services.Redis.URL = c.RedisURL
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, &UsageError{err}
	}
	if cfg.Instance == "" {
		return nil, nil, &UsageError{errors.New("no instance name: pass --instance, set SETT_INSTANCE, or set instance in sett.yml")}
	}
	if !cfg.Services.Redis.External() {
		return nil, nil, &UsageError{errors.New("no Redis URL: pass --redis-url, set SETT_REDIS_URL, or set services.redis.url (or sentinel, or cluster) in sett.yml")}
	}
	return cfg, warnings, nil
}

// Logger builds the daemon's logger from --log-format and --log-level; a
// bad value is a *UsageError.
func (c *Flags) Logger(out io.Writer, component, instance string) (zerolog.Logger, error) {
	log, err := observability.NewLogger(out, observability.LogFormat(c.LogFormat), c.LogLevel, component, instance)
	if err != nil {
		return log, &UsageError{err}
	}
	return log, nil
}

// EnvOr is the environment variable name when it is set and not empty,
// else def: the default of a flag that the environment can set.
func EnvOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}

// Setup loads the configuration (Load) and builds the daemon's loggers:
// base, without a component, for its services, which name themselves,
// and log, the component's own, which reports the configuration's
// warnings. Every error is a *UsageError.
func (c *Flags) Setup(out io.Writer, component string) (cfg *config.Config, base, log zerolog.Logger, err error) {
	cfg, warnings, err := c.Load()
	if err != nil {
		return nil, base, log, err
	}
	if base, err = c.Logger(out, "", cfg.Instance); err != nil {
		return nil, base, log, err
	}
	log = base.With().Str("component", component).Logger()
	for _, w := range warnings {
		log.Warn().Str("config", c.ConfigPath).Msg(w)
	}
	return cfg, base, log, nil
}
