package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/connect"
)

func TestComposeProjectNameIsPerDirectory(t *testing.T) {
	a, b := composeProjectName("/home/u/sett"), composeProjectName("/home/u/other/sett")
	if a == b || !strings.HasPrefix(a, "sett-sett-") {
		t.Errorf("project names %q and %q: want distinct, sett-<dir>-<hash>", a, b)
	}
	if a != composeProjectName("/home/u/sett/") {
		t.Error("the same directory gets another project name")
	}
}

func TestComposeUser(t *testing.T) {
	for _, tt := range []struct{ uid, gid, wantUID, wantGID int }{{0, 0, 65532, 65532}, {1000, 1001, 1000, 1001}} {
		if u, g := composeUser(tt.uid, tt.gid); u != tt.wantUID || g != tt.wantGID {
			t.Errorf("composeUser(%d, %d) = %d, %d", tt.uid, tt.gid, u, g)
		}
	}
}

func TestInitComposeWritesAndKeepsEnv(t *testing.T) {
	dir := t.TempDir()
	var out bytes.Buffer
	if err := initCompose(&out, dir, "", false); err == nil || !strings.Contains(err.Error(), "docker-compose.yml") {
		t.Fatalf("without docker-compose.yml: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, connect.ComposeFile), []byte("services: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := initCompose(&out, dir, dir, false); err == nil || !strings.Contains(err.Error(), "choose a directory of its own") {
		t.Fatalf("the compose directory as the workspace: %v", err)
	}
	if err := initCompose(&out, dir, "", false); err != nil {
		t.Fatal(err)
	}
	st, ok, err := connect.ComposeStackIn(dir)
	if err != nil || !ok {
		t.Fatalf("ComposeStackIn after init: %v, %v", ok, err)
	}
	if st.Workspace != filepath.Join(dir, "workspace") || len(st.Password) != 48 || st.Project != composeProjectName(dir) || st.Port == 0 {
		t.Errorf("stack %+v", *st)
	}
	if fi, err := os.Stat(st.Workspace); err != nil || !fi.IsDir() {
		t.Errorf("workspace: %v", err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, connect.ComposeEnvFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf(".env mode %v, want 0600", fi.Mode().Perm())
	}
	if err := initCompose(&out, dir, "", false); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a second init: %v, want a refusal", err)
	}
	// --force rewrites it, keeping the password the Redis volume has.
	if err := initCompose(&out, dir, "ws2", true); err != nil {
		t.Fatal(err)
	}
	again, _, _ := connect.ComposeStackIn(dir)
	if again.Password != st.Password || again.Workspace != filepath.Join(dir, "ws2") {
		t.Errorf("after --force: %+v (password kept: %v)", *again, again.Password == st.Password)
	}
}

// `sett redis-cli` run in the compose directory, with no instance record,
// reaches the stack's Redis with the password from .env.
func TestRedisCLIFindsTheComposeStack(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, connect.ComposeFile), []byte("services: {}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, connect.ComposeEnvFile), []byte("SETT_REDIS_PASSWORD=pw\nSETT_REDIS_PORT=6391\n"), 0o600)
	app := &App{Dir: dir, LookupEnv: func(string) (string, bool) { return "", false }}
	got, err := redisCLITargetOf(app)
	if err != nil || got.host != "127.0.0.1" || got.port != "6391" || got.password != "pw" {
		t.Fatalf("target %+v, %v", got, err)
	}
	app.name = "another"
	if _, err := redisCLITargetOf(app); !isNoInstance(err) {
		t.Errorf("--name of another instance: %v, want no instance", err)
	}
}
