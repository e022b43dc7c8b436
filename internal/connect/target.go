package connect

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/redisconn"
)

// Request is what a caller says about the instance it means; the rest
// comes from the environment and the files Resolve reads.
type Request struct {
	// Dir is the directory the caller runs in: the workspace is the
	// nearest directory above it holding sett.yml or .sett, and a compose
	// stack's .env is read from Dir itself.
	Dir string
	// URL is a Redis URL given explicitly (sett's --redis-url); "" reads
	// SETT_REDIS_URL.
	URL string
	// Instance names the instance explicitly (sett's --name); "" reads
	// SETT_INSTANCE.
	Instance string
	// LookupEnv reads the environment (os.LookupEnv in production); nil
	// reads nothing.
	LookupEnv func(string) (string, bool)
	// Access is the Redis user to connect as when the runtime that
	// started the instance created ACL users (the record names them).
	Access instance.Access
	// NameHint says how the caller names an instance ("pass --name"), for
	// the error of an external Redis that nothing names an instance of.
	NameHint string
	// ExplainNoInstance, when set, turns an error that wraps
	// instance.ErrNoInstance into a fuller one (the CLI asks its
	// runtimes whether the instance is stopped); it gets other errors of
	// instance.Find too, and returns those as they are.
	ExplainNoInstance func(error) error
}

// targetKind is how Resolve found a target: it decides what a failure to
// reach it says.
type targetKind int

const (
	kindURL      targetKind = iota // an explicit URL, or an instance record's
	kindCompose                    // a compose stack's .env
	kindExternal                   // services.redis of sett.yml
)

// Target is the Redis and the instance Resolve chose, ready to dial. The
// zero value dials nothing.
type Target struct {
	// Instance is the instance's name.
	Instance string
	// Conn reaches its Redis: one URL, or the topology, TLS files and
	// ACL user of an external Redis.
	Conn blackboard.Conn
	// HashTag says that the instance's keys are hash-tagged.
	HashTag bool
	// Record is the running instance's record; nil when the URL and the
	// instance were both given, or a compose stack was found.
	Record *instance.Record
	// Workspace is the workspace of Request.Dir (instance.FindWorkspace):
	// the one whose sett.yml the caller's own settings come from.
	Workspace string
	// Where describes, without secrets, a Redis that one URL does not
	// (an external topology, a compose stack); "" for a URL.
	Where string

	kind targetKind
	// check says what to verify when an external Redis does not answer.
	check string
	// composeDir is the compose stack's directory.
	composeDir string
}

