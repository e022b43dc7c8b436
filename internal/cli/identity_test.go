package cli

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/runtime/local"
)

func TestDecideUpIdentity(t *testing.T) {
	ws := "/w/proj"
	localRunning := knownInstance{Name: "x", Runtime: "local", Workspace: ws, Status: "running"}
	localStopped := knownInstance{Name: "x", Runtime: "local", Workspace: ws, Status: "stopped"}
	dockerStopped := knownInstance{Name: "x", Runtime: "docker", Workspace: ws, Status: "stopped"}
	elsewhere := knownInstance{Name: "x", Runtime: "local", Workspace: "/w/other", Status: "running"}
	tests := []struct {
		name        string
		req         upIdentityRequest
		known       []knownInstance
		wantName    string
		wantRuntime string
		wantErr     []string // substrings; nil for no error
		wantWarning string
	}{
		{"nothing remembered: derived name, default runtime",
			upIdentityRequest{Derived: "proj", Runtime: "docker"}, nil, "proj", "docker", nil, ""},
		{"another workspace's instance does not count",
			upIdentityRequest{Name: "x", Derived: "proj", Runtime: "docker", RuntimeExplicit: true}, []knownInstance{elsewhere}, "x", "docker", nil, ""},
		{"the only remembered name and runtime are reused",
			upIdentityRequest{Derived: "proj", Runtime: "docker"}, []knownInstance{localStopped}, "x", "local", nil, ""},
		{"a given name keeps the remembered runtime",
			upIdentityRequest{Name: "x", Derived: "proj", Runtime: "docker"}, []knownInstance{localRunning}, "x", "local", nil, ""},
		{"the same runtime again is fine",
			upIdentityRequest{Name: "x", Derived: "proj", Runtime: "local", RuntimeExplicit: true}, []knownInstance{localStopped}, "x", "local", nil, ""},
		{"a second runtime next to a running one is refused, naming it",
			upIdentityRequest{Name: "x", Derived: "proj", Runtime: "docker", RuntimeExplicit: true}, []knownInstance{localRunning},
			"", "", []string{"instance x already runs", "on the local runtime", "`sett status --name x`", "`sett down --name x`", "--force"}, ""},
		{"a second runtime for a stopped one is refused, with the command to restart it",
			upIdentityRequest{Name: "x", Derived: "proj", Runtime: "docker", RuntimeExplicit: true}, []knownInstance{localStopped},
			"", "", []string{"stopped local instance", "`sett up --name x --runtime local`", "--force"}, ""},
		{"the running holder is named before a stopped one",
			upIdentityRequest{Name: "x", Derived: "proj", Runtime: "podman", RuntimeExplicit: true}, []knownInstance{dockerStopped, localRunning},
			"", "", []string{"on the local runtime (running)"}, ""},
		{"without --runtime the running holder's runtime is used",
			upIdentityRequest{Name: "x", Derived: "proj", Runtime: "docker"}, []knownInstance{dockerStopped, localRunning}, "x", "local", nil, ""},
		{"--force starts the second runtime and warns",
			upIdentityRequest{Name: "x", Derived: "proj", Runtime: "docker", RuntimeExplicit: true, Force: true}, []knownInstance{localRunning},
			"x", "docker", nil, "also runs in this workspace on the local runtime"},
		{"another name in the workspace is another instance",
			upIdentityRequest{Name: "y", Derived: "proj", Runtime: "docker", RuntimeExplicit: true}, []knownInstance{localRunning}, "y", "docker", nil, ""},
		{"several remembered names: the derived one",
			upIdentityRequest{Derived: "proj", Runtime: "docker"},
			[]knownInstance{localRunning, {Name: "z", Runtime: "docker", Workspace: ws, Status: "stopped"}}, "proj", "docker", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Workspace = ws
			id, err := decideUpIdentity(tt.req, tt.known)
			if tt.wantErr != nil {
				var conflict *identityConflictError
				if !errors.As(err, &conflict) {
					t.Fatalf("err = %v, want a refusal", err)
				}
				for _, want := range tt.wantErr {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("refusal lacks %q: %v", want, err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if id.Name != tt.wantName || id.Runtime != tt.wantRuntime || !strings.Contains(id.Warning, tt.wantWarning) || (tt.wantWarning == "" && id.Warning != "") {
				t.Errorf("got %+v, want name %s, runtime %s, warning %q", id, tt.wantName, tt.wantRuntime, tt.wantWarning)
			}
		})
	}
}

// localListing is a stub runtime whose List is the real local runtime's,
// which reads the instance records (stopped ones included) — except while
// running lists the stub's instances as running (nothing really runs).
type localListing struct {
	*stubRuntime
	running *bool
}

func (l localListing) List(ctx context.Context) ([]runtime.Listing, error) {
	ls, err := local.New().List(ctx)
	if l.running != nil && *l.running {
		for i := range ls {
			ls[i].Status = "running"
		}
	}
	return ls, err
}

// One identity per instance, through the commands: `sett up` local, then
// `sett up --runtime docker` with the same name in the same workspace is
// refused with the reason; after `sett down` the instance is listed as
// stopped, the refusal now names the command that restarts it, and a
// bare `sett up` starts it again on the local runtime.
func TestUpRefusesASecondRuntimeForTheSameInstance(t *testing.T) {
	ws := lifecycleWorkspace(t, lifecycleConfig)
	running := true
	loc := localListing{&stubRuntime{name: "local", upRec: recordFor("local")}, &running}
	dock := &stubRuntime{name: "docker", upRec: recordFor("docker")}
	rts := map[string]runtime.Runtime{"local": loc, "docker": dock}
	run := func(args ...string) (string, error) {
		t.Helper()
		out, errOut, err := runLifecycle(t, ws, rts, nil, args...)
		return out + errOut, err
	}

	if _, err := run("up", "--runtime", "local", "--name", "same"); err != nil {
		t.Fatalf("sett up --runtime local: %v", err)
	}
	_, err := run("up", "--runtime", "docker", "--name", "same")
	if err == nil || !strings.Contains(err.Error(), "instance same already runs") || !strings.Contains(err.Error(), "local runtime") {
		t.Fatalf("sett up --runtime docker over a running local instance: err = %v, want a refusal naming it", err)
	}
	if len(dock.upSpecs) != 0 {
		t.Fatal("the docker runtime was asked to start a second instance")
	}

	running = false
	if out, err := run("down"); err != nil || !strings.Contains(out, "`sett up --name same --runtime local`") {
		t.Fatalf("sett down: %v\n%s", err, out)
	}
	out, err := run("list")
	if err != nil || !strings.Contains(out, "same") || !strings.Contains(out, "stopped") || !strings.Contains(out, "local") {
		t.Fatalf("sett list after sett down: %v\n%s", err, out)
	}
	_, err = run("up", "--runtime", "docker", "--name", "same")
	if err == nil || !strings.Contains(err.Error(), "`sett up --name same --runtime local`") {
		t.Fatalf("sett up --runtime docker over a stopped local instance: err = %v", err)
	}
	_, err = run("status")
	if err == nil || !strings.Contains(err.Error(), "`sett up --name same --runtime local`") {
		t.Fatalf("sett status of the stopped instance: err = %v, want the command that starts it again", err)
	}

	// A bare `sett up` reuses both the name and the runtime.
	if _, err := run("up"); err != nil {
		t.Fatalf("sett up: %v", err)
	}
	running = true
	if n := len(loc.upSpecs); n != 2 || loc.upSpecs[1].Name != "same" {
		t.Fatalf("local Up calls: %+v", loc.upSpecs)
	}
	rec, err := instance.Find(ws, "")
	if err != nil || rec.Name != "same" || rec.Runtime != "local" || rec.Stopped() {
		t.Fatalf("record after the second up: %+v, %v", rec, err)
	}

	// --force starts the second runtime, with a warning.
	out, err = run("up", "--runtime", "docker", "--name", "same", "--force")
	if err != nil || !strings.Contains(out, "also runs in this workspace on the local runtime") || len(dock.upSpecs) != 1 {
		t.Fatalf("sett up --force: %v\n%s", err, out)
	}
}

func TestDownPurgeForgetsAStoppedInstance(t *testing.T) {
	ws := lifecycleWorkspace(t, lifecycleConfig)
	loc := localListing{&stubRuntime{name: "local", upRec: recordFor("local")}, nil}
	rts := map[string]runtime.Runtime{"local": loc}
	for _, args := range [][]string{{"up", "--runtime", "local", "--name", "kept"}, {"down"}} {
		if _, _, err := runLifecycle(t, ws, rts, nil, args...); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	out, _, err := runLifecycle(t, ws, rts, nil, "down")
	if err != nil || !strings.Contains(out, "already stopped") {
		t.Fatalf("sett down of a stopped instance: %v\n%s", err, out)
	}
	if out, _, err = runLifecycle(t, ws, rts, nil, "down", "--purge"); err != nil {
		t.Fatalf("sett down --purge: %v\n%s", err, out)
	}
	if _, err := instance.Load(ws, "kept"); !errors.Is(err, instance.ErrNoInstance) {
		t.Errorf("record after down --purge: %v", err)
	}
	if out, _, _ := runLifecycle(t, ws, rts, nil, "list"); strings.Contains(out, "kept") {
		t.Errorf("sett list still shows the purged instance:\n%s", out)
	}
}

// A compose stack whose workspace is this one is not an instance `sett
// up` reuses: a bare `sett up` there asks for the workspace's own
// instance, not for the stack's name on the docker runtime.
func TestUpDoesNotReuseAComposeStacksName(t *testing.T) {
	ws := lifecycleWorkspace(t, lifecycleConfig)
	dock := &stubRuntime{name: "docker", upRec: recordFor("docker"), listing: []runtime.Listing{{Name: "compose", Runtime: "docker",
		Workspace: ws, Status: "stopped", ManagedBy: runtime.ManagedByCompose, ComposeProject: "p"}}}
	loc := &stubRuntime{name: "local", upRec: recordFor("local")}
	if _, _, err := runLifecycle(t, ws, map[string]runtime.Runtime{"local": loc, "docker": dock}, nil, "up", "--runtime", "local"); err != nil {
		t.Fatalf("sett up: %v", err)
	}
	if len(loc.upSpecs) != 1 || loc.upSpecs[0].Name != instance.DeriveName(ws) || len(dock.upSpecs) != 0 {
		t.Errorf("Up calls: local %+v, docker %+v; want one local Up of %s", loc.upSpecs, dock.upSpecs, instance.DeriveName(ws))
	}
}
