package blackboard_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	engine "github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/pkg/blackboard"
)

// isolateEnv empties what DialEnv reads besides the test's own settings:
// the Sett variables (TestMain sets two for the examples) and the state
// home of instance records (a fresh one, so that no record of the
// user's is read).
func isolateEnv(t *testing.T) {
	t.Helper()
	for _, k := range []string{"SETT_REDIS_URL", "SETT_INSTANCE", "SETT_REDIS_PASSWORD", "SETT_REDIS_USERNAME",
		"SETT_REDIS_SENTINEL_PASSWORD", "SETT_HASH_TAG"} {
		t.Setenv(k, "") // empty is unset for Sett
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
}

// useRedis points SETT_REDIS_URL and SETT_INSTANCE at a fresh instance
// on the package's redis-server and returns the instance's name.
func useRedis(t *testing.T) string {
	t.Helper()
	isolateEnv(t)
	name := redistest.Instance(t)
	t.Setenv("SETT_REDIS_URL", redistest.Shared(t).URL())
	t.Setenv("SETT_INSTANCE", name)
	return name
}

// writeSettYML writes dir/sett.yml.
func writeSettYML(t *testing.T, dir, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "sett.yml"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// dialEnv is DialEnv from dir, closed when the test ends.
func dialEnv(t *testing.T, opts blackboard.EnvOptions) *blackboard.Client {
	t.Helper()
	c, err := blackboard.DialEnv(t.Context(), opts)
	if err != nil {
		t.Fatalf("DialEnv: %v", err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// sameInstance checks that c writes where an engine client of instance
// name on the package's redis-server reads.
func sameInstance(t *testing.T, c *blackboard.Client, name string) {
	t.Helper()
	if c.Instance() != name {
		t.Fatalf("instance %q, want %q", c.Instance(), name)
	}
	g, err := c.PostGoal(t.Context(), blackboard.Goal{Text: "reach me"})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.Dial(t.Context(), redistest.Shared(t).URL(), engine.Options{Instance: name})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := eng.GetArtefact(t.Context(), g.ID); err != nil {
		t.Errorf("the goal posted through DialEnv's client is not in instance %s: %v", name, err)
	}
}

func TestDialEnvConnectsWithTheEnvironment(t *testing.T) {
	name := useRedis(t)
	sameInstance(t, dialEnv(t, blackboard.EnvOptions{Dir: t.TempDir()}), name)

	// EnvOptions.Instance wins over SETT_INSTANCE, as --name does.
	other := redistest.Instance(t)
	sameInstance(t, dialEnv(t, blackboard.EnvOptions{Dir: t.TempDir(), Instance: other}), other)
}

func TestDialEnvFindsTheWorkspacesInstance(t *testing.T) {
	isolateEnv(t)
	ws := t.TempDir()
	writeSettYML(t, ws, "version: \"1.0\"\nagents: {planner: {command: [sett-writer]}}\n")
	name := redistest.Instance(t)
	rec := &instance.Record{Name: name, Runtime: "local", Workspace: ws, RedisURL: redistest.Shared(t).URL()}
	if err := instance.Save(rec); err != nil {
		t.Fatal(err)
	}
	// From a directory below the workspace, as `sett status` run there.
	sub := filepath.Join(ws, "src")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	sameInstance(t, dialEnv(t, blackboard.EnvOptions{Dir: sub}), name)
}

func TestDialEnvNamesWhatIsWrong(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{name: "a URL of another scheme", env: map[string]string{"SETT_REDIS_URL": "http://127.0.0.1:6379", "SETT_INSTANCE": "x"},
			want: []string{"SETT_REDIS_URL", `scheme "http"`}},
		{name: "a URL without a host", env: map[string]string{"SETT_REDIS_URL": "redis://", "SETT_INSTANCE": "x"},
			want: []string{"SETT_REDIS_URL", "no host"}},
		{name: "an unparsable URL", env: map[string]string{"SETT_REDIS_URL": "::", "SETT_INSTANCE": "x"},
			want: []string{"SETT_REDIS_URL", "not a valid URL"}},
		{name: "a bad instance name", env: map[string]string{"SETT_REDIS_URL": "redis://127.0.0.1:6379/0", "SETT_INSTANCE": "Billing DB"},
			want: []string{"SETT_INSTANCE", "not a valid instance name"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			isolateEnv(t)
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			c, err := blackboard.DialEnv(t.Context(), blackboard.EnvOptions{Dir: t.TempDir()})
			if err == nil {
				c.Close()
				t.Fatal("DialEnv connected; want a refused setting")
			}
			t.Log(err)
			if !errors.Is(err, blackboard.ErrInvalid) {
				t.Errorf("error %q, want ErrInvalid", err)
			}
			for _, want := range tt.want {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q lacks %q", err, want)
				}
			}
		})
	}
}

func TestDialEnvWithoutAnInstanceSaysWhereItLooked(t *testing.T) {
	isolateEnv(t)
	dir := t.TempDir()
	c, err := blackboard.DialEnv(t.Context(), blackboard.EnvOptions{Dir: dir})
	if err == nil {
		c.Close()
		t.Fatal("DialEnv connected with nothing to connect to")
	}
	t.Log(err)
	if !errors.Is(err, instance.ErrNoInstance) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "SETT_REDIS_URL") {
		t.Errorf("error %q; want no instance, where DialEnv looked and SETT_REDIS_URL", err)
	}
}

func TestDialEnvSaysWhatDoesNotAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("integration test: dials loopback (run without -short)")
	}
	isolateEnv(t)
	srv, err := redistest.NewServer(redistest.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop() // a port just released: nothing listens on it
	t.Setenv("SETT_REDIS_URL", srv.URL())
	t.Setenv("SETT_INSTANCE", "gone")
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second) // a bound on the attempt, not a measure
	defer cancel()
	c, err := blackboard.DialEnv(ctx, blackboard.EnvOptions{Dir: t.TempDir()})
	if err == nil {
		c.Close()
		t.Fatal("DialEnv connected to a stopped server")
	}
	t.Log(err)
	if !strings.Contains(err.Error(), "cannot reach the Redis of instance gone") || errors.Is(err, blackboard.ErrInvalid) {
		t.Errorf("error %q; want one saying the Redis of instance gone does not answer, not a bad setting", err)
	}
}

