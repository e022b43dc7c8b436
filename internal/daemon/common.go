package daemon

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/observability"
	"github.com/settdev/sett/internal/redisconn"
	"github.com/settdev/sett/internal/secretfd"
	"github.com/settdev/sett/pkg/blackboard"
)

// UsageError marks a problem with flags or configuration (exit code 2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// ExitCode maps a daemon's error to its process exit code: 0 for nil, 2
// for usage and configuration errors, 1 otherwise.
func ExitCode(err error) int {
	var u *UsageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &u):
		return 2
	}
	return 1
}

// common holds the flags every daemon takes. Precedence: flag > SETT_*
// environment > sett.yml.
type common struct {
	configPath string
	instance   string
	redisURL   string
	httpAddr   string
	logFormat  string
	logLevel   string
}

func (c *common) register(fs *flag.FlagSet, defaultHTTP string) {
	fs.StringVar(&c.configPath, "config", envOr("SETT_CONFIG", config.DefaultFilename), "path to sett.yml (env SETT_CONFIG)")
	fs.StringVar(&c.instance, "instance", "", "instance name (env SETT_INSTANCE, or instance in sett.yml)")
	fs.StringVar(&c.redisURL, "redis-url", "", "Redis URL (env SETT_REDIS_URL, or services.redis.url)")
	fs.StringVar(&c.httpAddr, "http-addr", defaultHTTP, "listen address for /healthz, /readyz and /metrics (env SETT_HTTP_ADDR)")
	fs.StringVar(&c.logFormat, "log-format", envOr("SETT_LOG_FORMAT", "auto"), "log format: auto, json or console (env SETT_LOG_FORMAT)")
	fs.StringVar(&c.logLevel, "log-level", envOr("SETT_LOG_LEVEL", "info"), "log level: debug, info, warn, error (env SETT_LOG_LEVEL)")
}

// load reads sett.yml, applies the environment and flags, and validates.
func (c *common) load() (*config.Config, []string, error) {
	cfg, warnings, err := config.Load(c.configPath)
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
	if c.instance != "" {
		cfg.Instance = c.instance
	}
	if c.redisURL != "" {
		cfg.Services.Redis.URL = c.redisURL
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

func (c *common) logger(out io.Writer, component, instance string) (zerolog.Logger, error) {
	log, err := observability.NewLogger(out, observability.LogFormat(c.logFormat), c.logLevel, component, instance)
	if err != nil {
		return log, &UsageError{err}
	}
	return log, nil
}

// connect dials Redis, retrying with backoff for up to wait: in a stack the
// daemons may start before Redis accepts connections.
func connect(ctx context.Context, cfg *config.Config, log zerolog.Logger, wait time.Duration) (*blackboard.Client, error) {
	opts := redisconn.Options(cfg)
	conn, err := redisconn.Conn(cfg.Services.Redis, "")
	if err != nil {
		return nil, &UsageError{err}
	}
	deadline := time.Now().Add(wait)
	delay := 100 * time.Millisecond
	for {
		bb, err := blackboard.DialConn(ctx, conn, opts)
		if err == nil {
			return bb, nil
		}
		if errors.Is(err, blackboard.ErrInvalid) {
			return nil, &UsageError{err}
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return nil, fmt.Errorf("redis not reachable after %s: %w", wait, err)
		}
		log.Warn().Err(err).Dur("retry_in", delay).Msg("waiting for Redis")
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		if delay < 2*time.Second {
			delay *= 2
		}
	}
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}
