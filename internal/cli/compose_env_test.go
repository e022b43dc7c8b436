package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestComposeStackFromEnv(t *testing.T) {
	tests := []struct {
		name    string
		env     string
		wantOK  bool
		want    composeStack
		wantErr string
	}{
		{"written by sett init --compose",
			"# comment\nCOMPOSE_PROJECT_NAME=sett-x-abc\nSETT_INSTANCE=compose\nSETT_REDIS_PASSWORD=pw\nSETT_REDIS_PORT=6381\nSETT_WORKSPACE_DIR=/w\n",
			true, composeStack{Dir: "/d/repo", Project: "sett-x-abc", Instance: "compose", Password: "pw", Port: 6381, Workspace: "/w"}, ""},
		{"quotes, export and defaults",
			"export SETT_REDIS_PASSWORD='p w'\n\n",
			true, composeStack{Dir: "/d/repo", Project: "repo", Instance: "compose", Password: "p w", Port: 6379}, ""},
		{"no password: not a Sett stack", "COMPOSE_PROJECT_NAME=other\n", false, composeStack{}, ""},
		{"a bad port says how to fix it", "SETT_REDIS_PASSWORD=pw\nSETT_REDIS_PORT=redis\n", false, composeStack{}, "SETT_REDIS_PORT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ok, err := composeStackFromEnv("/d/repo", parseDotEnv([]byte(tt.env)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || ok != tt.wantOK {
				t.Fatalf("ok = %v, err = %v", ok, err)
			}
			if ok && *s != tt.want {
				t.Errorf("got %+v, want %+v", *s, tt.want)
			}
		})
	}
}

func TestComposeStackRedisURLAndWhere(t *testing.T) {
	s := composeStack{Dir: "/d", Project: "p", Password: "a/b@c", Port: 6390}
	if got, want := s.RedisURL(), "redis://:a%2Fb%40c@127.0.0.1:6390/0"; got != want {
		t.Errorf("RedisURL = %q, want %q", got, want)
	}
	if w := s.Where(); strings.Contains(w, "a/b@c") || !strings.Contains(w, "127.0.0.1:6390") {
		t.Errorf("Where = %q: shows the password or lacks the address", w)
	}
}

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
	if err := os.WriteFile(filepath.Join(dir, composeFile), []byte("services: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := initCompose(&out, dir, dir, false); err == nil || !strings.Contains(err.Error(), "choose a directory of its own") {
		t.Fatalf("the compose directory as the workspace: %v", err)
	}
	if err := initCompose(&out, dir, "", false); err != nil {
		t.Fatal(err)
	}
	st, ok, err := composeStackIn(dir)
	if err != nil || !ok {
		t.Fatalf("composeStackIn after init: %v, %v", ok, err)
	}
	if st.Workspace != filepath.Join(dir, "workspace") || len(st.Password) != 48 || st.Project != composeProjectName(dir) || st.Port == 0 {
		t.Errorf("stack %+v", *st)
	}
	if fi, err := os.Stat(st.Workspace); err != nil || !fi.IsDir() {
		t.Errorf("workspace: %v", err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, composeEnvFile)); fi.Mode().Perm() != 0o600 {
		t.Errorf(".env mode %v, want 0600", fi.Mode().Perm())
	}
	if err := initCompose(&out, dir, "", false); err == nil || !strings.Contains(err.Error(), "exists") {
		t.Errorf("a second init: %v, want a refusal", err)
	}
	// --force rewrites it, keeping the password the Redis volume has.
	if err := initCompose(&out, dir, "ws2", true); err != nil {
		t.Fatal(err)
	}
	again, _, _ := composeStackIn(dir)
	if again.Password != st.Password || again.Workspace != filepath.Join(dir, "ws2") {
		t.Errorf("after --force: %+v (password kept: %v)", *again, again.Password == st.Password)
	}
}

// `sett redis-cli` run in the compose directory, with no instance record,
// reaches the stack's Redis with the password from .env.
func TestRedisCLIFindsTheComposeStack(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, composeFile), []byte("services: {}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, composeEnvFile), []byte("SETT_REDIS_PASSWORD=pw\nSETT_REDIS_PORT=6391\n"), 0o600)
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
