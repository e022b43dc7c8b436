package orchestratord

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/daemon"
	"github.com/settdev/sett/internal/idlemem"
	"github.com/settdev/sett/internal/observability"
	"github.com/settdev/sett/internal/orchestrator"
	"github.com/settdev/sett/internal/vault"
)

// errNotStarted is the readiness check's answer until the orchestrator's
// services run.
var errNotStarted = errors.New("not started yet")

// Run runs the orchestrator daemon with command-line args until ctx ends;
// logs go to logOut. Bad flags or configuration are a *daemon.UsageError.
func Run(ctx context.Context, args []string, logOut io.Writer) error {
	var c daemon.Flags
	fs := flag.NewFlagSet("sett-orchestrator", flag.ContinueOnError)
	fs.SetOutput(logOut)
	c.Register(fs, daemon.EnvOr("SETT_HTTP_ADDR", ""))
	id := fs.String("id", daemon.EnvOr("SETT_ORCHESTRATOR_ID", ""), "stable identity of this orchestrator for the leader lease; a restart with the same id takes over at once, so no two live orchestrators may share one (default: <host>/<slot>, unique among live processes on this host)")
	leaderTTL := fs.Duration("leader-ttl", config.DefaultLeaderTTL, "leader lease TTL: how long a standby waits after the leader stops renewing")
	workspace := fs.String("workspace", daemon.EnvOr("SETT_WORKSPACE", "."), "the workspace, where a .sett_stop file pauses the instance (env SETT_WORKSPACE)")
	debug, err := registerDebugSwitches(fs)
	if err != nil {
		return &daemon.UsageError{Err: err}
	}
	if err := fs.Parse(args); err != nil {
		return &daemon.UsageError{Err: err}
	}
	if err := daemon.HideEnvironment(); err != nil {
		return fmt.Errorf("orchestrator: hide the environment: %w", err)
	}
	if strings.Contains(*id, "#") {
		return &daemon.UsageError{Err: fmt.Errorf("--id %q: an orchestrator id cannot contain '#' (the lease holds <id>#<boot>)", *id)}
	}
	// The orchestrator's services each log as their own component; the
	// daemon's own lines are the "orchestrator" component.
	cfg, base, log, err := c.Setup(logOut, "orchestrator")
	if err != nil {
		return err
	}
	addr := c.HTTPAddr
	if addr == "" {
		addr = cfg.Orchestrator.HTTPAddr
	}
	srv := observability.NewServer(addr)
	if err := srv.Listen(); err != nil {
		return err
	}
	bb, err := daemon.Connect(ctx, cfg, log, 2*time.Minute)
	if err != nil {
		return err
	}
	defer bb.Close()

	ocfg := orchestrator.ConfigFrom(cfg)
	ocfg.LeaderTTL = *leaderTTL
	ocfg.Creator.NoBidGrants, ocfg.Creator.NoResultCompletion = *debug.noBidGrants, *debug.noResultCompletion
	if ws, err := filepath.Abs(*workspace); err == nil {
		ocfg.StopDirs = append(ocfg.StopDirs, ws)
	}
	if vp := vaultPath(cfg, c.ConfigPath); vp != "" {
		vopt := vault.OptionsFrom(cfg, vp)
		vopt.ReportFunc = newVaultReporter(bb, vp, srv.Registry(), log).report
		br := vault.NewBridge(bb, vopt, base)
		ocfg.LeaderServices = append(ocfg.LeaderServices, orchestrator.LeaderService{Name: "vault_bridge", Run: br.Run})
		ocfg.VaultManagesToolMemory = true
		ocfg.StopDirs = append(ocfg.StopDirs, vp)
		log.Info().Str("vault", vp).Msg("vault configured; the leader mirrors it")
	}
	identity := *id
	if identity == "" {
		var release func()
		identity, release = orchestratorIdentity(os.TempDir(), cfg.Instance)
		defer release()
		if identity == "" {
			log.Warn().Str("dir", os.TempDir()).Msg("no orchestrator identity lock to be had: a restart waits for the leader lease to expire")
		}
	}
	o := orchestrator.New(bb, ocfg, orchestrator.NewMetrics(srv.Registry()), base, identity)
	srv.AddReadyCheck("redis", bb.Ping)
	srv.AddReadyCheck("orchestrator", func(context.Context) error {
		if !o.Started() {
			return errNotStarted
		}
		return nil
	})
	log.Info().Str("http_addr", srv.Addr()).Strs("agents", cfg.AgentNames()).Msg("orchestrator starting")
	err = daemon.Serve(ctx, srv, o.Run, func(ctx context.Context) { idlemem.Keep(ctx, o.Started, nil, log) })
	log.Info().Msg("orchestrator stopped")
	return err
}
