package daemon

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "sett.yml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const minimal = `version: "1.0"
instance: from-file
agents:
  a: {command: ["x"]}
services:
  redis: {url: "redis://file:6379/0"}
`

// TestLoadPrecedence checks flags > environment > sett.yml.
func TestLoadPrecedence(t *testing.T) {
	path := writeConfig(t, minimal)
	load := func(args ...string) (string, string, error) {
		var c Flags
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		c.Register(fs, "")
		if err := fs.Parse(append([]string{"--config", path}, args...)); err != nil {
			t.Fatal(err)
		}
		cfg, _, err := c.Load()
		if err != nil {
			return "", "", err
		}
		return cfg.Instance, cfg.Services.Redis.URL, nil
	}
	if inst, url, err := load(); err != nil || inst != "from-file" || url != "redis://file:6379/0" {
		t.Fatalf("file only: %q %q %v", inst, url, err)
	}
	t.Setenv("SETT_INSTANCE", "from-env")
	t.Setenv("SETT_REDIS_URL", "redis://env:6379/0")
	if inst, url, err := load(); err != nil || inst != "from-env" || url != "redis://env:6379/0" {
		t.Fatalf("env over file: %q %q %v", inst, url, err)
	}
	if inst, url, err := load("--instance", "from-flag", "--redis-url", "redis://flag:6379/0"); err != nil ||
		inst != "from-flag" || url != "redis://flag:6379/0" {
		t.Fatalf("flag over env: %q %q %v", inst, url, err)
	}
	if _, _, err := load("--instance", "Not A DNS Label"); err == nil || ExitCode(err) != 2 {
		t.Fatalf("bad instance from a flag: %v, want a usage error", err)
	}
}

func TestLoadRequiresInstanceAndRedis(t *testing.T) {
	path := writeConfig(t, "version: \"1.0\"\nagents:\n  a: {command: [\"x\"]}\n")
	var c Flags
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	c.Register(fs, "")
	if err := fs.Parse([]string{"--config", path}); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SETT_INSTANCE", "")
	t.Setenv("SETT_REDIS_URL", "")
	_, _, err := c.Load()
	if err == nil || ExitCode(err) != 2 || !strings.Contains(err.Error(), "instance") {
		t.Fatalf("load without an instance: %v, want a usage error naming the instance", err)
	}
	c.Instance = "ok"
	_, _, err = c.Load()
	if err == nil || !strings.Contains(err.Error(), "Redis URL") {
		t.Fatalf("load without Redis: %v, want an error naming the Redis URL", err)
	}
}