// learnerYML names a learner agent.
const learnerYML = "version: \"1.0\"\norchestrator: {learner: learner}\nagents:\n  learner:\n    command: [\"true\"]\n    bidding_strategy: ignore\n"

func TestRejectWithoutReason(t *testing.T) {
	tests := []struct {
		name string
		// settYML is the workspace's sett.yml ("" for none); dial, when
		// set, connects instead of DialEnv.
		settYML string
		dial    bool
		// refusal is what the ErrInvalid says; "" when the rejection is
		// accepted.
		refusal string
	}{
		{name: "a learner works out why", settYML: learnerYML},
		{name: "no learner", settYML: "version: \"1.0\"\nagents: {planner: {command: [sett-writer]}}\n", refusal: "has no sett.yml that does"},
		{name: "no sett.yml", refusal: "has no sett.yml that does"},
		{name: "a sett.yml that cannot be read", settYML: "version: \"1.0\"\norchestrator: {learner: nobody}\n", refusal: "sett.yml cannot be read"},
		{name: "a client from Dial reads no sett.yml", settYML: learnerYML, dial: true, refusal: "reads no sett.yml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := useRedis(t)
			ws := t.TempDir()
			if tt.settYML != "" {
				writeSettYML(t, ws, tt.settYML)
			}
			c := dialEnv(t, blackboard.EnvOptions{Dir: ws})
			if tt.dial {
				var err error
				if c, err = blackboard.Dial(t.Context(), os.Getenv("SETT_REDIS_URL"), blackboard.Options{Instance: name}); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = c.Close() })
			}
			ctx := t.Context()
			g, err := c.PostGoal(ctx, blackboard.Goal{Text: "plan the migration"})
			if err != nil {
				t.Fatal(err)
			}
			req, err := c.ApprovalOf(ctx, gatePlan(g.ID))
			if err != nil {
				t.Fatal(err)
			}

			err = c.RejectWithoutReason(ctx, req.ArtefactID, "erin")
			t.Log(err)
			if tt.refusal != "" {
				if !errors.Is(err, blackboard.ErrInvalid) || !strings.Contains(err.Error(), "orchestrator.learner") || !strings.Contains(err.Error(), tt.refusal) {
					t.Fatalf("RejectWithoutReason: %v; want ErrInvalid naming orchestrator.learner and %q", err, tt.refusal)
				}
				if _, err := c.ApprovalOf(ctx, req.ArtefactID); err != nil {
					t.Errorf("after the refusal the approval no longer waits: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("RejectWithoutReason with a learner: %v", err)
			}
			cl, err := c.GetClaim(ctx, req.ClaimID)
			if err != nil {
				t.Fatal(err)
			}
			if a := cl.Approval; a.Decision != engine.ApprovalRejected || a.Reason != "" || a.By != "erin" || a.Channel != engine.ChannelAPI {
				t.Errorf("recorded %+v; want rejected by erin via api without a reason", a)
			}
		})
	}
}
