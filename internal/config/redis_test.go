package config

import (
	"strings"
	"testing"
)

func TestRedisTopologies(t *testing.T) {
	t.Run("cluster switches hash tags on", func(t *testing.T) {
		cfg, _ := mustParse(t, withLines(`services:`, `  redis:`, `    cluster: {addresses: ["r1:7000", "r2:7000"]}`))
		if !cfg.Services.Redis.HashTag || cfg.Services.Redis.Topology() != "cluster" {
			t.Fatalf("hash_tag %v topology %q, want true cluster", cfg.Services.Redis.HashTag, cfg.Services.Redis.Topology())
		}
	})
	t.Run("sentinel", func(t *testing.T) {
		cfg, _ := mustParse(t, withLines(`services:`, `  redis:`, `    sentinel: {master_name: m, addresses: ["s1:26379"], password: sp}`,
			`    tls: {enabled: true, ca_file: /ca.pem}`))
		r := cfg.Services.Redis
		if r.Topology() != "sentinel" || !r.TLS.On(r.URL) || r.HashTag {
			t.Fatalf("topology %q tls %v hash_tag %v", r.Topology(), r.TLS.On(r.URL), r.HashTag)
		}
	})

	tests := []struct {
		name  string
		lines []string
		path  string
		want  string
	}{
		{name: "cluster with hash_tag false", lines: []string{`    hash_tag: false`, `    cluster: {addresses: ["r1:7000"]}`},
			path: "services.redis.hash_tag", want: "must be true with a Redis Cluster"},
		{name: "url and sentinel", lines: []string{`    url: redis://r:6379`, `    sentinel: {master_name: m, addresses: ["s:26379"]}`},
			path: "services.redis", want: "only one of url, sentinel and cluster"},
		{name: "sentinel without master", lines: []string{`    sentinel: {addresses: ["s:26379"]}`},
			path: "services.redis.sentinel.master_name", want: "must be set"},
		{name: "sentinel address without port", lines: []string{`    sentinel: {master_name: m, addresses: ["s"]}`},
			path: "services.redis.sentinel.addresses", want: "not host:port"},
		{name: "cert without key", lines: []string{`    url: rediss://r:6380`, `    tls: {cert_file: /c.pem}`},
			path: "services.redis.tls", want: "both cert_file and key_file"},
		{name: "tls settings on a plaintext url", lines: []string{`    url: redis://r:6379`, `    tls: {ca_file: /ca.pem}`},
			path: "services.redis.tls", want: "rediss://"},
		{name: "skip_verify in the url", lines: []string{`    url: rediss://r:6380?skip_verify=true`},
			path: "services.redis.url", want: "insecure_skip_verify: true"},
		{name: "wait_replicas on a cluster", lines: []string{`    wait_replicas: 1`, `    cluster: {addresses: ["r1:7000"]}`},
			path: "services.redis.wait_replicas", want: "not supported with a cluster"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := Parse(withLines(append([]string{`services:`, `  redis:`}, tt.lines...)...), "sett.yml")
			if err == nil {
				t.Fatal("Parse accepted it")
			}
			if fe := findFieldError(t, err, tt.path); !strings.Contains(fe.Message, tt.want) {
				t.Fatalf("%s: %q, want it to contain %q", tt.path, fe.Message, tt.want)
			}
		})
	}
}
