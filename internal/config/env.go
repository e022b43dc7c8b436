package config

import (
	"errors"
	"fmt"
	"strings"
)

// Environment variables read by ApplyEnv. Each overrides one key of the
// file; command-line flags, applied by the caller afterwards, override
// both.
const (
	// EnvInstance overrides instance.
	EnvInstance = "SETT_INSTANCE"
	// EnvRedisURL overrides services.redis.url.
	EnvRedisURL = "SETT_REDIS_URL"
	// EnvRedisPassword overrides services.redis.password.
	EnvRedisPassword = "SETT_REDIS_PASSWORD"
	// EnvRedisUsername overrides services.redis.username (the ACL user).
	EnvRedisUsername = "SETT_REDIS_USERNAME"
	// EnvRedisSentinelPassword overrides services.redis.sentinel.password.
	EnvRedisSentinelPassword = "SETT_REDIS_SENTINEL_PASSWORD"
	// EnvHashTag overrides services.redis.hash_tag: true, false, 1 or 0
	// (case-insensitive).
	EnvHashTag = "SETT_HASH_TAG"
)

// ApplyEnv overrides settings from the environment through lookup (pass
// os.LookupEnv; a nil lookup changes nothing). A variable that is unset or
// set to the empty string leaves the file's value alone.
//
// Each value is checked as Validate would check it. If any is bad, ApplyEnv
// changes nothing and returns every problem joined, each wrapping ErrEnv and
// naming its variable. The password is never repeated in a message.
func (c *Config) ApplyEnv(lookup func(string) (string, bool)) error {
	if lookup == nil {
		return nil
	}
	get := func(name string) (string, bool) {
		v, ok := lookup(name)
		return v, ok && v != ""
	}

	var errs []error
	var overridden []string // paths whose file value is replaced
	next := *c              // applied only if every value is good

	if v, ok := get(EnvInstance); ok {
		if msg := checkInstance(v); msg != "" {
			errs = append(errs, fmt.Errorf("%w %s: %s", ErrEnv, EnvInstance, msg))
		}
		next.Instance = v
		overridden = append(overridden, "instance")
	}
	if v, ok := get(EnvRedisURL); ok {
		if msg := checkRedisURL(v); msg != "" {
			errs = append(errs, fmt.Errorf("%w %s: %s", ErrEnv, EnvRedisURL, msg))
		}
		next.Services.Redis.URL = v
		overridden = append(overridden, "services.redis.url")
	}
	if v, ok := get(EnvRedisPassword); ok {
		next.Services.Redis.Password = v
		overridden = append(overridden, "services.redis.password")
	}
	if v, ok := get(EnvRedisUsername); ok {
		next.Services.Redis.Username = v
		overridden = append(overridden, "services.redis.username")
	}
	if v, ok := get(EnvRedisSentinelPassword); ok {
		next.Services.Redis.Sentinel.Password = v
		overridden = append(overridden, "services.redis.sentinel.password")
	}
	if v, ok := get(EnvHashTag); ok {
		overridden = append(overridden, "services.redis.hash_tag")
		switch strings.ToLower(v) {
		case "true", "1":
			next.Services.Redis.HashTag = true
		case "false", "0":
			next.Services.Redis.HashTag = false
		default:
			errs = append(errs, fmt.Errorf("%w %s: %q is not a boolean (use true, false, 1 or 0)", ErrEnv, EnvHashTag, v))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}

	// The file's lines no longer describe these values.
	for _, path := range overridden {
		c.src.forget(path)
	}
	*c = next
	return nil
}