// Resolve finds the Redis and the instance req means, in this order:
//
//   - The URL is req.URL, else SETT_REDIS_URL; the instance is
//     req.Instance, else SETT_INSTANCE. A URL is used as it is given:
//     its user and password are the URL's, and nothing else is read
//     for the connection.
//   - Without a URL or an instance, the running instance record of the
//     workspace (instance.Find: the named one, or the workspace's only
//     one) supplies what is missing.
//   - Without a URL and without a record, a compose stack in req.Dir
//     (docker-compose.yml and a .env naming SETT_REDIS_PASSWORD) whose
//     instance is the one named (or any, when none is) is reached on
//     127.0.0.1.
//   - Without a URL, a sett.yml (the record's workspace's, else the
//     workspace's) whose services.redis names an external Redis (url,
//     sentinel or cluster), with the environment applied
//     (config.ApplyEnv: SETT_REDIS_PASSWORD, SETT_REDIS_USERNAME,
//     SETT_REDIS_SENTINEL_PASSWORD, SETT_HASH_TAG, SETT_INSTANCE), is
//     reached as the daemons reach it (TLS files, ACL user); a single
//     node keeps the record's URL, whose password the runtime resolved
//     at `sett up`. The instance is the one named, else sett.yml's, else
//     the record's.
//   - Otherwise the record's URL for req.Access, with the record's
//     instance and hash tag.
//
// Errors: a bad SETT_REDIS_URL or SETT_INSTANCE wraps config.ErrEnv and
// names the variable; a sett.yml the loader refuses, when no record
// reaches the instance anyway, is named with the missing instance; bad
// environment values for sett.yml and unusable TLS files name the
// variable or the file; *NoNameError when an external Redis has no
// instance name; otherwise an error wrapping instance.ErrNoInstance
// (through req.ExplainNoInstance).
func Resolve(req Request) (*Target, error) {
	lookup := req.LookupEnv
	if lookup == nil {
		lookup = func(string) (string, bool) { return "", false }
	}
	env := func(name string) string { v, _ := lookup(name); return v }
	explain := req.ExplainNoInstance
	if explain == nil {
		explain = func(err error) error { return err }
	}

	url, name := req.URL, req.Instance
	var fromEnv []string // the variables used as they are
	if url == "" {
		if url = env(config.EnvRedisURL); url != "" {
			fromEnv = append(fromEnv, config.EnvRedisURL)
		}
	}
	if name == "" {
		if name = env(config.EnvInstance); name != "" {
			fromEnv = append(fromEnv, config.EnvInstance)
		}
	}
	if err := checkEnv(lookup, fromEnv...); err != nil {
		return nil, err
	}
	ws := instance.FindWorkspace(req.Dir)

	var rec *instance.Record
	var findErr error
	if url == "" || name == "" {
		rec, findErr = instance.Find(ws, name)
	}
	if url == "" && errors.Is(findErr, instance.ErrNoInstance) {
		// No instance record here: a compose stack's .env may name one.
		st, ok, err := ComposeStackIn(req.Dir)
		if err != nil {
			return nil, err
		}
		if ok && (name == "" || name == st.Instance) {
			return &Target{Instance: st.Instance, Conn: blackboard.Conn{URL: st.RedisURL()}, Workspace: ws,
				Where: st.Where(), kind: kindCompose, composeDir: st.Dir}, nil
		}
	}
	if url == "" {
		// The record's workspace holds the sett.yml the instance was
		// started with; without a record, the one here may still name
		// an external Redis.
		cfgWS, recURL := ws, ""
		if rec != nil {
			cfgWS, recURL = rec.Workspace, rec.RedisURL
		}
		t, err := external(cfgWS, recURL, lookup)
		var cfgErr *configError
		switch {
		case errors.As(err, &cfgErr) && rec != nil:
			// The record's URL reaches a Redis the runtime started.
		case cfgErr != nil:
			// Whatever the file meant to name, there is no instance to
			// fall back to: say both.
			return nil, fmt.Errorf("%w; and %s cannot be read: %v", explain(findErr), configPath(cfgWS), cfgErr)
		case err != nil:
			return nil, err
		}
		if t != nil {
			if name == "" {
				name = t.Instance
			}
			if name == "" && rec != nil {
				name = rec.Name
			}
			if name == "" {
				return nil, &NoNameError{Where: t.Where, Hint: req.NameHint}
			}
			t.Instance, t.Record, t.Workspace = name, rec, ws
			return t, nil
		}
	}
	if url == "" || name == "" {
		if findErr != nil {
			return nil, explain(findErr)
		}
		if url == "" {
			url = rec.URLFor(req.Access)
		}
		if name == "" {
			name = rec.Name
		}
	}
	return &Target{Instance: name, Conn: blackboard.Conn{URL: url}, HashTag: rec != nil && rec.HashTag,
		Record: rec, Workspace: ws, kind: kindURL}, nil
}

// Dial connects to the target with opts, whose Instance and HashTag are
// the target's. A setting the engine refuses wraps blackboard.ErrInvalid;
// a Redis that does not answer gets an error that says where Resolve
// found it and what to check.
func (t *Target) Dial(ctx context.Context, opts blackboard.Options) (*blackboard.Client, error) {
	opts.Instance, opts.HashTag = t.Instance, t.HashTag
	bb, err := blackboard.DialConn(ctx, t.Conn, opts)
	if err == nil {
		return bb, nil
	}
	switch t.kind {
	case kindCompose:
		return nil, fmt.Errorf("cannot reach the Redis of the %s: %w (is the stack up? `docker-compose ps` in %s)", t.Where, err, t.composeDir)
	case kindExternal:
		if errors.Is(err, blackboard.ErrInvalid) {
			return nil, err
		}
		return nil, fmt.Errorf("cannot reach the Redis of instance %s at %s: %w (check %s)", t.Instance, t.Where, err, t.check)
	}
	return nil, fmt.Errorf("cannot reach the Redis of instance %s: %w (is it running? %s)", t.Instance, err, restartHint(t.Record, t.Instance))
}

