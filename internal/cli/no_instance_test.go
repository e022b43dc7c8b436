package cli

import (
	"errors"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
)

func TestNoInstanceMessagesSayWhatIsTrue(t *testing.T) {
	ws := lifecycleWorkspace(t, lifecycleConfig)
	empty := map[string]runtime.Runtime{"local": &stubRuntime{name: "local"}}
	stopped := map[string]runtime.Runtime{"local": &stubRuntime{name: "local",
		listing: []runtime.Listing{{Name: "demo", Runtime: "local", Workspace: ws, Status: "stopped"}}}}
	compose := map[string]runtime.Runtime{"docker": &stubRuntime{name: "docker", listing: []runtime.Listing{{Name: "compose", Runtime: "docker",
		Workspace: "/src/sett/workspace", Status: "running", ManagedBy: runtime.ManagedByCompose, ComposeProject: "p", ComposeDir: "/src/sett"}}}}
	composeStopped := map[string]runtime.Runtime{"docker": &stubRuntime{name: "docker", listing: []runtime.Listing{{Name: "compose", Runtime: "docker",
		Workspace: "/src/sett/workspace", Status: "stopped", ManagedBy: runtime.ManagedByCompose, ComposeProject: "p"}}}}
	tests := []struct {
		name     string
		runtimes map[string]runtime.Runtime
		args     []string
		want     string
		notWant  string
	}{
		{name: "down --name of an unknown instance", runtimes: empty, args: []string{"down", "--name", "ghost"},
			want: "no instance named ghost", notWant: "pass --name"},
		{name: "status of a stopped instance", runtimes: stopped, args: []string{"status"},
			want: "instance demo (local runtime, workspace " + ws + ") is stopped: `sett up --name demo --runtime local` starts it again"},
		{name: "status --name of a stopped instance", runtimes: stopped, args: []string{"status", "--name", "demo"},
			want: "`sett up --name demo --runtime local` starts it again"},
		{name: "status with nothing anywhere", runtimes: empty, args: []string{"status"},
			want: "no instance in this workspace"},
		{name: "logs of a stopped instance", runtimes: stopped, args: []string{"logs", "orchestrator"},
			want: "is stopped"},
		{name: "status --name of a compose stack", runtimes: compose, args: []string{"status", "--name", "compose"},
			want: "instance compose is a Docker Compose stack (project p, running): run the command in /src/sett, whose .env names it"},
		{name: "status --name of a stopped compose stack", runtimes: composeStopped, args: []string{"status", "--name", "compose"},
			want:    "instance compose is a Docker Compose stack (project p) and is stopped: `docker-compose up -d` in the directory of its docker-compose.yml starts it again",
			notWant: "sett up"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := runLifecycle(t, ws, tt.runtimes, nil, tt.args...)
			if !errors.Is(err, instance.ErrNoInstance) {
				t.Fatalf("err = %v, want one matching ErrNoInstance", err)
			}
			if !strings.Contains(err.Error(), tt.want) || (tt.notWant != "" && strings.Contains(err.Error(), tt.notWant)) {
				t.Errorf("err = %q, want it to contain %q (and not %q)", err, tt.want, tt.notWant)
			}
		})
	}
}
