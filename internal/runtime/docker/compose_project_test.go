package docker

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
)

// composeLabels are the labels of a container of the compose stack, as
// docker-compose.yml and Compose give them.
func composeLabels(extra map[string]string) map[string]string {
	l := map[string]string{LabelInstance: "compose", LabelWorkspace: "/src/sett/workspace", LabelManagedBy: ManagedByCompose,
		LabelComposeProject: "sett-sett-abc123", LabelComposeWorkingDir: "/src/sett"}
	for k, v := range extra {
		l[k] = v
	}
	return l
}

func TestComposeProjectOf(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		want   composeProject
		wantOK bool
	}{
		{"what sett up starts", map[string]string{LabelInstance: "demo", LabelWorkspace: "/w", LabelComponent: ComponentRedis}, composeProject{}, false},
		{"a container of the compose stack", composeLabels(nil), composeProject{Name: "sett-sett-abc123", WorkingDir: "/src/sett"}, true},
		{"its volume: a project, no directory", map[string]string{LabelInstance: "compose", LabelManagedBy: ManagedByCompose,
			LabelComposeProject: "sett-sett-abc123"}, composeProject{Name: "sett-sett-abc123"}, true},
		{"a compose file of one's own without managed-by", map[string]string{LabelInstance: "mine", LabelComposeProject: "p",
			LabelComposeWorkingDir: "/p"}, composeProject{Name: "p", WorkingDir: "/p"}, true},
		{"managed-by alone", map[string]string{LabelInstance: "x", LabelManagedBy: ManagedByCompose}, composeProject{}, true},
		{"another managed-by value", map[string]string{LabelInstance: "x", LabelManagedBy: "helm"}, composeProject{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := composeProjectOf(tc.labels)
			if got != tc.want || ok != tc.wantOK {
				t.Errorf("composeProjectOf = %+v, %v; want %+v, %v", got, ok, tc.want, tc.wantOK)
			}
		})
	}
}

func TestComposeProjectsRefuse(t *testing.T) {
	one := composeProjects{}
	one.add(composeProject{Name: "sett-a-1"}) // its volume, seen first
	one.add(composeProject{Name: "sett-a-1", WorkingDir: "/src/a"})
	one.add(composeProject{Name: "sett-a-1"}) // keeps the directory
	volumeOnly := composeProjects{"sett-v-9": {Name: "sett-v-9"}}
	two := composeProjects{"sett-b-2": {Name: "sett-b-2", WorkingDir: "/src/b"}, "sett-a-1": {Name: "sett-a-1", WorkingDir: "/src/a"}}
	tests := []struct {
		name     string
		projects composeProjects
		own      int
		purge    bool
		want     []string // in the message, in this order; nil: no refusal
	}{
		{"no compose stack", composeProjects{}, 0, false, nil},
		{"sett's own instance of the name as well", one, 3, false, nil},
		{"only the compose stack", one, 0, false, []string{"sett does not stop instance compose",
			"run `docker-compose down` (Compose v2: `docker compose down`) in /src/a (project sett-a-1)"}},
		{"purge names -v", one, 0, true, []string{"run `docker-compose down -v` (Compose v2: `docker compose down -v`) in /src/a (project sett-a-1)"}},
		{"only its volume is left", volumeOnly, 0, true, []string{"`docker-compose down -v` (Compose v2: `docker compose down -v`) in the directory of its docker-compose.yml (project sett-v-9)"}},
		{"two checkouts' stacks", two, 0, false, []string{"`docker-compose down` (Compose v2: `docker compose down`) in /src/a (project sett-a-1), or in /src/b (project sett-b-2)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.projects.refuse("compose", tc.own, tc.purge)
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refuse = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrComposeManaged) {
				t.Fatalf("refuse = %v, want ErrComposeManaged", err)
			}
			msg, at := err.Error(), 0
			for _, w := range tc.want {
				i := strings.Index(msg[at:], w)
				if i < 0 {
					t.Fatalf("message lacks %q (after byte %d):\n%s", w, at, msg)
				}
				at += i + len(w)
			}
		})
	}
}

