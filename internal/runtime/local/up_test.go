package local

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/runtime"
)

func TestBaseEnvDropsSettVariablesButTheLogLevel(t *testing.T) {
	got := baseEnv([]string{"PATH=/bin", "SETT_INSTANCE=other", "SETT_REDIS_URL=redis://x", "SETT_LOG_LEVEL=debug", "HOME=/h", "SETTLE=1"})
	want := []string{"PATH=/bin", "SETT_LOG_LEVEL=debug", "HOME=/h", "SETTLE=1"}
	if !slices.Equal(got, want) {
		t.Errorf("baseEnv = %v, want %v", got, want)
	}
}

func TestWithEnvOverridesAndSorts(t *testing.T) {
	got := withEnv([]string{"PATH=/bin", "B=1"}, map[string]string{"A": "x", "PATH": "/mine"}, map[string]string{"A": "y"})
	want := []string{"A=y", "B=1", "PATH=/mine"}
	if !slices.Equal(got, want) {
		t.Errorf("withEnv = %v, want %v", got, want)
	}
}

// testConfig parses yaml as sett.yml.
func testConfig(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, _, err := config.Parse([]byte(yaml), "sett.yml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestCheckSpecRefusesWhatTheLocalRuntimeCannotRun(t *testing.T) {
	ws := t.TempDir()
	cfgPath := filepath.Join(ws, "sett.yml")
	if err := os.WriteFile(cfgPath, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := testConfig(t, "version: \"1.0\"\nagents:\n  writer:\n    command: [\"sett-writer\"]\n")
	tests := []struct {
		name string
		spec runtime.UpSpec
		want string // in the error; "" for none
	}{
		{"valid", runtime.UpSpec{Name: "demo", Workspace: ws, ConfigPath: cfgPath, Config: good}, ""},
		{"bad name", runtime.UpSpec{Name: "Demo!", Workspace: ws, ConfigPath: cfgPath, Config: good}, "instance name"},
		{"no config", runtime.UpSpec{Name: "demo", Workspace: ws, ConfigPath: cfgPath}, "no configuration"},
		{"workspace missing", runtime.UpSpec{Name: "demo", Workspace: filepath.Join(ws, "nope"), ConfigPath: cfgPath, Config: good}, "not a directory"},
		{"agent without command", runtime.UpSpec{Name: "demo", Workspace: ws, ConfigPath: cfgPath,
			Config: testConfig(t, "version: \"1.0\"\nagents:\n  writer:\n    image: x:1\n")}, "agents.writer.command is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkSpec(&tt.spec)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("checkSpec = %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("checkSpec = %v, want ErrInvalidSpec mentioning %q", err, tt.want)
			}
		})
	}
}

// fakeBinDir holds an executable file for each name.
func fakeBinDir(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestUpNamesAMissingProgramAndCreatesNothing(t *testing.T) {
	notFound := func(string) (string, error) { return "", exec.ErrNotFound }
	tests := []struct {
		name     string
		binaries []string // next to sett
		redisURL string
		want     string
	}{
		{"no redis-server", []string{"sett", "sett-orchestrator", "sett-cub"}, "",
			"redis-server not found on PATH: install it (Debian: apt-get install redis-server) or set services.redis.url"},
		{"no sett-cub", []string{"sett", "sett-orchestrator"}, "", "sett-cub is neither next to"},
		{"no sett-orchestrator", []string{"sett", "sett-cub"}, "redis://127.0.0.1:1", "run `make build`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := t.TempDir()
			yaml := "version: \"1.0\"\nagents:\n  writer:\n    command: [\"sett-writer\"]\n"
			if tt.redisURL != "" {
				yaml += "services:\n  redis:\n    url: " + tt.redisURL + "\n"
			}
			cfgPath := filepath.Join(ws, "sett.yml")
			if err := os.WriteFile(cfgPath, []byte(yaml), 0o644); err != nil {
				t.Fatal(err)
			}
			rt := &Runtime{Executable: filepath.Join(fakeBinDir(t, tt.binaries...), "sett"), LookPathFunc: notFound}
			_, err := rt.Up(context.Background(), runtime.UpSpec{Name: "demo", Workspace: ws, ConfigPath: cfgPath, Config: testConfig(t, yaml)})
			if !errors.Is(err, ErrBinaryNotFound) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Up = %v, want ErrBinaryNotFound mentioning %q", err, tt.want)
			}
			if _, err := os.Stat(filepath.Join(ws, ".sett")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("Up created .sett although it failed before starting anything (stat: %v)", err)
			}
		})
	}
}
