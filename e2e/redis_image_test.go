package e2e

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/eventually"
)

// The Redis image `make images` builds from the host's redis-server (a
// standalone container through testcontainers: this test needs nothing
// else) requires its password, keeps data in its append-only file across
// a restart, runs as the redis user, and carries redis-cli so that a
// healthcheck can authenticate (REDISCLI_AUTH) and tell PONG from an error.
func TestRedisImage(t *testing.T) {
	t.Parallel()
	setup(t)
	ctx := context.Background()
	const password = "e2e-redis-secret"
	ready := wait.ForExec([]string{"redis-cli", "-e", "ping"}).WithStartupTimeout(time.Minute)
	c, err := testcontainers.Run(ctx, config.DefaultRedisImage,
		testcontainers.WithCmd("redis-server", "--requirepass", password, "--appendonly", "yes", "--dir", "/data"),
		testcontainers.WithEnv(map[string]string{"REDISCLI_AUTH": password}),
		testcontainers.WithExposedPorts("6379/tcp"),
		testcontainers.WithWaitStrategy(ready))
	testcontainers.CleanupContainer(t, c)
	if err != nil {
		t.Fatal(err)
	}
	// Like sett itself, the tests run on the daemon's host and reach
	// published ports on its loopback. (testcontainers' own host guess
	// picks a gateway address when it finds itself inside a container.)
	endpoint := func() string {
		t.Helper()
		p, err := c.MappedPort(ctx, "6379/tcp")
		if err != nil {
			t.Fatal(err)
		}
		return "127.0.0.1:" + p.Port()
	}
	opts := blackboard.Options{Instance: "e2e-redis-image"}

	if bb, err := blackboard.Dial(ctx, "redis://"+endpoint()+"/0", opts); err == nil {
		_ = bb.Close()
		t.Error("Redis accepted a client without the password")
	}
	bb, err := blackboard.Dial(ctx, "redis://:"+password+"@"+endpoint()+"/0", opts)
	if err != nil {
		t.Fatal(err)
	}
	goal := blackboard.NewGoal("Survive a restart", 0, "user", nil)
	err = bb.CreateArtefact(ctx, goal, blackboard.WriteAuth{})
	_ = bb.Close()
	if err != nil {
		t.Fatal(err)
	}

	code, out, err := c.Exec(ctx, []string{"redis-cli", "-e", "ping"}, tcexec.Multiplexed())
	if err != nil {
		t.Fatal(err)
	}
	reply, _ := io.ReadAll(out)
	if code != 0 || strings.TrimSpace(string(reply)) != "PONG" {
		t.Errorf("redis-cli ping in the container: exit %d, %q", code, reply)
	}
	code, out, err = c.Exec(ctx, []string{"redis-cli", "-e", "--no-auth-warning", "-a", "wrong", "ping"}, tcexec.Multiplexed())
	if err != nil {
		t.Fatal(err)
	}
	if reply, _ := io.ReadAll(out); code == 0 {
		t.Errorf("redis-cli -e with a wrong password exits 0 (%q): a healthcheck could not tell", reply)
	}
	eventually.True(t, time.Minute, "the image's healthcheck to report healthy", func() bool {
		ins, err := c.Inspect(ctx)
		return err == nil && ins.State.Health != nil && ins.State.Health.Status == "healthy"
	})
	ins, err := c.Inspect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if ins.Config.User != "999:999" {
		t.Errorf("the image runs as %q, want the redis user 999:999", ins.Config.User)
	}

	stop := 10 * time.Second
	if err := c.Stop(ctx, &stop); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	bb, err = blackboard.Dial(ctx, "redis://:"+password+"@"+endpoint()+"/0", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer bb.Close()
	got, err := bb.GetArtefact(ctx, goal.ID)
	if err != nil {
		t.Fatalf("the goal did not survive a restart: %v", err)
	}
	if got.Payload != goal.Payload {
		t.Errorf("goal after restart: %q, want %q", got.Payload, goal.Payload)
	}
}
