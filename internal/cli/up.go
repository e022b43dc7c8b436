package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/termsafe"
)

// DefaultRuntime is the runtime `sett up` uses without --runtime.
const DefaultRuntime = instance.RuntimeDocker

func newUpCommand(app *App) *cobra.Command {
	var (
		runtimeName string
		configPath  string
		force       bool
		foreground  bool
	)
	cmd := &cobra.Command{
		Use:   "up [--name NAME] [--runtime docker|local] [--config PATH] [--force] [--foreground]",
		Short: "Start Redis, the orchestrator and the agents; wait until all are ready",
		Long: `Start an instance: Redis, the orchestrator and one cub per agent of sett.yml,
then wait until every component is ready. If anything fails, everything that
was started is stopped again and the error names the component and quotes its
log.

The instance name is --name, else SETT_INSTANCE, else instance in sett.yml,
else derived from the workspace directory's name. The configuration is
--config, else SETT_CONFIG, else sett.yml in the workspace.

Runtimes: docker (containers; the default) and local (processes on this
machine, with redis-server from PATH).

With --foreground (local runtime), sett up stays once the instance is up:
SIGTERM or Ctrl-C stops the instance (as sett down would) and it exits 0;
if the instance's supervisor dies it exits 1, so that a service manager
restarts it; sett down from elsewhere ends it with 0. sett service install
writes a systemd user unit that runs it so.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var then func(runtime.Runtime, *instance.Record) error
			if foreground {
				if runtimeName != instance.RuntimeLocal {
					return usageError("--foreground is for --runtime local: Docker keeps the containers running and restarts them itself")
				}
				then = func(rt runtime.Runtime, rec *instance.Record) error { return stayInForeground(cmd, rt, rec) }
			}
			return runUp(cmd, app, runtimeName, configPath, force, then)
		},
	}
	f := cmd.Flags()
	f.StringVar(&runtimeName, "runtime", DefaultRuntime, "where to run the instance: docker or local")
	f.StringVar(&configPath, "config", "", "path to sett.yml (default: sett.yml in the workspace; env SETT_CONFIG)")
	f.BoolVar(&force, "force", false, "start even when another instance already runs on this workspace")
	f.BoolVar(&foreground, "foreground", false, "local runtime: stay until the instance stops; SIGTERM or Ctrl-C stops it (what `sett service install` runs)")
	return cmd
}

// runUp starts the instance; then, when not nil, runs once it is up and
// its record saved (--foreground).
func runUp(cmd *cobra.Command, app *App, runtimeName, configFlag string, force bool, then func(runtime.Runtime, *instance.Record) error) error {
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	ws := app.Workspace()
	cfgPath := resolveConfigPath(configFlag, app.env("SETT_CONFIG"), app.Dir, ws)
	cfgSum := fileSHA256(cfgPath) // before the load: a later edit then shows as a change
	cfg, warnings, err := config.Load(cfgPath)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no configuration at %s: run `sett init` to create one, or pass --config", cfgPath)
	}
	if err != nil {
		return err
	}
	fileInstance := cfg.Instance
	if err := cfg.ApplyEnv(app.LookupEnv); err != nil {
		return err
	}
	name, err := resolveInstanceName(app.name, app.env("SETT_INSTANCE"), fileInstance, ws)
	if err != nil {
		return err
	}
	// One identity per instance: reuse the name and runtime this
	// workspace remembers; refuse a second runtime for the same name.
	req := upIdentityRequest{Workspace: ws, Derived: name, Runtime: runtimeName,
		RuntimeExplicit: cmd.Flags().Changed("runtime"), Force: force}
	if app.name != "" || app.env("SETT_INSTANCE") != "" || fileInstance != "" {
		req.Name = name
	}
	id, err := decideUpIdentity(req, knownInstances(cmd.Context(), app, ws))
	if err != nil {
		return err
	}
	name, runtimeName = id.Name, id.Runtime
	cfg.Instance = name
	for _, w := range warnings {
		fmt.Fprintln(errOut, "warning:", termsafe.String(w))
	}
	if id.Warning != "" {
		fmt.Fprintln(errOut, "warning:", id.Warning)
	}
	rt, err := app.runtimeFor(runtimeName)
	if err != nil {
		return err
	}
	if cfg.Vault.Enabled() {
		if err := scaffoldVault(out, cfg.Vault.ResolvedPath(filepath.Dir(cfgPath))); err != nil {
			return err
		}
	}

	// Earlier versions kept instance records (with the Redis password) in
	// the workspace, where tools can read them.
	if moved, err := instance.MigrateLegacy(ws); err != nil {
		return err
	} else if len(moved) > 0 {
		fmt.Fprintf(errOut, "note: moved %d instance record(s) out of the workspace (%s) into %s, where tools cannot read them through the workspace\n",
			len(moved), filepath.Join(instance.SettDir(ws), "instances"), filepath.Join(instance.StateHome(), "instances"))
	}
	fmt.Fprintf(out, "Starting instance %s (%s runtime, %d agents) from %s\n", name, rt.Name(), len(cfg.Agents), cfgPath)
	view := newProgressView(out, app.IsTTY, styleFor(app))
	rec, err := rt.Up(cmd.Context(), runtime.UpSpec{
		Name: name, Workspace: ws, ConfigPath: cfgPath, Config: cfg, Force: force, ProgressFunc: view.Update,
		WarnFunc: func(w string) { fmt.Fprintln(errOut, "warning:", w) },
	})
	if err != nil {
		return err
	}
	rec.ConfigPath, rec.ConfigSHA256 = cfgPath, cfgSum
	if err := instance.Save(rec); err != nil {
		// Without its record no later command could find or stop the
		// instance: take it down again rather than leave it running.
		derr := rt.Down(context.WithoutCancel(cmd.Context()), rec, false)
		return errors.Join(fmt.Errorf("instance %s started, but its record could not be saved, so it was stopped again: %w", name, err), derr)
	}
	printUpSummary(cmd, rec, cfg)
	if then != nil {
		return then(rt, rec)
	}
	return nil
}

// fileSHA256 is the hex SHA-256 of the file at path, "" when it cannot
// be read.
func fileSHA256(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// configChangedWarning says that rec's sett.yml changed since `sett up`
// read it, and how to apply the change; "" when it did not (or the record
// predates the check).
func configChangedWarning(rec *instance.Record) string {
	if rec == nil || rec.ConfigSHA256 == "" || rec.ConfigPath == "" {
		return ""
	}
	now := fileSHA256(rec.ConfigPath)
	if now == rec.ConfigSHA256 {
		return ""
	}
	what := "changed"
	if now == "" {
		what = "is gone (or unreadable)"
	}
	return fmt.Sprintf("%s %s since `sett up` started instance %s at %s: the running instance still uses the configuration it read then; apply the new one with `sett down --name %s` and `sett up --name %s --runtime %s`",
		rec.ConfigPath, what, rec.Name, rec.CreatedAt.Local().Format("2006-01-02 15:04"), rec.Name, rec.Name, rec.Runtime)
}

// resolveConfigPath returns the sett.yml `sett up` reads: the flag, else
// SETT_CONFIG, else sett.yml in the workspace. Relative paths are taken
// from dir, the directory the command runs in.
func resolveConfigPath(flag, env, dir, workspace string) string {
	p := flag
	if p == "" {
		p = env
	}
	if p == "" {
		return filepath.Join(workspace, config.DefaultFilename)
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}

// resolveInstanceName returns the instance name `sett up` uses: the
// --name flag, else SETT_INSTANCE, else instance in sett.yml, else a name
// derived from the workspace directory (instance.DeriveName). The chosen
// name must be a valid instance name; the error says where it came from.
func resolveInstanceName(flag, env, file, workspace string) (string, error) {
	for _, c := range []struct{ value, source string }{
		{flag, "--name"},
		{env, "SETT_INSTANCE"},
		{file, "instance in sett.yml"},
	} {
		if c.value == "" {
			continue
		}
		if err := blackboard.ValidateInstance(c.value); err != nil {
			return "", usageError("%s: %v", c.source, err)
		}
		return c.value, nil
	}
	return instance.DeriveName(workspace), nil
}

// printUpSummary says what runs and what to do next.
func printUpSummary(cmd *cobra.Command, rec *instance.Record, cfg *config.Config) {
	out := cmd.OutOrStdout()
	// The hints name the instance when the workspace remembers another
	// (running or stopped): a bare command finds only a workspace's only
	// running instance.
	flag := ""
	if recs, err := instance.InWorkspace(rec.Workspace); err == nil && len(recs) > 1 {
		flag = " --name " + rec.Name
	}
	fmt.Fprintf(out, "\nInstance %s is up (%s runtime): %s.\n", rec.Name, rec.Runtime, componentSummary(rec, cfg))
	// An external Sentinel or Cluster has no single URL in the record.
	if u, err := url.Parse(rec.RedisURL); err == nil && u.Host != "" {
		fmt.Fprintf(out, "  redis       %s (the password is in the instance record, %s)\n", u.Host, instance.RecordPath(rec.Workspace, rec.Name))
	}
	if rec.StateDir != "" {
		fmt.Fprintf(out, "  state       %s\n", rec.StateDir)
	}
	fmt.Fprintf(out, "  logs        sett logs%s orchestrator   (or an agent name, or redis)\n", flag)
	fmt.Fprintf(out, "\nPost a goal and wait for its outcome:\n  sett forage%s --goal \"Describe what you want done\" --wait\n", flag)
	fmt.Fprintf(out, "Follow the work with `sett watch%s`; stop with `sett down%s` (the data is kept).\n", flag, flag)
}

// componentSummary is "redis, orchestrator and 2 agents (reviewer,
// writer)".
func componentSummary(rec *instance.Record, cfg *config.Config) string {
	var parts []string
	if _, ok := rec.Components["redis"]; ok {
		parts = append(parts, "redis")
	}
	parts = append(parts, "orchestrator")
	agents := cfg.AgentNames()
	sort.Strings(agents)
	noun := "agents"
	if len(agents) == 1 {
		noun = "agent"
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" and %d %s (%s)", len(agents), noun, strings.Join(agents, ", "))
}
