package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/connect"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/redisconn"
)

// redisCLITarget is how redis-cli reaches an instance's Redis. The
// password never goes on the command line (where ps shows it): redis-cli
// reads it from REDISCLI_AUTH.
type redisCLITarget struct {
	host, port string
	socket     string // a unix socket instead of host and port
	db         string
	user       string
	password   string
	cluster    bool
	tls        bool
	tlsFiles   config.RedisTLSConfig
}

// argv returns redis-cli's arguments before the user's, and the
// environment entries to add.
func (t redisCLITarget) argv() (args, env []string) {
	if t.socket != "" {
		args = append(args, "-s", t.socket)
	} else {
		args = append(args, "-h", t.host, "-p", t.port)
	}
	if t.db != "" && t.db != "0" {
		args = append(args, "-n", t.db)
	}
	if t.user != "" {
		args = append(args, "--user", t.user)
	}
	if t.cluster {
		args = append(args, "-c")
	}
	if t.tls {
		args = append(args, "--tls")
		f := t.tlsFiles
		for _, o := range []struct{ flag, v string }{{"--cacert", f.CAFile}, {"--cert", f.CertFile}, {"--key", f.KeyFile}, {"--sni", f.ServerName}} {
			if o.v != "" {
				args = append(args, o.flag, o.v)
			}
		}
		if f.InsecureSkipVerify {
			args = append(args, "--insecure")
		}
	}
	if t.password != "" {
		env = append(env, "REDISCLI_AUTH="+t.password)
	}
	return args, env
}

// redisCLITargetFromURL reads a redis://, rediss:// or unix:// URL, as
// instance records and services.redis.url hold them.
func redisCLITargetFromURL(raw string) (redisCLITarget, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return redisCLITarget{}, fmt.Errorf("the Redis URL cannot be read: %w", err)
	}
	var t redisCLITarget
	if u.User != nil {
		t.user = u.User.Username()
		t.password, _ = u.User.Password()
	}
	q := u.Query()
	if p := q.Get("password"); p != "" {
		t.password = p
	}
	t.db = strings.TrimPrefix(u.Path, "/")
	switch u.Scheme {
	case "unix":
		t.socket, t.db = u.Path, q.Get("db")
	case "redis", "rediss":
		t.tls = u.Scheme == "rediss"
		t.host, t.port = u.Hostname(), u.Port()
		if t.port == "" {
			t.port = "6379"
		}
	default:
		return redisCLITarget{}, fmt.Errorf("a Redis URL starts with redis://, rediss:// or unix://, not %q", u.Scheme+"://")
	}
	if t.user == "default" {
		t.user = "" // redis-cli's AUTH with the password alone is the default user
	}
	return t, nil
}

// redisCLITargetOf finds the Redis of the instance the command means, as
// App.Connect does: --redis-url (or SETT_REDIS_URL); else sett.yml's
// external Redis (with TLS files and ACL user); else the record's URL.
func redisCLITargetOf(app *App) (redisCLITarget, error) {
	raw := app.redisURL
	if raw == "" {
		raw = app.env("SETT_REDIS_URL")
	}
	if raw != "" {
		return redisCLITargetFromURL(raw)
	}
	rec, findErr := instance.Find(app.Workspace(), app.InstanceName())
	ws, recURL := app.Workspace(), ""
	if rec != nil {
		ws, recURL = rec.Workspace, rec.RedisURL
	}
	cfg, _, cfgErr := config.Load(configPathIn(ws))
	if cfgErr == nil {
		if err := cfg.ApplyEnv(app.LookupEnv); err != nil {
			return redisCLITarget{}, err
		}
		if r := cfg.Services.Redis; r.External() {
			return redisCLITargetOfConfig(r, recURL)
		}
	}
	if findErr != nil && isNoInstance(findErr) {
		// No instance record here: a compose stack's .env may name one.
		st, ok, err := connect.ComposeStackIn(app.Dir)
		if err != nil {
			return redisCLITarget{}, err
		}
		if name := app.InstanceName(); ok && (name == "" || name == st.Instance) {
			return redisCLITargetFromURL(st.RedisURL())
		}
	}
	if findErr != nil {
		if cfgErr != nil && !errors.Is(cfgErr, fs.ErrNotExist) {
			return redisCLITarget{}, fmt.Errorf("%w; and %s cannot be read: %v", findErr, configPathIn(ws), cfgErr)
		}
		return redisCLITarget{}, findErr
	}
	return redisCLITargetFromURL(rec.RedisURL)
}

