package connect

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/instance"
)

// sentinelYAML is a sett.yml whose services.redis names a
// Sentinel-managed master; instance is its instance line ("" for none).
func sentinelYAML(instanceLine string) string {
	return "version: \"1.0\"\n" + instanceLine + "agents: {planner: {command: [sett-writer]}}\n" +
		"services:\n  redis:\n    sentinel: {master_name: m, addresses: [\"127.0.0.1:26999\"]}\n"
}

// writeFile writes name in dir, failing the test on an error.
func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// saveRecord saves a running instance's record for the workspace dir.
func saveRecord(t *testing.T, rec instance.Record) {
	t.Helper()
	if err := instance.Save(&rec); err != nil {
		t.Fatal(err)
	}
}

func TestResolve(t *testing.T) {
	const url = "redis://:pw@127.0.0.1:6390/0"
	tests := []struct {
		name string
		// setup writes the files of dir (the workspace) and returns the
		// request to resolve; the state home is empty before it.
		setup func(t *testing.T, dir string) Request
		env   map[string]string
		// want checks the target; wantErr is what the error must say.
		want    func(t *testing.T, dir string, got *Target)
		wantErr []string
		errIs   error
	}{
		{name: "the URL and the instance from the environment",
			env:   map[string]string{config.EnvRedisURL: url, config.EnvInstance: "from-env"},
			setup: func(*testing.T, string) Request { return Request{} },
			want: func(t *testing.T, _ string, got *Target) {
				if got.Conn.URL != url || got.Instance != "from-env" || got.Record != nil || got.Where != "" {
					t.Errorf("target %+v; want the environment's URL and instance, no record", got)
				}
			}},
		{name: "the caller's URL and instance win over the environment",
			env: map[string]string{config.EnvRedisURL: "redis://elsewhere:1/0", config.EnvInstance: "from-env"},
			setup: func(*testing.T, string) Request {
				return Request{URL: url, Instance: "from-flag"}
			},
			want: func(t *testing.T, _ string, got *Target) {
				if got.Conn.URL != url || got.Instance != "from-flag" {
					t.Errorf("target %+v; want the caller's URL and instance", got)
				}
			}},
		{name: "a bad SETT_REDIS_URL is named",
			env:     map[string]string{config.EnvRedisURL: "http://127.0.0.1:6390", config.EnvInstance: "x"},
			setup:   func(*testing.T, string) Request { return Request{} },
			wantErr: []string{config.EnvRedisURL, `scheme "http"`}, errIs: config.ErrEnv},
		{name: "a bad SETT_INSTANCE is named",
			env:     map[string]string{config.EnvRedisURL: url, config.EnvInstance: "Not A Name"},
			setup:   func(*testing.T, string) Request { return Request{} },
			wantErr: []string{config.EnvInstance, "not a valid instance name"}, errIs: config.ErrEnv},
		{name: "the record supplies the URL of the access and the instance",
			setup: func(t *testing.T, dir string) Request {
				writeFile(t, dir, "sett.yml", "version: \"1.0\"\nagents: {planner: {command: [sett-writer]}}\n")
				saveRecord(t, instance.Record{Name: "rec", Runtime: "local", Workspace: dir, RedisURL: url,
					HumanRedisURL: "redis://human:hpw@127.0.0.1:6390/0", ReaderRedisURL: "redis://reader:rpw@127.0.0.1:6390/0", HashTag: true})
				return Request{Dir: dir, Access: instance.AccessReader}
			},
			want: func(t *testing.T, dir string, got *Target) {
				if got.Conn.URL != "redis://reader:rpw@127.0.0.1:6390/0" || got.Instance != "rec" || !got.HashTag ||
					got.Record == nil || got.Workspace != dir {
					t.Errorf("target %+v; want the record's reader URL, name and hash tag, workspace %s", got, dir)
				}
			}},
		{name: "a compose stack in the directory",
			setup: func(t *testing.T, dir string) Request {
				writeFile(t, dir, ComposeFile, "services: {}\n")
				writeFile(t, dir, ComposeEnvFile, "COMPOSE_PROJECT_NAME=p\nSETT_REDIS_PASSWORD=pw\nSETT_REDIS_PORT=6391\n")
				return Request{Dir: dir}
			},
			want: func(t *testing.T, _ string, got *Target) {
				if got.Instance != ComposeInstance || got.Conn.URL != "redis://:pw@127.0.0.1:6391/0" || !strings.Contains(got.Where, "compose project p") {
					t.Errorf("target %+v; want the stack's Redis and instance", got)
				}
			}},
		{name: "a compose stack of another instance is not the one named",
			env: map[string]string{config.EnvInstance: "other"},
			setup: func(t *testing.T, dir string) Request {
				writeFile(t, dir, ComposeFile, "services: {}\n")
				writeFile(t, dir, ComposeEnvFile, "SETT_REDIS_PASSWORD=pw\n")
				return Request{Dir: dir}
			},
			errIs: instance.ErrNoInstance},
		{name: "sett.yml names an external Redis and the instance",
			env: map[string]string{config.EnvRedisPassword: "env-pw"},
			setup: func(t *testing.T, dir string) Request {
				writeFile(t, dir, "sett.yml", sentinelYAML("instance: far-away\n"))
				return Request{Dir: dir}
			},
			want: func(t *testing.T, _ string, got *Target) {
				if got.Instance != "far-away" || got.Conn.Topology() != blackboard.TopologySentinel || got.Conn.Password != "env-pw" ||
					got.Conn.Sentinel.MasterName != "m" || got.Where != `master "m" through sentinel 127.0.0.1:26999` || got.Record != nil {
					t.Errorf("target %+v; want sett.yml's sentinel with SETT_REDIS_PASSWORD, instance far-away", got)
				}
			}},
		{name: "an external Redis that nothing names an instance of",
			setup: func(t *testing.T, dir string) Request {
				writeFile(t, dir, "sett.yml", sentinelYAML(""))
				return Request{Dir: dir, NameHint: "pass --name"}
			},
			wantErr: []string{`master "m" through sentinel`, config.EnvInstance, "pass --name"}},
		{name: "a bad variable for sett.yml is named",
			env: map[string]string{config.EnvHashTag: "maybe"},
			setup: func(t *testing.T, dir string) Request {
				writeFile(t, dir, "sett.yml", sentinelYAML("instance: far-away\n"))
				return Request{Dir: dir}
			},
			wantErr: []string{config.EnvHashTag}, errIs: config.ErrEnv},
		{name: "a sett.yml the loader refuses, and no instance",
			setup: func(t *testing.T, dir string) Request {
				writeFile(t, dir, "sett.yml", "version: \"1.0\"\n")
				return Request{Dir: dir}
			},
			wantErr: []string{"sett.yml cannot be read"}, errIs: instance.ErrNoInstance},
		{name: "no instance at all is explained",
			setup: func(_ *testing.T, dir string) Request {
				return Request{Dir: dir, ExplainNoInstance: func(err error) error {
					return errors.Join(err, errors.New("explained"))
				}}
			},
			wantErr: []string{"explained"}, errIs: instance.ErrNoInstance},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_STATE_HOME", t.TempDir()) // no records but the test's
			dir := t.TempDir()
			req := tt.setup(t, dir)
			req.LookupEnv = func(k string) (string, bool) { v, ok := tt.env[k]; return v, ok }
			got, err := Resolve(req)
			if tt.want != nil {
				if err != nil {
					t.Fatalf("Resolve: %v", err)
				}
				tt.want(t, dir, got)
				return
			}
			if err == nil {
				t.Fatalf("Resolve = %+v, want an error", got)
			}
			if tt.errIs != nil && !errors.Is(err, tt.errIs) {
				t.Errorf("error %q does not wrap %v", err, tt.errIs)
			}
			for _, want := range tt.wantErr {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

func TestRestartHintNamesTheInstance(t *testing.T) {
	for _, tt := range []struct {
		rec  *instance.Record
		name string
		want string
	}{
		{&instance.Record{Name: "x", Runtime: "local"}, "x", "`sett up --name x --runtime local`"},
		{nil, "y", "`sett up --name y` in its workspace"},
		{nil, "", "`sett list`"},
	} {
		if got := restartHint(tt.rec, tt.name); !strings.Contains(got, tt.want) {
			t.Errorf("restartHint(%+v, %q) = %q, want it to contain %q", tt.rec, tt.name, got, tt.want)
		}
	}
}
