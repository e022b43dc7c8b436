package local

import (
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/instance"
)

func TestRedisPasswordIsGeneratedOnceAndReused(t *testing.T) {
	sd := stateDir(t.TempDir())
	pw, created, err := sd.redisPassword("")
	if err != nil {
		t.Fatal(err)
	}
	if !created {
		t.Error("first call did not report that it created the password file")
	}
	if raw, err := hex.DecodeString(pw); err != nil || len(pw) != 32 || len(raw) != 16 {
		t.Errorf("password %q is not 32 hex characters", pw)
	}
	st, err := os.Stat(sd.passwordFile())
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("password file mode %v, want 0600", st.Mode().Perm())
	}
	again, created, err := sd.redisPassword("")
	if err != nil {
		t.Fatal(err)
	}
	if again != pw || created {
		t.Errorf("second call: %q (created %v), want the stored %q", again, created, pw)
	}
}

func TestRedisPasswordPrefersTheConfiguredOne(t *testing.T) {
	sd := stateDir(t.TempDir())
	pw, created, err := sd.redisPassword("from-sett-yml")
	if err != nil {
		t.Fatal(err)
	}
	if pw != "from-sett-yml" || created {
		t.Errorf("got %q (created %v), want the configured password and no file", pw, created)
	}
	if _, err := os.Stat(sd.passwordFile()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a password file was written for a configured password: %v", err)
	}
}

func TestRedisConfKeepsThePasswordOffTheCommandLine(t *testing.T) {
	sd := stateDir(filepath.Join(t.TempDir(), `odd "dir"`))
	if err := os.MkdirAll(sd.path(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := sd.writeRedisConf(6390, sd.redisSocket(), `p"w\`); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(sd.redisConf())
	if err != nil {
		t.Fatal(err)
	}
	conf := string(b)
	for _, want := range []string{"bind 127.0.0.1\n", "port 6390\n", "appendonly yes\n", `requirepass "p\"w\\"` + "\n",
		"unixsocket " + redisQuote(sd.redisSocket()) + "\n", "unixsocketperm 700\n",
		"dir " + redisQuote(sd.redisData()) + "\n"} {
		if !strings.Contains(conf, want) {
			t.Errorf("redis.conf lacks %q:\n%s", want, conf)
		}
	}
	if st, _ := os.Stat(sd.redisConf()); st.Mode().Perm() != 0o600 {
		t.Errorf("redis.conf mode %v, want 0600", st.Mode().Perm())
	}
}

func TestRedisQuote(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "abc", `"abc"`},
		{"quote and backslash", `a"b\c`, `"a\"b\\c"`},
		{"control character", "a\nb", `"a\x0ab"`},
		{"spaces stay", "/tmp/my dir", `"/tmp/my dir"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := redisQuote(tt.in); got != tt.want {
				t.Errorf("redisQuote(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestCheckStateDirRefusesPathsOutsideTheWorkspace(t *testing.T) {
	ws := t.TempDir()
	good := stateDirOf(ws, "demo").path()
	tests := []struct {
		name    string
		rec     instance.Record
		wantErr bool
	}{
		{"the expected directory", instance.Record{Name: "demo", Workspace: ws, StateDir: good}, false},
		{"unclean but equal", instance.Record{Name: "demo", Workspace: ws, StateDir: good + "/"}, false},
		{"empty", instance.Record{Name: "demo", Workspace: ws}, true},
		{"another instance's directory", instance.Record{Name: "demo", Workspace: ws, StateDir: stateDirOf(ws, "other").path()}, true},
		{"the workspace itself", instance.Record{Name: "demo", Workspace: ws, StateDir: ws}, true},
		{"the root", instance.Record{Name: "demo", Workspace: ws, StateDir: "/"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := checkStateDir(&tt.rec)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrBadRecord) {
				t.Errorf("err = %v, want ErrBadRecord", err)
			}
		})
	}
}

func TestMkdirTrackedReportsTheTopmostCreatedDirectory(t *testing.T) {
	base := t.TempDir()
	top, err := mkdirTracked(filepath.Join(base, "a", "b", "c"))
	if err != nil {
		t.Fatal(err)
	}
	if top != filepath.Join(base, "a") {
		t.Errorf("top = %q, want %q", top, filepath.Join(base, "a"))
	}
	top, err = mkdirTracked(filepath.Join(base, "a", "b", "d"))
	if err != nil {
		t.Fatal(err)
	}
	if top != filepath.Join(base, "a", "b", "d") {
		t.Errorf("top = %q, want only the new leaf", top)
	}
	if top, err = mkdirTracked(filepath.Join(base, "a")); err != nil || top != "" {
		t.Errorf("existing directory: top %q, err %v; want nothing created", top, err)
	}
}

// A state directory an earlier version kept in the workspace (where tools
// read the password) is moved to the state home by the next Up.
func TestLegacyStateDirIsMovedOutOfTheWorkspace(t *testing.T) {
	ws := t.TempDir()
	legacy := legacyStateDirOf(ws, "old")
	if err := os.MkdirAll(legacy.path(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(legacy.passwordFile(), []byte("pw\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	from, err := migrateLegacyState(ws, "old")
	if err != nil || from != legacy.path() {
		t.Fatalf("migrateLegacyState = %q, %v", from, err)
	}
	cur := stateDirOf(ws, "old")
	if b, err := os.ReadFile(cur.passwordFile()); err != nil || string(b) != "pw\n" {
		t.Errorf("password in the state home: %q, %v", b, err)
	}
	if _, err := os.Stat(legacy.path()); !os.IsNotExist(err) {
		t.Errorf("legacy directory still there: %v", err)
	}
	if strings.HasPrefix(cur.path(), ws) {
		t.Errorf("state directory %s is inside the workspace", cur)
	}
	// A record naming the legacy directory still passes the check (Down of
	// an instance started by an earlier version).
	if sd, err := checkStateDir(&instance.Record{Name: "old", Workspace: ws, StateDir: legacy.path()}); err != nil || sd != legacy {
		t.Errorf("checkStateDir(legacy) = %v, %v", sd, err)
	}
}
