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
