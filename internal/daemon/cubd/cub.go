package cubd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/settdev/sett/internal/cub"
	"github.com/settdev/sett/internal/daemon"
	"github.com/settdev/sett/internal/idlemem"
	"github.com/settdev/sett/internal/observability"
	"github.com/settdev/sett/internal/tool"
)

// Run runs the cub sidecar with command-line args until ctx ends; logs go
// to logOut. Bad flags or configuration are a *daemon.UsageError.
// Arguments after the flags are the tool command, used when sett.yml gives
// the agent none (an image's CMD reaches the cub this way).
func Run(ctx context.Context, args []string, logOut io.Writer) error {
	var c daemon.Flags
	fs := flag.NewFlagSet("sett-cub", flag.ContinueOnError)
	fs.SetOutput(logOut)
	c.Register(fs, daemon.EnvOr("SETT_HTTP_ADDR", ":8081"))
	agent := fs.String("agent", daemon.EnvOr("SETT_AGENT", ""), "agent name from sett.yml (env SETT_AGENT)")
	workspace := fs.String("workspace", daemon.EnvOr("SETT_WORKSPACE", defaultWorkspace()), "the tool's working directory (env SETT_WORKSPACE)")
	consumer := fs.String("consumer", daemon.EnvOr("SETT_CUB_CONSUMER", ""), "stable name of this cub in its inbox group (default: hostname-agent)")
	drain := fs.String("drain-timeout", daemon.EnvOr("SETT_DRAIN_TIMEOUT", ""), "how long running tools may finish after SIGTERM, e.g. 45s (env SETT_DRAIN_TIMEOUT; default: the agent's drain_timeout in sett.yml)")
	if err := fs.Parse(args); err != nil {
		return &daemon.UsageError{Err: err}
	}
	if err := daemon.HideEnvironment(); err != nil {
		return fmt.Errorf("cub: hide the environment from tools: %w", err)
	}
	// The cub's services name themselves (component inbox_loop, ...); the
	// daemon's own lines are the "cub" component.
	cfg, base, log, err := c.Setup(logOut, "cub")
	if err != nil {
		return err
	}
	if *agent == "" {
		return &daemon.UsageError{Err: errors.New("no agent name: pass --agent or set SETT_AGENT")}
	}
	if *consumer == "" {
		host, _ := os.Hostname()
		*consumer = host + "-" + *agent
	}
	set, ok := cub.ConfigFrom(cfg, *agent, *workspace, *consumer)
	if !ok {
		return &daemon.UsageError{Err: fmt.Errorf("agent %q is not defined in %s (agents: %v)", *agent, c.ConfigPath, cfg.AgentNames())}
	}
	if len(set.Command) == 0 {
		set.Command = fs.Args()
	}
	if *drain != "" {
		d, err := time.ParseDuration(*drain)
		if err != nil || d < 0 {
			return &daemon.UsageError{Err: fmt.Errorf("drain timeout %q (--drain-timeout or SETT_DRAIN_TIMEOUT) is not valid: use a duration like 45s, or 0 to stop tools at once", *drain)}
		}
		set.DrainTimeout = d
	}
	if err := isolateTools(ctx, &set, log); err != nil {
		return err
	}
	srv := observability.NewServer(c.HTTPAddr)
	if err := srv.Listen(); err != nil {
		return err
	}
	bb, err := daemon.Connect(ctx, cfg, log, 2*time.Minute)
	if err != nil {
		return err
	}
	defer bb.Close()
	cb, err := cub.New(bb, set, cub.NewMetrics(srv.Registry()), base)
	if err != nil {
		return &daemon.UsageError{Err: err}
	}
	srv.AddReadyCheck("cub", cb.Ready)
	log.Info().Str("agent", *agent).Str("http_addr", srv.Addr()).Str("workspace", *workspace).Msg("cub starting")
	background := []func(context.Context){func(ctx context.Context) {
		idlemem.Keep(ctx, func() bool { return cb.Ready(ctx) == nil }, cb.Beat, log)
	}}
	if os.Getpid() == 1 {
		// PID 1 of a container adopts every orphan: reap them, or their
		// zombies pile up against the pids limit.
		background = append(background, tool.ReapOrphans)
	}
	err = daemon.Serve(ctx, srv, cb.Run, background...)
	log.Info().Msg("cub stopped")
	return err
}

// defaultWorkspace is /workspace inside a container, else the current
// directory.
func defaultWorkspace() string {
	if st, err := os.Stat("/workspace"); err == nil && st.IsDir() {
		return "/workspace"
	}
	wd, _ := os.Getwd()
	return wd
}