// redisCLITargetOfConfig reaches an external Redis that sett.yml names.
func redisCLITargetOfConfig(r config.RedisConfig, recordURL string) (redisCLITarget, error) {
	var t redisCLITarget
	var err error
	switch r.Topology() {
	case "sentinel":
		host, port, serr := sentinelMaster(r)
		if serr != nil {
			return t, serr
		}
		t = redisCLITarget{host: host, port: port}
	case "cluster":
		if len(r.Cluster.Addresses) == 0 {
			return t, errors.New("services.redis.cluster.addresses is empty")
		}
		host, port, serr := net.SplitHostPort(r.Cluster.Addresses[0])
		if serr != nil {
			return t, fmt.Errorf("services.redis.cluster.addresses[0] %q: %w", r.Cluster.Addresses[0], serr)
		}
		t = redisCLITarget{host: host, port: port, cluster: true}
	default:
		raw := recordURL
		if raw == "" {
			raw = r.URL
		}
		if t, err = redisCLITargetFromURL(raw); err != nil {
			return t, err
		}
	}
	if r.Username != "" && t.user == "" {
		t.user = r.Username
	}
	if r.Password != "" && t.password == "" {
		t.password = r.Password
	}
	if r.TLS.On(r.URL) || t.tls {
		t.tls, t.tlsFiles = true, r.TLS
	}
	return t, nil
}

// sentinelMaster asks the sentinels of r, in order, where their master is
// now: redis-cli talks to one node, so `sett redis-cli` on a Sentinel set
// reaches the master of the moment (run it again after a failover).
func sentinelMaster(r config.RedisConfig) (host, port string, err error) {
	tc, err := redisconn.TLSConfig(r.TLS)
	if err != nil {
		return "", "", err
	}
	if !r.TLS.On("") {
		tc = nil
	}
	var errs []error
	for _, addr := range r.Sentinel.Addresses {
		sc := redis.NewSentinelClient(&redis.Options{Addr: addr, Username: r.Sentinel.Username, Password: r.Sentinel.Password,
			TLSConfig: tc, DialTimeout: 3 * time.Second, ReadTimeout: 3 * time.Second, MaxRetries: -1})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		hp, err := sc.GetMasterAddrByName(ctx, r.Sentinel.MasterName).Result()
		cancel()
		_ = sc.Close()
		if err == nil && len(hp) == 2 {
			return hp[0], hp[1], nil
		}
		if err == nil {
			err = fmt.Errorf("no address for master %q", r.Sentinel.MasterName)
		}
		errs = append(errs, fmt.Errorf("sentinel %s: %w", addr, err))
	}
	return "", "", fmt.Errorf("no sentinel in services.redis.sentinel.addresses named the master %q (check the addresses, master_name and SETT_REDIS_SENTINEL_PASSWORD): %w",
		r.Sentinel.MasterName, errors.Join(errs...))
}

func newRedisCLICmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "redis-cli [ARGS...]",
		Short: "Run redis-cli against the instance's Redis (host, port or socket, TLS and credentials filled in)",
		Long: `Run redis-cli against the Redis of the instance of this workspace (or --name,
or --redis-url), with the host and port (or unix socket), database, TLS files,
ACL user and password filled in. The password reaches redis-cli through its
REDISCLI_AUTH variable, never on the command line. Everything after the
command goes to redis-cli as it is:

  sett redis-cli PING
  sett redis-cli --scan --pattern 'sett:demo:*' | head
  sett redis-cli HGETALL sett:demo:artefact:FULL-ID     (ids: sett hoard --full)

Put sett's own flags before the command name: sett --name demo redis-cli PING.`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := takeSettFlags(cmd, args)
			if err != nil {
				return err
			}
			path, err := exec.LookPath("redis-cli")
			if err != nil {
				return errors.New("redis-cli is not installed: install it (Debian and Ubuntu: apt-get install redis-tools; macOS: brew install redis)")
			}
			t, err := redisCLITargetOf(app)
			if err != nil {
				if errors.Is(err, instance.ErrNoInstance) {
					return explainNoInstance(cmd.Context(), app, err)
				}
				return err
			}
			pre, env := t.argv()
			c := exec.CommandContext(cmd.Context(), path, append(pre, args...)...)
			c.Env = append(os.Environ(), env...)
			c.Stdin, c.Stdout, c.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			err = c.Run()
			var exitErr *exec.ExitError
			if errors.As(err, &exitErr) {
				return &ExitError{Code: exitErr.ExitCode(), Err: fmt.Errorf("redis-cli exited with status %d", exitErr.ExitCode())}
			}
			return err
		},
	}
	// Every argument is redis-cli's (--scan, -n 2 ...): sett's own flags
	// go before the command name (sett --name demo redis-cli ...).
	cmd.DisableFlagParsing = true
	return cmd
}

// takeSettFlags parses sett's own long flags (--name, --redis-url, --full,
// --no-color, --timeout-op) at the front of args, where flag parsing
// left them (it is off, so that every other argument reaches redis-cli as
// it is), and returns the rest. -n stays redis-cli's (its database).
func takeSettFlags(cmd *cobra.Command, args []string) ([]string, error) {
	for len(args) > 0 {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(args[0], "--"), "=")
		if !strings.HasPrefix(args[0], "--") || name == "" {
			return args, nil
		}
		fl := cmd.Flags().Lookup(name)
		if fl == nil || name == "help" {
			return args, nil
		}
		args = args[1:]
		if !hasValue {
			if fl.Value.Type() == "bool" {
				value = "true"
			} else if len(args) > 0 {
				value, args = args[0], args[1:]
			} else {
				return nil, usageError("--%s needs a value", name)
			}
		}
		if err := cmd.Flags().Set(name, value); err != nil {
			return nil, usageError("--%s %q: %v", name, value, err)
		}
	}
	return args, nil
}