func TestListingOf(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
		want   runtime.Listing
	}{
		{"an instance sett up started", map[string]string{LabelInstance: "demo", LabelWorkspace: "/w", LabelComponent: ComponentAgent, LabelAgent: "coder"},
			runtime.Listing{Name: "demo", Runtime: instance.RuntimeDocker, Workspace: "/w"}},
		{"a container of the compose stack", composeLabels(map[string]string{LabelComponent: ComponentConsole}),
			runtime.Listing{Name: "compose", Runtime: instance.RuntimeDocker, Workspace: "/src/sett/workspace",
				ManagedBy: runtime.ManagedByCompose, ComposeProject: "sett-sett-abc123", ComposeDir: "/src/sett"}},
		{"a relative SETT_WORKSPACE_DIR, against the project's directory", composeLabels(map[string]string{LabelWorkspace: "./workspace"}),
			runtime.Listing{Name: "compose", Runtime: instance.RuntimeDocker, Workspace: "/src/sett/workspace",
				ManagedBy: runtime.ManagedByCompose, ComposeProject: "sett-sett-abc123", ComposeDir: "/src/sett"}},
		{"the compose stack's volume", map[string]string{LabelInstance: "compose", LabelWorkspace: "/src/sett/workspace",
			LabelManagedBy: ManagedByCompose, LabelComposeProject: "sett-sett-abc123"},
			runtime.Listing{Name: "compose", Runtime: instance.RuntimeDocker, Workspace: "/src/sett/workspace",
				ManagedBy: runtime.ManagedByCompose, ComposeProject: "sett-sett-abc123"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := listingOf(tc.labels)
			if got.Name != tc.want.Name || got.Runtime != tc.want.Runtime || got.Workspace != tc.want.Workspace ||
				got.ManagedBy != tc.want.ManagedBy || got.ComposeProject != tc.want.ComposeProject || got.ComposeDir != tc.want.ComposeDir {
				t.Errorf("listingOf = %+v\nwant        %+v", got, tc.want)
			}
		})
	}

	// One row per instance and compose project: the container and the
	// volume of a stack share it; sett's own instance of the same name,
	// and another checkout's stack, do not.
	container := listingKey(listingOf(composeLabels(nil)))
	volume := listingKey(listingOf(map[string]string{LabelInstance: "compose", LabelManagedBy: ManagedByCompose, LabelComposeProject: "sett-sett-abc123"}))
	own := listingKey(listingOf(map[string]string{LabelInstance: "compose", LabelWorkspace: "/src/sett/workspace"}))
	other := listingKey(listingOf(composeLabels(map[string]string{LabelComposeProject: "sett-other-def456"})))
	if container != volume || container == own || container == other {
		t.Errorf("listing keys: container %q, volume %q, own %q, other checkout %q", container, volume, own, other)
	}
}

// The repository's docker-compose.yml labels what it creates as List and
// Down read them: every service and the Redis volume carry the instance,
// the workspace and managed-by=compose, each service its component, each
// agent its name.
func TestComposeFileLabelsEveryService(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "docker-compose.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Services map[string]struct {
			Labels      map[string]string `yaml:"labels"`
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
		Volumes map[string]struct {
			Labels map[string]string `yaml:"labels"`
		} `yaml:"volumes"`
	}
	if err := yaml.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	common := map[string]string{
		LabelInstance:  "${SETT_INSTANCE:-compose}",
		LabelWorkspace: "${SETT_WORKSPACE_DIR:?set SETT_WORKSPACE_DIR to the workspace directory (make compose-env writes .env)}",
		LabelManagedBy: ManagedByCompose,
	}
	check := func(what string, labels map[string]string) {
		t.Helper()
		for k, v := range common {
			if labels[k] != v {
				t.Errorf("%s: label %s = %q, want %q", what, k, labels[k], v)
			}
		}
	}
	components := map[string]string{"redis": ComponentRedis, "orchestrator": ComponentOrchestrator, "console": ComponentConsole}
	if len(f.Services) != 7 {
		t.Errorf("%d services, want redis, orchestrator, console and 4 agents", len(f.Services))
	}
	for name, s := range f.Services {
		check("service "+name, s.Labels)
		want, agent := components[name], ""
		if want == "" {
			want, agent = ComponentAgent, name
			if s.Environment["SETT_AGENT"] != name {
				t.Errorf("service %s runs agent %q", name, s.Environment["SETT_AGENT"])
			}
		}
		if s.Labels[LabelComponent] != want || s.Labels[LabelAgent] != agent {
			t.Errorf("service %s: component %q, agent %q; want %q, %q", name, s.Labels[LabelComponent], s.Labels[LabelAgent], want, agent)
		}
		if got := componentName(s.Labels); got != name {
			t.Errorf("service %s is listed as component %q", name, got)
		}
	}
	if v, ok := f.Volumes["redis-data"]; !ok {
		t.Error("no volume redis-data")
	} else {
		check("volume redis-data", v.Labels)
	}
}
