package daemon

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/settdev/sett/internal/cub"
	"github.com/settdev/sett/internal/observability"
	"github.com/settdev/sett/internal/tool"
)

var errNotStarted = errors.New("not started yet")

// RunCub runs the cub sidecar with command-line args until ctx ends.
// Arguments after the flags are the tool command, used when sett.yml gives
// the agent none (an image's CMD reaches the cub this way).
func RunCub(ctx context.Context, args []string, logOut io.Writer) error {
	var c common
	fs := flag.NewFlagSet("sett-cub", flag.ContinueOnError)
	fs.SetOutput(logOut)
	c.register(fs, envOr("SETT_HTTP_ADDR", ":8081"))
	agent := fs.String("agent", envOr("SETT_AGENT", ""), "agent name from sett.yml (env SETT_AGENT)")
	workspace := fs.String("workspace", envOr("SETT_WORKSPACE", defaultWorkspace()), "the tool's working directory (env SETT_WORKSPACE)")
	consumer := fs.String("consumer", envOr("SETT_CUB_CONSUMER", ""), "stable name of this cub in its inbox group (default: hostname-agent)")
	if err := fs.Parse(args); err != nil {
		return &UsageError{err}
	}
	if err := hideEnvironment(); err != nil {
		return fmt.Errorf("cub: hide the environment from tools: %w", err)
	}
	cfg, warnings, err := c.load()
	if err != nil {
		return err
	}
	if *agent == "" {
		return &UsageError{errors.New("no agent name: pass --agent or set SETT_AGENT")}
	}
	if *consumer == "" {
		host, _ := os.Hostname()
		*consumer = host + "-" + *agent
	}
	set, ok := cub.SettingsFrom(cfg, *agent, *workspace, *consumer)
	if !ok {
		return &UsageError{fmt.Errorf("agent %q is not defined in %s (agents: %v)", *agent, c.configPath, cfg.AgentNames())}
	}
	if len(set.Command) == 0 {
		set.Command = fs.Args()
	}
	// The cub's services name themselves (component inbox_loop, ...): they
	// get a base logger without a component, so every line carries the
	// key once; the daemon's own lines are the "cub" component.
	base, err := c.logger(logOut, "", cfg.Instance)
	if err != nil {
		return err
	}
	log := base.With().Str("component", "cub").Logger()
	for _, w := range warnings {
		log.Warn().Str("config", c.configPath).Msg(w)
	}
	if err := isolateTools(ctx, &set, log); err != nil {
		return err
	}
	srv := observability.NewServer(c.httpAddr)
	if err := srv.Listen(); err != nil {
		return err
	}
	bb, err := connect(ctx, cfg, log, 2*time.Minute)
	if err != nil {
		return err
	}
	defer bb.Close()
	cb, err := cub.New(bb, set, cub.NewMetrics(srv.Registry()), base)
	if err != nil {
		return &UsageError{err}
	}
	srv.AddReadyCheck("cub", cb.Ready)
	log.Info().Str("agent", *agent).Str("http_addr", srv.Addr()).Str("workspace", *workspace).Msg("cub starting")
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = srv.Run(ctx) }()
	wg.Add(1)
	go func() {
		defer wg.Done()
		releaseStartupMemory(ctx, func() bool { return cb.Ready(ctx) == nil }, log)
	}()
	if os.Getpid() == 1 {
		// PID 1 of a container adopts every orphan: reap them, or their
		// zombies pile up against the pids limit.
		wg.Add(1)
		go func() { defer wg.Done(); tool.ReapOrphans(ctx) }()
	}
	err = cb.Run(ctx)
	wg.Wait()
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
