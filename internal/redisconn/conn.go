package redisconn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
)

// ErrTLS is returned when a TLS file cannot be read or used.
var ErrTLS = errors.New("redisconn: tls")

// Conn builds the connection for r. redisURL, when not empty, replaces
// r.URL (the runtimes hand each component a URL with its own ACL user).
// It returns ErrTLS for unreadable or invalid certificate files.
func Conn(r config.RedisConfig, redisURL string) (blackboard.Conn, error) {
	if redisURL == "" {
		// Not ConnectURL: a URL without credentials takes Username and
		// Password from the Conn, so an ACL user is not lost.
		redisURL = r.URL
	}
	c := blackboard.Conn{Username: r.Username, Password: r.Password}
	switch r.Topology() {
	case "sentinel":
		c.Sentinel = &blackboard.SentinelConn{MasterName: r.Sentinel.MasterName, Addrs: r.Sentinel.Addresses,
			Username: r.Sentinel.Username, Password: r.Sentinel.Password}
	case "cluster":
		c.ClusterAddrs = r.Cluster.Addresses
	default:
		c.URL = redisURL
	}
	if r.TLS.On(c.URL) {
		tc, err := TLSConfig(r.TLS)
		if err != nil {
			return blackboard.Conn{}, err
		}
		c.TLS = tc
	}
	return c, nil
}

// Options are the blackboard options the Redis settings imply.
func Options(cfg *config.Config) blackboard.Options {
	r := cfg.Services.Redis
	return blackboard.Options{Instance: cfg.Instance, HashTag: r.HashTag,
		MaxPayloadBytes: int(cfg.Orchestrator.MaxPayloadBytes.Int64()),
		WaitReplicas:    r.WaitReplicas, WaitTimeout: time.Duration(r.WaitTimeout)}
}

// TLSConfig loads the CA and client certificate files of t. Certificate
// checks stay on unless t.InsecureSkipVerify says otherwise, explicitly.
func TLSConfig(t config.RedisTLSConfig) (*tls.Config, error) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName,
		InsecureSkipVerify: t.InsecureSkipVerify} //nolint:gosec // only when the user wrote insecure_skip_verify: true
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: services.redis.tls.ca_file: %v", ErrTLS, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: services.redis.tls.ca_file %s holds no PEM certificate", ErrTLS, t.CAFile)
		}
		tc.RootCAs = pool
	}
	if t.CertFile != "" || t.KeyFile != "" {
		pair, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: services.redis.tls.cert_file/key_file: %v", ErrTLS, err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}
