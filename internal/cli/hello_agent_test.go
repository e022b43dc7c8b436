package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/stacktest"
)

// TestHelloAgentRunsAsDocumented scaffolds a workspace with `sett init`,
// uncomments the hello agent as sett.yml says, and runs the real
// orchestrator and cubs: every plan gets hello's Greeting.
func TestHelloAgentRunsAsDocumented(t *testing.T) {
	t.Parallel()
	scaffolded := t.TempDir()
	if _, _, err := runLifecycle(t, scaffolded, nil, nil, "init"); err != nil {
		t.Fatalf("sett init: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join(scaffolded, "sett.yml"))
	if err != nil {
		t.Fatal(err)
	}
	// Uncomment the hello block: its lines start with "  # " and follow
	// "  # hello:" up to the first line that is not commented.
	var lines []string
	in := false
	for _, l := range strings.Split(string(raw), "\n") {
		if strings.HasPrefix(l, "  # hello:") {
			in = true
		}
		if in && !strings.HasPrefix(l, "  # ") {
			in = false
		}
		if in {
			l = "  " + strings.TrimPrefix(l, "  # ")
		}
		lines = append(lines, l)
	}
	config := strings.Join(lines, "\n")
	if !strings.Contains(config, "\n  hello:\n    image: sett-cub:local\n") {
		t.Fatalf("the hello agent did not uncomment as expected:\n%s", config)
	}
	s := stacktest.New(t, config)
	if err := os.CopyFS(filepath.Join(s.Dir, "agents"), os.DirFS(filepath.Join(scaffolded, "agents"))); err != nil {
		t.Fatal(err)
	}
	s.Up("writer", "reviewer", "hello")
	e := newTestEnv(t)
	e.env["SETT_REDIS_URL"] = s.Redis.URL()
	e.env["SETT_INSTANCE"] = s.Instance
	out, _, err := e.run(t, "forage", "--goal", "Add a /health endpoint", "--wait", "--timeout", waitFor.String())
	if err != nil {
		t.Fatalf("forage --wait: %v\n%s", err, out)
	}
	list := e.mustRun(t, "hoard", "--type", "Greeting")
	if !strings.Contains(list, "said hello") {
		t.Errorf("no Greeting from hello:\n%s\nforage:\n%s", list, out)
	}
}
