package cli

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/runtime"
)

func TestListMergesEveryRuntime(t *testing.T) {
	runtimes := map[string]runtime.Runtime{
		"local": &stubRuntime{name: "local", listing: []runtime.Listing{
			{Name: "zeta", Runtime: "local", Workspace: "/w/z", Status: "running", Components: map[string]string{"redis": "healthy", "writer": "healthy"}},
		}},
		"docker": &stubRuntime{name: "docker", listing: []runtime.Listing{
			{Name: "alpha", Runtime: "docker", Workspace: "/w/a", Status: "degraded", Components: map[string]string{"redis": "healthy", "writer": "restarting"}},
		}},
	}
	out, _, err := runLifecycle(t, t.TempDir(), runtimes, nil, "list")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "NAME") || !strings.HasPrefix(lines[1], "alpha") || !strings.HasPrefix(lines[2], "zeta") {
		t.Fatalf("table:\n%s", out)
	}
	if !strings.Contains(lines[1], "1/2 healthy (writer restarting)") || !strings.Contains(lines[2], "2/2 healthy") {
		t.Errorf("components cells:\n%s", out)
	}
	if strings.Index(lines[0], "STATUS") != strings.Index(lines[1], "degraded") {
		t.Errorf("columns are not aligned:\n%s", out)
	}

	out, _, err = runLifecycle(t, t.TempDir(), runtimes, nil, "list", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got []runtime.Listing
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(got) != 2 || got[0].Name != "alpha" || got[1].Components["writer"] != "healthy" {
		t.Errorf("json listing = %+v", got)
	}
}

func TestListShowsTheOthersWhenARuntimeFails(t *testing.T) {
	runtimes := map[string]runtime.Runtime{
		"local":  &stubRuntime{name: "local", listing: []runtime.Listing{{Name: "one", Runtime: "local", Status: "stopped"}}},
		"docker": &stubRuntime{name: "docker", listErr: errors.New("cannot reach the Docker daemon")},
	}
	out, errOut, err := runLifecycle(t, t.TempDir(), runtimes, nil, "list", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(errOut, "cannot reach the Docker daemon") {
		t.Errorf("stderr lacks the failure: %q", errOut)
	}
	if !strings.Contains(out, `"one"`) {
		t.Errorf("the local instance is missing:\n%s", out)
	}
}

func TestListEmptyAndBadFormat(t *testing.T) {
	runtimes := map[string]runtime.Runtime{"local": &stubRuntime{name: "local"}}
	out, _, err := runLifecycle(t, t.TempDir(), runtimes, nil, "list", "-o", "json")
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("empty json listing: %q, %v; want []", out, err)
	}
	out, _, err = runLifecycle(t, t.TempDir(), runtimes, nil, "list")
	if err != nil || !strings.Contains(out, "No instances") {
		t.Errorf("empty table: %q, %v", out, err)
	}
	if _, _, err := runLifecycle(t, t.TempDir(), runtimes, nil, "list", "-o", "yaml"); !isUsage(err) {
		t.Errorf("-o yaml: %v, want a usage error", err)
	}
}

func TestListShowsHowToManageAComposeStack(t *testing.T) {
	compose := runtime.Listing{Name: "compose", Runtime: "docker", Workspace: "/src/sett/workspace", Status: "running",
		Components: map[string]string{"redis": "healthy", "orchestrator": "healthy", "coder": "healthy"},
		ManagedBy:  runtime.ManagedByCompose, ComposeProject: "sett-sett-abc123", ComposeDir: "/src/sett"}
	own := runtime.Listing{Name: "demo", Runtime: "docker", Workspace: "/w/demo", Status: "stopped", Components: map[string]string{}}
	runtimes := map[string]runtime.Runtime{"docker": &stubRuntime{name: "docker", listing: []runtime.Listing{own, compose}}}

	out, _, err := runLifecycle(t, t.TempDir(), runtimes, nil, "list")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[1], "compose") || !strings.HasPrefix(lines[2], "demo") || lines[3] != "" {
		t.Fatalf("table:\n%s", out)
	}
	if f := strings.Fields(lines[1]); f[1] != "docker" || f[2] != "(compose)" || f[3] != "running" {
		t.Errorf("compose row: %q", lines[1])
	}
	if f := strings.Fields(lines[2]); f[1] != "docker" || f[2] != "stopped" {
		t.Errorf("own row: %q", lines[2])
	}
	if want := "compose is the Docker Compose project sett-sett-abc123: stop it with `docker-compose down` in /src/sett, not `sett down`."; lines[4] != want {
		t.Errorf("note %q\nwant %q", lines[4], want)
	}

	// JSON keeps runtime "docker" and adds the compose fields, which the
	// other instances do not carry.
	out, _, err = runLifecycle(t, t.TempDir(), runtimes, nil, "list", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(got) != 2 {
		t.Fatalf("json: %s", out)
	}
	if c := got[0]; c["runtime"] != "docker" || c["managed_by"] != "compose" || c["compose_project"] != "sett-sett-abc123" || c["compose_dir"] != "/src/sett" {
		t.Errorf("compose listing: %v", c)
	}
	for _, k := range []string{"managed_by", "compose_project", "compose_dir"} {
		if _, ok := got[1][k]; ok {
			t.Errorf("the instance sett up started has %s: %v", k, got[1])
		}
	}
}

func TestRuntimeCellAndManageNote(t *testing.T) {
	tests := []struct {
		name       string
		l          runtime.Listing
		cell, note string
	}{
		{"local", runtime.Listing{Name: "a", Runtime: "local"}, "local", ""},
		{"docker", runtime.Listing{Name: "a", Runtime: "docker"}, "docker", ""},
		{"compose", runtime.Listing{Name: "c", Runtime: "docker", ManagedBy: "compose", ComposeProject: "p", ComposeDir: "/d"},
			"docker (compose)", "c is the Docker Compose project p: stop it with `docker-compose down` in /d, not `sett down`."},
		{"compose, only its volume left", runtime.Listing{Name: "c", Runtime: "docker", ManagedBy: "compose", ComposeProject: "p"},
			"docker (compose)", "c is the Docker Compose project p: stop it with `docker-compose down` in the directory of its docker-compose.yml, not `sett down`."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := runtimeCell(tc.l); got != tc.cell {
				t.Errorf("runtimeCell = %q, want %q", got, tc.cell)
			}
			if got := manageNote(tc.l); got != tc.note {
				t.Errorf("manageNote = %q\nwant %q", got, tc.note)
			}
		})
	}
}
