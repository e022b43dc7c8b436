package tool

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestScrubbedEnv(t *testing.T) {
	base := []string{
		"PATH=/usr/bin:/bin",
		"HOME=/home/cub",
		"REDIS_URL=redis://:secret@redis:6379/0",
		"SETT_REDIS_PASSWORD=secret",
		"SETT_REDIS_ADDR=redis:6379",
		"AWS_SECRET_ACCESS_KEY=nope",
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
		"TZ=UTC",
		"TMPDIR=/tmp",
		"HOME=/root", // the last occurrence wins, as in os/exec
		"GOPROXY=https://proxy.golang.org",
		"MALFORMED",
		"=nameless",
	}
	tests := []struct {
		name  string
		keep  []string
		extra map[string]string
		want  []string
	}{
		{
			name: "only the allow-list passes",
			want: []string{"HOME=/root", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "PATH=/usr/bin:/bin", "TMPDIR=/tmp", "TZ=UTC"},
		},
		{
			name: "keep adds names but never Redis settings",
			keep: []string{"GOPROXY", "REDIS_URL", "SETT_REDIS_PASSWORD", "redis_url", "UNSET", ""},
			want: []string{"GOPROXY=https://proxy.golang.org", "HOME=/root", "LANG=C.UTF-8", "LC_ALL=C.UTF-8",
				"PATH=/usr/bin:/bin", "TMPDIR=/tmp", "TZ=UTC"},
		},
		{
			name: "extra is sorted and overrides the base",
			extra: map[string]string{
				"SETT_WORKSPACE": "/workspace", "SETT_AGENT": "coder", "SETT_CLAIM_ID": "c1",
				"SETT_INSTANCE": "dev", "PATH": "/opt/tool/bin:/usr/bin", "BAD=NAME": "x", "": "y",
			},
			want: []string{"HOME=/root", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "TMPDIR=/tmp", "TZ=UTC",
				"PATH=/opt/tool/bin:/usr/bin", "SETT_AGENT=coder", "SETT_CLAIM_ID=c1", "SETT_INSTANCE=dev",
				"SETT_WORKSPACE=/workspace"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ScrubbedEnv(base, tt.keep, tt.extra)
			if !slices.Equal(got, tt.want) {
				t.Errorf("ScrubbedEnv() =\n%q\nwant\n%q", got, tt.want)
			}
			for _, kv := range got {
				if strings.Contains(kv, "secret") {
					t.Errorf("a Redis credential leaked: %q", kv)
				}
			}
		})
	}
}

func TestScrubbedEnvNeverNil(t *testing.T) {
	if got := ScrubbedEnv(nil, nil, nil); got == nil || len(got) != 0 {
		t.Errorf("ScrubbedEnv(nil, nil, nil) = %#v, want an empty non-nil slice", got)
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "runme"), 0o755)
	writeFile(t, filepath.Join(dir, "noexec"), 0o644)
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		file    string
		env     []string
		want    string
		wantErr string
	}{
		{name: "found in the child's PATH", file: "runme", env: []string{"PATH=/nonexistent:" + dir}, want: filepath.Join(dir, "runme")},
		{name: "last PATH wins", file: "runme", env: []string{"PATH=/nonexistent", "PATH=" + dir}, want: filepath.Join(dir, "runme")},
		{name: "slash used as it is", file: "./bin/tool", env: nil, want: "./bin/tool"},
		{name: "not executable", file: "noexec", env: []string{"PATH=" + dir}, wantErr: `executable "noexec" not found in the child's PATH`},
		{name: "directory", file: "adir", env: []string{"PATH=" + dir}, wantErr: `executable "adir" not found`},
		{name: "empty PATH", file: "runme", env: []string{"HOME=/"}, wantErr: "the child's PATH is empty"},
		{name: "relative entries skipped", file: "runme", env: []string{"PATH=.:" + "rel"}, wantErr: `relative entries ".", "rel" are not searched`},
		{name: "empty command", file: "", wantErr: "the command is empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.name == "relative entries skipped" {
				t.Chdir(dir) // ./runme exists, and must still not be found
			}
			got, err := lookPath(tt.file, tt.env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("lookPath() = %q, %v; want error containing %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("lookPath() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func writeFile(t testing.TB, path string, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"), perm); err != nil {
		t.Fatal(err)
	}
}
