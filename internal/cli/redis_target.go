package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/redisconn"
)

// redisTarget is an external Redis named by services.redis of sett.yml —
// a Sentinel-managed master, a Redis Cluster or a single node with TLS or
// an ACL user — which the instance record's single URL cannot describe.
// The CLI reaches it the way the daemons do (redisconn, then
// blackboard.DialConn), so whatever lets the daemons in lets `sett status`,
// `hoard` or `watch` in.
type redisTarget struct {
	conn    blackboard.Conn
	hashTag bool
	// instance is the instance name sett.yml (or SETT_INSTANCE) gives.
	instance string
	// where says what is dialled, without secrets.
	where string
	// check says what to verify when it does not answer.
	check string
}

// loadRedisTarget reads the services.redis section of the sett.yml of
// workspace, with the environment applied (SETT_REDIS_PASSWORD,
// SETT_REDIS_USERNAME, SETT_REDIS_SENTINEL_PASSWORD, SETT_HASH_TAG). It
// returns nil when there is no sett.yml or it names no external Redis
// (the runtime started Redis and the record reaches it). recordURL is the
// instance record's URL, if any: for a single external node it keeps the
// password the runtime resolved at `sett up` (perhaps from the
// environment of another shell), while sett.yml adds the TLS files and
// the ACL user. A file that cannot be loaded is a configError; bad
// environment values and unusable TLS files are plain errors.
func loadRedisTarget(workspace, recordURL string, lookupEnv func(string) (string, bool)) (*redisTarget, error) {
	path := configPathIn(workspace)
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
	t := &redisTarget{conn: conn, hashTag: r.HashTag, instance: cfg.Instance}
	switch r.Topology() {
	case "cluster":
		t.where = "Redis Cluster " + strings.Join(r.Cluster.Addresses, ", ")
		t.check = fmt.Sprintf("that the nodes in services.redis.cluster.addresses of %s answer from here and that services.redis.password (or %s) is the cluster's",
			path, config.EnvRedisPassword)
	case "sentinel":
		t.where = fmt.Sprintf("master %q through sentinel %s", r.Sentinel.MasterName, strings.Join(r.Sentinel.Addresses, ", "))
		t.check = fmt.Sprintf("that the sentinels in services.redis.sentinel.addresses of %s answer from here and monitor master_name %q, "+
			"and the passwords: services.redis.sentinel.password (or %s) for the sentinels, services.redis.password (or %s) for the master",
			path, r.Sentinel.MasterName, config.EnvRedisSentinelPassword, config.EnvRedisPassword)
	default:
		t.where = redactedURL(r.URL)
		t.check = fmt.Sprintf("services.redis.url, password and tls files of %s", path)
	}
	if conn.TLS != nil {
		t.where += " (TLS)"
		t.check += ", and services.redis.tls (ca_file, cert_file, key_file, server_name)"
	}
	return t, nil
}

// connectTarget dials t for the instance name (--name or SETT_INSTANCE),
// else sett.yml's instance, else the record's. A refused setting
// (blackboard.ErrInvalid) is returned as it is; a Redis that does not
// answer gets an error naming the address and what to check.
func (a *App) connectTarget(ctx context.Context, t *redisTarget, rec *instance.Record) (*blackboard.Client, error) {
	name := a.InstanceName()
	if name == "" {
		name = t.instance
	}
	if name == "" && rec != nil {
		name = rec.Name
	}
	if name == "" {
		return nil, usageError("sett.yml reaches an external Redis (%s) but names no instance: set instance in sett.yml, or %s, or pass --name",
			t.where, config.EnvInstance)
	}
	a.dialled = t.where
	bb, err := blackboard.DialConn(ctx, t.conn, blackboard.Options{Instance: name, HashTag: t.hashTag, OpTimeout: a.opTimeout})
	if errors.Is(err, blackboard.ErrInvalid) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("cannot reach the Redis of instance %s at %s: %w (check %s)", name, t.where, err, t.check)
	}
	return bb, nil
}

// redisShown is the Redis a command reached (or tried), for `sett status`:
// the external topology it dialled, else the redacted URL.
func (a *App) redisShown(rec *instance.Record) string {
	if a.dialled != "" {
		return a.dialled
	}
	return redactedURL(redisURLOf(a, rec))
}

// configError is a sett.yml that config.Load refused. With an instance
// record the record's URL still reaches the instance, so Connect goes on;
// without one it is part of the explanation.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }
