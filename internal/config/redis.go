package config

import (
	"net"
	"net/url"
	"strings"
)

// RedisTLSConfig encrypts the connections to Redis (and to the sentinels).
// The zero value means plaintext unless the URL is rediss://.
type RedisTLSConfig struct {
	// Enabled turns TLS on for sentinel and cluster connections; a
	// rediss:// URL turns it on by itself. Default false.
	Enabled bool `yaml:"enabled"`

	// CAFile is a PEM bundle of the CAs that sign the server
	// certificates. Empty: the system roots.
	CAFile string `yaml:"ca_file"`

	// CertFile and KeyFile are the PEM client certificate and key, for a
	// Redis that requires them (tls-auth-clients yes). Empty: none. Set
	// both or neither.
	CertFile string `yaml:"cert_file"`
	KeyFile  string `yaml:"key_file"`

	// ServerName is the name checked in the server certificate. Empty:
	// the host Sett connects to.
	ServerName string `yaml:"server_name"`

	// InsecureSkipVerify accepts any server certificate: for test setups
	// only, and refused anywhere else (a skip_verify URL parameter is an
	// error). Default false.
	InsecureSkipVerify bool `yaml:"insecure_skip_verify"`
}

// On reports whether TLS is used at all.
func (t RedisTLSConfig) On(redisURL string) bool {
	return t.Enabled || strings.HasPrefix(redisURL, "rediss://")
}

// set reports whether any TLS setting is given.
func (t RedisTLSConfig) set() bool { return t != RedisTLSConfig{} }

// RedisSentinelConfig reaches a master through Redis Sentinel, which
// follows failovers. The zero value means no sentinel.
type RedisSentinelConfig struct {
	// MasterName is the name the sentinels monitor the master under.
	// Required with addresses.
	MasterName string `yaml:"master_name"`

	// Addresses are the sentinels, host:port. Empty: no sentinel.
	Addresses []string `yaml:"addresses"`

	// Username and Password authenticate to the sentinels (their own
	// credentials, not the master's). Empty: none. Prefer
	// SETT_REDIS_SENTINEL_PASSWORD to a password in the file.
	Username string `yaml:"username"`
	Password string `yaml:"password"`
}

// RedisClusterConfig reaches a Redis Cluster. The zero value means no
// cluster.
type RedisClusterConfig struct {
	// Addresses are seed nodes, host:port; the client discovers the rest.
	// Empty: no cluster. A cluster switches hash_tag on.
	Addresses []string `yaml:"addresses"`
}

// Topology names the Redis deployment the settings describe: "sentinel",
// "cluster", "url" (one external node) or "" (the runtime starts Redis).
func (r RedisConfig) Topology() string {
	switch {
	case len(r.Sentinel.Addresses) > 0 || r.Sentinel.MasterName != "":
		return "sentinel"
	case len(r.Cluster.Addresses) > 0:
		return "cluster"
	case r.URL != "":
		return "url"
	}
	return ""
}

// External reports whether the instance uses a Redis it does not start.
func (r RedisConfig) External() bool { return r.Topology() != "" }

// applyDefaults switches hash tags on for a cluster unless the file (or
// SETT_HASH_TAG) said otherwise; Validate then refuses an explicit false.
func (r *RedisConfig) applyDefaults(c *Config, p string) {
	if len(r.Cluster.Addresses) > 0 && !c.src.isSet(p+".hash_tag") {
		r.HashTag = true
	}
}

// validateTopology checks the connection settings beyond the URL.
func (r *RedisConfig) validateTopology(v *validator, p string) {
	modes := 0
	for _, on := range []bool{r.URL != "", len(r.Sentinel.Addresses) > 0 || r.Sentinel.MasterName != "", len(r.Cluster.Addresses) > 0} {
		if on {
			modes++
		}
	}
	if modes > 1 {
		v.addf(p, "set only one of url, sentinel and cluster (they are different ways to reach Redis)")
	}
	if s := r.Sentinel; len(s.Addresses) > 0 || s.MasterName != "" {
		if s.MasterName == "" {
			v.addf(p+".sentinel.master_name", "must be set with sentinel addresses (the name in `sentinel monitor <name> ...`)")
		}
		if len(s.Addresses) == 0 {
			v.addf(p+".sentinel.addresses", "must list at least one sentinel, host:port (like sentinel-1:26379)")
		}
		checkHostPorts(v, p+".sentinel.addresses", s.Addresses)
	}
	if len(r.Cluster.Addresses) > 0 {
		checkHostPorts(v, p+".cluster.addresses", r.Cluster.Addresses)
		if !r.HashTag {
			v.addf(p+".hash_tag", "must be true with a Redis Cluster: every Sett script touches several keys, which must share one slot (remove hash_tag: false)")
		}
	}
	t := r.TLS
	if (t.CertFile == "") != (t.KeyFile == "") {
		v.addf(p+".tls", "set both cert_file and key_file, or neither")
	}
	if r.URL != "" && t.set() && !t.Enabled && !strings.HasPrefix(r.URL, "rediss://") {
		v.addf(p+".tls", "TLS settings need a rediss:// url (or tls.enabled: true)")
	}
	if r.URL != "" && t.Enabled && strings.HasPrefix(r.URL, "redis://") {
		v.addf(p+".url", "tls.enabled is true but the url is redis:// (use rediss://)")
	}
	if r.URL != "" && t.Enabled && strings.HasPrefix(r.URL, "unix://") {
		v.addf(p+".url", "tls.enabled is true but the url is a Unix socket, which Sett reaches without TLS (turn tls off, or use rediss://host:port)")
	}
	if r.WaitReplicas < 0 {
		v.addf(p+".wait_replicas", "%d is not valid (0 or more replicas)", r.WaitReplicas)
	}
	if r.WaitReplicas > 0 && len(r.Cluster.Addresses) > 0 {
		v.addf(p+".wait_replicas", "is not supported with a cluster: set min-replicas-to-write on the cluster's masters instead")
	}
	if r.WaitTimeout < 0 {
		v.addf(p+".wait_timeout", "%s is not valid (must be 0 for the default 1s, or more)", r.WaitTimeout)
	}
	if u, err := url.Parse(r.URL); err == nil && u.Query().Has("skip_verify") {
		v.addf(p+".url", "skip_verify in the url is refused: verify the server with tls.ca_file, or for a test setup set tls.insecure_skip_verify: true")
	}
}

func checkHostPorts(v *validator, p string, addrs []string) {
	for _, a := range addrs {
		if _, port, err := net.SplitHostPort(a); err != nil || port == "" {
			v.addf(p, "%q is not host:port (like redis-1:6379)", a)
		}
	}
}
