package bench

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/settdev/sett/internal/config"
)

// The sett.yml a stack writes is one the daemons accept, with the agents
// the scenario asked for.
func TestStackSpecYAMLIsValidConfig(t *testing.T) {
	sp := stackSpec{name: "x", agents: append(noopAgents(2, 8), agentSpec{name: "reviewer-1", mode: "review-reject-v1",
		typ: reviewType, strategy: "review", consumes: []string{draftType, "Code*"}})}
	path := filepath.Join(t.TempDir(), "sett.yml")
	noop := `/opt/with space/and "quote"/sett-bench-noop`
	if err := os.WriteFile(path, []byte(sp.yaml(noop)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, _, err := config.Load(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, sp.yaml(noop))
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name          string
		strategy      string
		command       []string
		consumes      []string
		maxConcurrent int
	}{
		{"noop-1", "exclusive", []string{noop, "-mode", "terminal", "-type", noopType}, []string{"GoalDefined"}, 8},
		{"noop-2", "exclusive", []string{noop, "-mode", "terminal", "-type", noopType}, []string{"GoalDefined"}, 8},
		{"reviewer-1", "review", []string{noop, "-mode", "review-reject-v1", "-type", reviewType}, []string{draftType, "Code*"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, ok := cfg.Agent(tc.name)
			if !ok {
				t.Fatalf("agent missing; agents %v", cfg.AgentNames())
			}
			if string(a.BiddingStrategy) != tc.strategy || !reflect.DeepEqual(a.Command, tc.command) ||
				!reflect.DeepEqual(a.Consumes, tc.consumes) || a.MaxConcurrent != tc.maxConcurrent {
				t.Fatalf("agent %+v", a)
			}
		})
	}
}

func TestReadProcOfSelf(t *testing.T) {
	s, err := readProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if s.RSSKiB <= 0 || s.RSSAnonKiB <= 0 || s.RSSFileKiB <= 0 || s.RSSAnonKiB+s.RSSFileKiB > s.RSSKiB || s.CPUTicks < 0 || s.ChildTicks < 0 {
		t.Fatalf("sample %+v", s)
	}
}
