package cli

import (
	"strings"
	"testing"

	"github.com/settdev/sett/internal/stacktest"
)

// TestForageWaitOnARealStack runs the real orchestrator and cubs
// (stacktest) and takes the exit code of `forage --wait` from the outcome
// they reach: a goal nobody bids on fails, naming its type (1); a tool
// that exits 3 fails the workflow (1).
func TestForageWaitOnARealStack(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		config string
		code   int
		want   []string
	}{
		{
			name: "goal nobody bids on fails",
			config: `version: "1.0"
orchestrator:
  bid_timeout: 2s
agents:
  planner:
    command: ["sett-writer", "--type", "Plan"]
    bidding_strategy: exclusive
    consumes: ["Spec"]
`,
			code: ExitFailure,
			want: []string{"failed: no agent bid on the goal (type GoalDefined)"},
		},
		{
			name: "failing tool fails",
			config: `version: "1.0"
orchestrator:
  bid_timeout: 2s
agents:
  coder:
    command: ["/bin/sh", "-c", "exit 3"]
    bidding_strategy: exclusive
    consumes: ["GoalDefined"]
    retry: {max_attempts: 1}
`,
			code: ExitFailure,
			want: []string{"failed: agent coder failed", "ToolExecutionFailure", "Failure"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := stacktest.New(t, tc.config)
			s.Up(agentsOf(tc.config)...)
			e := newTestEnv(t)
			e.env["SETT_REDIS_URL"] = s.Redis.URL()
			e.env["SETT_INSTANCE"] = s.Instance
			out, _, err := e.run(t, "forage", "--goal", "Add a /health endpoint", "--wait", "--timeout", waitFor.String())
			if code := ExitCode(err); code != tc.code {
				t.Fatalf("exit %d (%v), want %d\n%s", code, err, tc.code, out)
			}
			for _, want := range tc.want {
				if !strings.Contains(out, want) {
					t.Errorf("output lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

// agentsOf lists the agent names of a test config: the keys indented by
// two spaces under "agents:".
func agentsOf(config string) []string {
	_, agents, _ := strings.Cut(config, "agents:\n")
	var names []string
	for _, line := range strings.Split(agents, "\n") {
		if strings.HasPrefix(line, "  ") && !strings.HasPrefix(line, "   ") && strings.HasSuffix(line, ":") {
			names = append(names, strings.TrimSuffix(strings.TrimSpace(line), ":"))
		}
	}
	return names
}
