package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/stacktest"
)

// TestCommandsReachExternalTopologies runs an instance — the real
// orchestrator and cub — on a 3-master Redis Cluster, on a
// Sentinel-managed master and on a TLS-only node that wants a client
// certificate, each named only in sett.yml's services.redis, and runs
// `sett status`, `sett hoard` and `sett watch` in its workspace with no
// Redis URL anywhere: the CLI must reach the instance the way its daemons
// do.
func TestCommandsReachExternalTopologies(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("integration test: needs redis-server (run without -short)")
	}
	topologies := []struct {
		name  string
		start func(dir string) (*redistest.Topology, error)
	}{
		{name: "cluster", start: func(string) (*redistest.Topology, error) {
			return redistest.StartCluster(3, "cluster-pw", redistest.ServerOptions{})
		}},
		{name: "sentinel", start: func(string) (*redistest.Topology, error) {
			tp, _, err := redistest.StartSentinel("data-pw", "sentinel-pw")
			return tp, err
		}},
		{name: "tls", start: func(dir string) (*redistest.Topology, error) {
			return redistest.StartTLS(dir, redistest.ServerOptions{Password: "tls-pw"})
		}},
	}
	for _, top := range topologies {
		t.Run(top.name, func(t *testing.T) {
			t.Parallel()
			tp, err := top.start(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(tp.Stop)
			s := stacktest.New(t, `version: "1.0"
agents:
  planner: {command: ["sett-writer", "--type", "Plan"], bidding_strategy: exclusive, consumes: ["GoalDefined"]}
`, stacktest.Options{Conn: &tp.Conn, RedisYAML: tp.YAML, HashTag: tp.HashTag})
			s.Up("planner")
			wf := s.PostGoal("Add a /health endpoint")
			if w := s.WaitWorkflow(wf, waitFor); w.Status != blackboard.WorkflowCompleted {
				t.Fatalf("workflow %s (%s), want completed", w.Status, w.Outcome)
			}
			plans := stacktest.OfType(s.Artefacts(wf), "Plan")
			if len(plans) != 1 {
				t.Fatalf("%d plans, want 1", len(plans))
			}

			// In the workspace, with only the instance name in the
			// environment: no SETT_REDIS_URL, no instance record.
			e := newTestEnv(t)
			e.env = map[string]string{"SETT_INSTANCE": s.Instance}
			e.app.Dir = s.Dir

			var r statusReport
			if err := json.Unmarshal([]byte(e.mustRun(t, "status", "-o", "json")), &r); err != nil {
				t.Fatal(err)
			}
			if r.Instance != s.Instance || !r.Redis.Reachable || !strings.Contains(r.Redis.URL, tp.Addrs[0]) {
				t.Errorf("status: instance %q reachable %t redis %q; want %s reachable at %s", r.Instance, r.Redis.Reachable, r.Redis.URL, s.Instance, tp.Addrs[0])
			}
			if r.Workflows.ByStatus[string(blackboard.WorkflowCompleted)] != 1 {
				t.Errorf("status: workflows %+v, want one completed", r.Workflows)
			}
			alive := false
			for _, a := range r.Agents {
				alive = alive || a.Name == "planner" && a.Registered && a.Alive
			}
			if !alive {
				t.Errorf("status: agents %+v, want planner registered and alive", r.Agents)
			}
			if strings.Contains(e.out.String(), "pw") {
				t.Errorf("status shows a password:\n%s", e.out.String())
			}

			out := e.mustRun(t, "hoard", "-o", "jsonl")
			for _, id := range []string{wf, plans[0].ID} {
				if !strings.Contains(out, id) {
					t.Errorf("hoard lacks artefact %s:\n%s", id, out)
				}
			}

			// watch replays the finished workflow through blocking stream
			// reads and exits on its completion.
			ctx, cancel := context.WithTimeout(t.Context(), waitFor)
			defer cancel()
			out, errOut, err := e.runContext(ctx, "watch", "--workflow", wf, "--exit-on-completion", "-o", "jsonl")
			if err != nil || !strings.Contains(out, string(blackboard.EventWorkflowCompleted)) || !strings.Contains(out, plans[0].ID) {
				t.Errorf("watch: %v; want the workflow's events up to its completion:\n%s\n%s", err, out, errOut)
			}
		})
	}
}

// TestUnreachableExternalRedisSaysWhatToCheck points sett.yml at cluster
// seeds and sentinels nobody listens on: the commands fail naming the
// address they tried and the settings to check.
func TestUnreachableExternalRedisSaysWhatToCheck(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("integration test: dials loopback (run without -short)")
	}
	// A port just released: nothing listens on it.
	srv, err := redistest.NewServer(redistest.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dead := srv.Addr
	srv.Stop()
	cases := []struct {
		name, redis string
		want        []string
	}{
		{name: "cluster", redis: "cluster: {addresses: [" + dead + "]}",
			want: []string{"Redis Cluster " + dead, "services.redis.cluster.addresses"}},
		{name: "sentinel", redis: "sentinel: {master_name: mymaster, addresses: [" + dead + "]}",
			want: []string{`master "mymaster" through sentinel ` + dead, "services.redis.sentinel.addresses", "SETT_REDIS_SENTINEL_PASSWORD"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newTestEnv(t)
			e.env = map[string]string{}
			cfg := "version: \"1.0\"\ninstance: far-away\nagents: {planner: {command: [sett-writer]}}\nservices:\n  redis:\n    " + tc.redis + "\n"
			if err := os.WriteFile(filepath.Join(e.app.Dir, "sett.yml"), []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"hoard"}, {"status"}} {
				out, _, err := e.run(t, args...)
				if ExitCode(err) != ExitFailure {
					t.Fatalf("sett %s: exit %d (%v), want %d", args[0], ExitCode(err), err, ExitFailure)
				}
				msg := err.Error()
				t.Logf("sett %s: %s", args[0], msg)
				for _, want := range append([]string{"instance far-away"}, tc.want...) {
					if !strings.Contains(msg, want) {
						t.Errorf("sett %s: error %q lacks %q", args[0], msg, want)
					}
				}
				if args[0] == "status" && !strings.Contains(out, "unreachable") {
					t.Errorf("sett status shows no unreachable Redis:\n%s", out)
				}
			}
		})
	}
}

// TestUnreadableConfigWithoutInstanceSaysBoth: a sett.yml the loader
// refuses, in a workspace with no instance record, is named next to the
// missing instance instead of being silently skipped.
func TestUnreadableConfigWithoutInstanceSaysBoth(t *testing.T) {
	t.Parallel()
	e := newTestEnv(t)
	e.env = map[string]string{}
	cfg := "version: \"1.0\"\nservices:\n  redis:\n    cluster: {addresses: [127.0.0.1:7000]}\n"
	if err := os.WriteFile(filepath.Join(e.app.Dir, "sett.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := e.run(t, "hoard")
	if !isNoInstance(err) || !strings.Contains(err.Error(), "sett.yml cannot be read") || !strings.Contains(err.Error(), "at least one agent") {
		t.Fatalf("sett hoard: %v; want no instance, and why sett.yml cannot be read", err)
	}
}