// checkEnv checks the variables in names as config.ApplyEnv checks them,
// so that a bad SETT_REDIS_URL or SETT_INSTANCE, which Resolve uses as
// given, is named before anything is dialled. The other variables are
// checked where sett.yml is read.
func checkEnv(lookup func(string) (string, bool), names ...string) error {
	if len(names) == 0 {
		return nil
	}
	var c config.Config
	return c.ApplyEnv(func(name string) (string, bool) {
		if !slices.Contains(names, name) {
			return "", false
		}
		return lookup(name)
	})
}

// external reads the services.redis section of the sett.yml of
// workspace, with the environment applied (SETT_REDIS_PASSWORD,
// SETT_REDIS_USERNAME, SETT_REDIS_SENTINEL_PASSWORD, SETT_HASH_TAG). It
// returns nil when there is no sett.yml or it names no external Redis
// (the runtime started Redis and the record reaches it). recordURL is the
// instance record's URL, if any: for a single external node it keeps the
// password the runtime resolved at `sett up` (perhaps from the
// environment of another shell), while sett.yml adds the TLS files and
// the ACL user. A file that cannot be loaded is a configError; bad
// environment values and unusable TLS files are plain errors.
//
// An external Redis is reached the way the daemons reach it (redisconn,
// then blackboard.DialConn), so whatever lets the daemons in lets the
// commands in.
func external(workspace, recordURL string, lookupEnv func(string) (string, bool)) (*Target, error) {
	path := configPath(workspace)
	if _, err := os.Stat(path); err != nil {
		return nil, nil
	}
	cfg, _, err := config.Load(path)
	if err != nil {
		return nil, &configError{err}
	}
	if err := cfg.ApplyEnv(lookupEnv); err != nil {
		return nil, err
	}
	r := cfg.Services.Redis
	if !r.External() {
		return nil, nil
	}
	if r.Topology() != "url" {
		recordURL = "" // the record has no URL for a sentinel or cluster
	}
	conn, err := redisconn.Conn(r, recordURL)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t := &Target{Conn: conn, HashTag: r.HashTag, Instance: cfg.Instance, kind: kindExternal}
	switch r.Topology() {
	case "cluster":
		t.Where = "Redis Cluster " + strings.Join(r.Cluster.Addresses, ", ")
		t.check = fmt.Sprintf("that the nodes in services.redis.cluster.addresses of %s answer from here and that services.redis.password (or %s) is the cluster's",
			path, config.EnvRedisPassword)
	case "sentinel":
		t.Where = fmt.Sprintf("master %q through sentinel %s", r.Sentinel.MasterName, strings.Join(r.Sentinel.Addresses, ", "))
		t.check = fmt.Sprintf("that the sentinels in services.redis.sentinel.addresses of %s answer from here and monitor master_name %q, "+
			"and the passwords: services.redis.sentinel.password (or %s) for the sentinels, services.redis.password (or %s) for the master",
			path, r.Sentinel.MasterName, config.EnvRedisSentinelPassword, config.EnvRedisPassword)
	default:
		t.Where = RedactURL(r.URL)
		t.check = fmt.Sprintf("services.redis.url, password and tls files of %s", path)
	}
	if conn.TLS != nil {
		t.Where += " (TLS)"
		t.check += ", and services.redis.tls (ca_file, cert_file, key_file, server_name)"
	}
	return t, nil
}

// configPath is the sett.yml of workspace.
func configPath(workspace string) string { return filepath.Join(workspace, config.DefaultFilename) }

// RedactURL is raw (a Redis URL) with its password hidden; "" for "".
func RedactURL(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}

// restartHint says how to check and start the instance a command could
// not reach, with its --name and, when the record knows it, --runtime: a
// bare `sett up` could start another, empty instance.
func restartHint(rec *instance.Record, name string) string {
	if rec != nil {
		return fmt.Sprintf("try `sett list`, or `sett up --name %s --runtime %s`", rec.Name, rec.Runtime)
	}
	if name != "" {
		return fmt.Sprintf("try `sett list`, or `sett up --name %s` in its workspace", name)
	}
	return "try `sett list`"
}
