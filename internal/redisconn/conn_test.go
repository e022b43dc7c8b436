package redisconn

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
)

func TestConnPicksTheTopology(t *testing.T) {
	tests := []struct {
		name string
		r    config.RedisConfig
		want blackboard.Topology
	}{
		{name: "url", r: config.RedisConfig{URL: "redis://r:6379/0", Username: "u", Password: "p"}, want: blackboard.TopologySingle},
		{name: "sentinel", r: config.RedisConfig{Sentinel: config.RedisSentinelConfig{MasterName: "m", Addresses: []string{"s:26379"}}}, want: blackboard.TopologySentinel},
		{name: "cluster", r: config.RedisConfig{Cluster: config.RedisClusterConfig{Addresses: []string{"c:7000"}}}, want: blackboard.TopologyCluster},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Conn(tt.r, "")
			if err != nil || c.Topology() != tt.want || c.TLS != nil {
				t.Fatalf("Conn = %+v, %v; want topology %s without TLS", c, err, tt.want)
			}
		})
	}
}

func TestTLSFilesAreChecked(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]config.RedisTLSConfig{
		"missing ca":   {CAFile: filepath.Join(dir, "nope.pem")},
		"ca not pem":   {CAFile: notPEM},
		"missing cert": {CertFile: filepath.Join(dir, "c.pem"), KeyFile: filepath.Join(dir, "k.pem")},
	} {
		if _, err := Conn(config.RedisConfig{URL: "rediss://r:6380/0", TLS: tc}, ""); !errors.Is(err, ErrTLS) {
			t.Errorf("%s: %v, want ErrTLS", name, err)
		}
	}
	c, err := Conn(config.RedisConfig{URL: "rediss://r:6380/0", TLS: config.RedisTLSConfig{ServerName: "redis.internal"}}, "")
	if err != nil || c.TLS == nil || c.TLS.InsecureSkipVerify || c.TLS.ServerName != "redis.internal" {
		t.Fatalf("rediss without files: %+v, %v; want verifying TLS for redis.internal", c.TLS, err)
	}
}
