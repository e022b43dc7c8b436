package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
)

func TestResolveInstanceName(t *testing.T) {
	tests := []struct {
		name                   string
		flag, env, file, wsDir string
		want                   string
		wantErr                string
	}{
		{"flag wins", "from-flag", "from-env", "from-file", "/w/My Project", "from-flag", ""},
		{"environment next", "", "from-env", "from-file", "/w/My Project", "from-env", ""},
		{"then sett.yml", "", "", "from-file", "/w/My Project", "from-file", ""},
		{"else derived from the workspace", "", "", "", "/w/My Project", "my-project", ""},
		{"derived from an unusable name", "", "", "", "/w/__", "sett", ""},
		{"bad flag names its source", "Bad_Name", "", "", "/w/x", "", "--name"},
		{"bad environment names its source", "", "-x", "", "/w/x", "", "SETT_INSTANCE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := resolveInstanceName(tt.flag, tt.env, tt.file, tt.wsDir)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !isUsage(err) {
					t.Fatalf("err = %v, want a usage error naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestResolveConfigPath(t *testing.T) {
	tests := []struct {
		name, flag, env, want string
	}{
		{"default is the workspace's sett.yml", "", "", "/ws/sett.yml"},
		{"relative flag from the current directory", "conf/s.yml", "", "/ws/sub/conf/s.yml"},
		{"absolute flag", "/etc/sett.yml", "/x.yml", "/etc/sett.yml"},
		{"environment when no flag", "", "other.yml", "/ws/sub/other.yml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := resolveConfigPath(tt.flag, tt.env, "/ws/sub", "/ws"); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

const lifecycleConfig = `version: "1.0"
agents:
  writer:
    command: ["sett-writer"]
`

// lifecycleWorkspace writes sett.yml into a fresh workspace and points the
// user-level instance index at a private directory.
func lifecycleWorkspace(t *testing.T, yaml string) string {
	t.Helper()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "sett.yml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return ws
}

func TestUpStartsTheResolvedInstanceAndSavesItsRecord(t *testing.T) {
	ws := lifecycleWorkspace(t, lifecycleConfig+"instance: from-file\n")
	rt := &stubRuntime{name: "local", upRec: recordFor("local")}
	out, _, err := runLifecycle(t, ws, map[string]runtime.Runtime{"local": rt}, map[string]string{"SETT_INSTANCE": "from-env"},
		"up", "--runtime", "local")
	if err != nil {
		t.Fatalf("sett up: %v", err)
	}
	if len(rt.upSpecs) != 1 {
		t.Fatalf("Up called %d times", len(rt.upSpecs))
	}
	spec := rt.upSpecs[0]
	if spec.Name != "from-env" || spec.Config.Instance != "from-env" || spec.Workspace != ws ||
		spec.ConfigPath != filepath.Join(ws, "sett.yml") || spec.Force {
		t.Errorf("spec = %+v", spec)
	}
	rec, err := instance.Load(ws, "from-env")
	if err != nil || rec.Runtime != "local" {
		t.Fatalf("record: %+v, %v", rec, err)
	}
	for _, want := range []string{"redis         ready", "Instance from-env is up", "sett forage --goal"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "secret") {
		t.Errorf("output shows the Redis password:\n%s", out)
	}
}

func TestUpPrintsConfigWarnings(t *testing.T) {
	ws := lifecycleWorkspace(t, lifecycleConfig+"orchestrator:\n  max_review_iterations: 0\n")
	rt := &stubRuntime{name: "local", upRec: recordFor("local")}
	_, errOut, err := runLifecycle(t, ws, map[string]runtime.Runtime{"local": rt}, nil, "up", "--runtime", "local", "--force")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "warning:") || !strings.Contains(errOut, "max_review_iterations") {
		t.Errorf("stderr lacks the warning:\n%s", errOut)
	}
	if !rt.upSpecs[0].Force {
		t.Error("--force did not reach the runtime")
	}
}

func TestUpRefusesWhatItCannotStart(t *testing.T) {
	tests := []struct {
		name      string
		yaml      string // "" for no sett.yml
		args      []string
		want      string
		wantUsage bool
	}{
		{"unknown runtime lists the available ones", lifecycleConfig, []string{"up", "--runtime", "podman"},
			`runtime "podman" is not available in this build of sett (available: local)`, true},
		{"default runtime missing from this build", lifecycleConfig, []string{"up"}, `runtime "docker" is not available`, true},
		{"no sett.yml suggests init", "", []string{"up", "--runtime", "local"}, "run `sett init`", false},
		{"invalid sett.yml names the line", lifecycleConfig + "agnets: {}\n", []string{"up", "--runtime", "local"}, "sett.yml:5", false},
		{"bad --name", lifecycleConfig, []string{"up", "--runtime", "local", "--name", "No!"}, "--name", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := lifecycleWorkspace(t, tt.yaml)
			if tt.yaml == "" {
				os.Remove(filepath.Join(ws, "sett.yml"))
			}
			rt := &stubRuntime{name: "local", upRec: recordFor("local")}
			_, _, err := runLifecycle(t, ws, map[string]runtime.Runtime{"local": rt}, nil, tt.args...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to say %q", err, tt.want)
			}
			if isUsage(err) != tt.wantUsage {
				t.Errorf("usage error = %v, want %v", isUsage(err), tt.wantUsage)
			}
			if len(rt.upSpecs) != 0 {
				t.Error("the runtime was asked to start the instance")
			}
		})
	}
}
