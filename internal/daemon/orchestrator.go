package daemon

import (
	"context"
	"flag"
	"io"
	"path/filepath"
	"sync"
	"time"

	"github.com/settdev/sett/internal/observability"
	"github.com/settdev/sett/internal/orchestrator"
	"github.com/settdev/sett/internal/vault"
)

// RunOrchestrator runs the orchestrator daemon with command-line args
// until ctx ends. Logs go to logOut.
func RunOrchestrator(ctx context.Context, args []string, logOut io.Writer) error {
	var c common
	fs := flag.NewFlagSet("sett-orchestrator", flag.ContinueOnError)
	fs.SetOutput(logOut)
	c.register(fs, envOr("SETT_HTTP_ADDR", ""))
	id := fs.String("id", envOr("SETT_ORCHESTRATOR_ID", ""), "name of this orchestrator for the leader lease (default: host-pid-random)")
	leaderTTL := fs.Duration("leader-ttl", 10*time.Second, "leader lease TTL: how long a standby waits after the leader stops renewing")
	workspace := fs.String("workspace", envOr("SETT_WORKSPACE", "."), "the workspace, where a .sett_stop file pauses the instance (env SETT_WORKSPACE)")
	if err := fs.Parse(args); err != nil {
		return &UsageError{err}
	}
	cfg, warnings, err := c.load()
	if err != nil {
		return err
	}
	log, err := c.logger(logOut, "orchestrator", cfg.Instance)
	if err != nil {
		return err
	}
	for _, w := range warnings {
		log.Warn().Str("config", c.configPath).Msg(w)
	}
	addr := c.httpAddr
	if addr == "" {
		addr = cfg.Orchestrator.HTTPAddr
	}
	srv := observability.NewServer(addr)
	if err := srv.Listen(); err != nil {
		return err
	}
	bb, err := connect(ctx, cfg, log, 2*time.Minute)
	if err != nil {
		return err
	}
	defer bb.Close()

	set := orchestrator.SettingsFrom(cfg)
	set.LeaderTTL = *leaderTTL
	if ws, err := filepath.Abs(*workspace); err == nil {
		set.StopDirs = append(set.StopDirs, ws)
	}
	if vp := vaultPath(cfg, c.configPath); vp != "" {
		br := vault.NewBridge(bb, vault.OptionsFrom(cfg, vp), log)
		set.LeaderServices = append(set.LeaderServices, orchestrator.LeaderService{Name: "vault_bridge", Run: br.Run})
		set.VaultManagesToolMemory = true
		set.StopDirs = append(set.StopDirs, vp)
		log.Info().Str("vault", vp).Msg("vault configured; the leader mirrors it")
	}
	o := orchestrator.New(bb, set, orchestrator.NewMetrics(srv.Registry()), log, *id)
	srv.AddReadyCheck("redis", bb.Ping)
	srv.AddReadyCheck("orchestrator", func(context.Context) error {
		if !o.Started() {
			return errNotStarted
		}
		return nil
	})
	log.Info().Str("http_addr", srv.Addr()).Strs("agents", cfg.AgentNames()).Msg("orchestrator starting")
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = srv.Run(ctx) }()
	err = o.Run(ctx)
	wg.Wait()
	log.Info().Msg("orchestrator stopped")
	return err
}
