package local

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/settdev/sett/internal/acl"
	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
)

const (
	// upPoll is how often Up checks readiness.
	upPoll = 100 * time.Millisecond
	// failFastExits: a component that has exited this many times before
	// it was ever ready fails Up at once instead of at the deadline (a
	// daemon that exits at start, such as on a configuration error, never
	// recovers by itself).
	failFastExits = 3
	// logTailLines is how much of a failed component's log Up quotes.
	logTailLines = 20
)

// Up starts the instance described by spec and returns its record; see
// the package documentation for what runs and where.
//
// Behaviour, in order:
//   - spec is checked: a valid instance name, an absolute, existing
//     workspace, a configuration whose every agent has a command (the
//     local runtime has no image CMD to fall back on) and whose agent
//     names do not clash with "redis", "orchestrator" or "supervisor".
//   - An instance of the same name whose supervisor is alive is always
//     refused; another live local instance of the workspace is refused
//     unless spec.Force. Both wrap ErrAlreadyRunning. Components of the
//     same name that outlived their supervisor (it was killed) are
//     stopped before anything starts.
//   - The programs are found (ErrBinaryNotFound otherwise) before
//     anything is created.
//   - Unless services.redis.url is set, a redis-server is planned on a
//     free loopback port, with append-only persistence, its data in the
//     state directory and a password: services.redis.password when set,
//     else the one stored by an earlier Up, else a new one that is stored
//     (mode 0600) — so a later Up of the same name finds its data and can
//     open it.
//   - The orchestrator and one cub per agent get a free loopback port
//     each for /healthz and /readyz, and an environment built from the
//     caller's with every SETT_* variable removed (except SETT_LOG_LEVEL)
//     and then SETT_INSTANCE, SETT_CONFIG (absolute), SETT_HTTP_ADDR, SETT_HASH_TAG and
//     SETT_LOG_FORMAT=json set; cubs also get SETT_AGENT, SETT_WORKSPACE,
//     SETT_CUB_CONSUMER=<name>-<agent> and PATH=<dir of sett>:<workspace>/bin:$PATH.
//     Every process runs in the workspace. SETT_REDIS_URL (password
//     included) reaches the daemons on a pipe (SETT_SECRETS_FD), never in
//     their environment.
//   - The detached supervisor is started and Up polls, against one
//     deadline (ReadyTimeout), until Redis answers PING and every daemon
//     answers /readyz with 200, reporting each component's progress.
//   - On any failure — a component not ready at the deadline, one that
//     exited failFastExits times, the supervisor exiting, ctx ending — Up
//     stops the supervisor and everything it started, removes the files
//     and directories it created (an earlier instance's data and password
//     stay), and returns an error wrapping ErrNotReady that names each
//     failed component with the tail of its log.
func (r *Runtime) Up(ctx context.Context, spec runtime.UpSpec) (*instance.Record, error) {
	if !supported {
		return nil, ErrUnsupported
	}
	if err := checkSpec(&spec); err != nil {
		return nil, err
	}
	if from, err := migrateLegacyState(spec.Workspace, spec.Name); err != nil {
		return nil, err
	} else if from != "" && spec.ProgressFunc != nil {
		spec.ProgressFunc(runtime.Progress{Component: "state", State: "moved",
			Detail: "from " + from + " (inside the workspace, readable by tools) to " + StateDir(spec.Workspace, spec.Name)})
	}
	sd := stateDirOf(spec.Workspace, spec.Name)
	if err := checkNotRunning(spec, sd); err != nil {
		return nil, err
	}
	cfg := spec.Config
	// Any Redis the configuration names (a URL, a Sentinel set or a
	// Cluster) is external: Sett starts none.
	external := cfg.Services.Redis.External()
	bins, err := r.findBinaries(!external, len(cfg.ControllerAgents()) > 0)
	if err != nil {
		return nil, err
	}
	u := &upRun{r: r, spec: spec, sd: sd, bins: bins, external: external}
	if err := checkIsolation(ctx, spec, bins.cub); err != nil {
		return nil, err
	}
	rec, err := u.run(ctx)
	if err != nil {
		u.rollback(ctx)
		return nil, err
	}
	return rec, nil
}

// checkSpec validates spec and makes its paths absolute.
func checkSpec(spec *runtime.UpSpec) error {
	if err := blackboard.ValidateInstance(spec.Name); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidSpec, err)
	}
	if spec.Config == nil {
		return fmt.Errorf("%w: no configuration", ErrInvalidSpec)
	}
	for _, p := range []*string{&spec.Workspace, &spec.ConfigPath} {
		if *p == "" {
			return fmt.Errorf("%w: the workspace and the configuration path are required", ErrInvalidSpec)
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidSpec, err)
		}
		*p = abs
	}
	if st, err := os.Stat(spec.Workspace); err != nil || !st.IsDir() {
		return fmt.Errorf("%w: workspace %s is not a directory", ErrInvalidSpec, spec.Workspace)
	}
	if _, err := os.Stat(spec.ConfigPath); err != nil {
		return fmt.Errorf("%w: configuration %s: %v", ErrInvalidSpec, spec.ConfigPath, err)
	}
	var problems []string
	for _, name := range spec.Config.AgentNames() {
		a := spec.Config.Agents[name]
		if len(a.Command) == 0 && !a.IsController() { // a controller's worker command is checked by config
			problems = append(problems, fmt.Sprintf("agents.%s.command is empty: the local runtime runs the tool on this machine and needs its command (only the Docker runtime can use an image's CMD)", name))
		}
	}
	if len(spec.Config.Agents) == 0 {
		problems = append(problems, "the configuration has no agents")
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrInvalidSpec, strings.Join(problems, "; "))
	}
	return nil
}

// checkNotRunning refuses to start over a live supervisor: of the same
// name always, of another local instance of the workspace unless Force.
// The state directory's status file is checked as well as the records,
// so a live instance whose record was deleted is still found.
func checkNotRunning(spec runtime.UpSpec, sd stateDir) error {
	if st, err := ReadStatus(sd.statusFile()); err == nil && supervisorRunning(st.SupervisorPID, sd) {
		return fmt.Errorf("%w: instance %q is already running here (supervisor pid %d): stop it with `sett down --name %s` first",
			ErrAlreadyRunning, spec.Name, st.SupervisorPID, spec.Name)
	}
	recs, err := instance.InWorkspace(spec.Workspace)
	if err != nil {
		return err
	}
	for _, rec := range recs {
		if rec.Runtime != instance.RuntimeLocal || !supervisorRunning(rec.SupervisorPID, recordStateDir(rec)) {
			continue
		}
		if rec.Name == spec.Name {
			return fmt.Errorf("%w: instance %q is already running here (supervisor pid %d): stop it with `sett down --name %s` first",
				ErrAlreadyRunning, spec.Name, rec.SupervisorPID, spec.Name)
		}
		if !spec.Force {
			return fmt.Errorf("%w: instance %q already runs on workspace %s (supervisor pid %d): stop it with `sett down --name %s`, or pass --force to start %q next to it",
				ErrAlreadyRunning, rec.Name, spec.Workspace, rec.SupervisorPID, rec.Name, spec.Name)
		}
	}
	return nil
}

// upRun is one attempt of Up: what it created, so that rollback removes
// exactly that.
type upRun struct {
	r        *Runtime
	spec     runtime.UpSpec
	sd       stateDir
	bins     binaries
	external bool

	createdDirs     []string // topmost directories this attempt created
	createdPassword bool
	plan            *Plan
	redisURL        string
	// people are the human's and the reader's ACL users (name, password),
	// when Sett started Redis.
	people        map[acl.Role][2]string
	supervisorPID int
	reported      map[string]string // component → last state reported
}

func (u *upRun) progress(component, state, detail string) {
	if u.reported == nil {
		u.reported = map[string]string{}
	}
	if u.reported[component] == state {
		return
	}
	u.reported[component] = state
	if u.spec.ProgressFunc != nil {
		u.spec.ProgressFunc(runtime.Progress{Component: component, State: state, Detail: detail})
	}
}

func (u *upRun) run(ctx context.Context) (*instance.Record, error) {
	if !u.external {
		u.progress(ComponentRedis, "creating", "data in "+u.sd.redisData())
	}
	if err := u.makeDirs(); err != nil {
		return nil, err
	}
	plan, err := u.buildPlan()
	if err != nil {
		return nil, err
	}
	// Components that outlived a killed supervisor of an earlier run must
	// go first: a second redis-server on the same data directory would
	// corrupt it. Then the stale status file goes, or the wait below would
	// read its pids.
	stopLeftovers(ctx, u.sd)
	if err := os.Remove(u.sd.statusFile()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("local: %w", err)
	}
	if err := writePlan(u.sd.planFile(), plan); err != nil {
		return nil, err
	}
	u.plan = plan

	if err := u.startSupervisor(); err != nil {
		return nil, err
	}
	for _, c := range plan.Components {
		u.progress(c.Name, "starting", "")
	}
	st, err := u.waitReady(ctx)
	if err != nil {
		return nil, err
	}
	cfg := u.spec.Config
	rec := &instance.Record{
		Name: u.spec.Name, Runtime: instance.RuntimeLocal, Workspace: u.spec.Workspace,
		RedisURL: u.redisURL, HashTag: cfg.Services.Redis.HashTag, CreatedAt: u.r.now().UTC(),
		StateDir: u.sd.path(), SupervisorPID: u.supervisorPID, Components: map[string]instance.Component{},
		Isolation: isolationSummary(cfg),
	}
	if h, ok := u.people[acl.RoleHuman]; ok {
		rec.HumanRedisURL = instance.WithUser(u.redisURL, h[0], h[1])
	}
	if r, ok := u.people[acl.RoleReader]; ok {
		rec.ReaderRedisURL = instance.WithUser(u.redisURL, r[0], r[1])
	}
	for _, c := range plan.Components {
		rec.Components[c.Name] = instance.Component{HTTPAddr: c.HTTPAddr, PID: st.Components[c.Name].PID, LogPath: c.LogPath}
	}
	return rec, nil
}

// makeDirs creates the log directory and, for a Redis of its own, the
// data directory, remembering what it created.
func (u *upRun) makeDirs() error {
	dirs := []string{u.sd.logDir()}
	if !u.external {
		dirs = append(dirs, u.sd.redisData())
	}
	for _, dir := range dirs {
		top, err := mkdirTracked(dir)
		if err != nil {
			return err
		}
		if top != "" {
			u.createdDirs = append(u.createdDirs, top)
		}
	}
	return nil
}

// buildPlan chooses the ports and the Redis password and describes every
// component: Redis (unless external), one cub per agent, the
// orchestrator.
func (u *upRun) buildPlan() (*Plan, error) {
	cfg := u.spec.Config
	agents := cfg.AgentNames()
	nPorts := 1 + len(agents)
	if !u.external {
		nPorts++
	}
	ports, err := freeLoopbackPorts(nPorts)
	if err != nil {
		return nil, err
	}
	plan := &Plan{Instance: u.spec.Name, StatusPath: u.sd.statusFile()}
	componentURL := map[string]string{}
	if u.external {
		// A Sentinel set or a Cluster has no single URL: the daemons read
		// its addresses, TLS files and users from the same sett.yml
		// (SETT_CONFIG), and its secrets below.
		if cfg.Services.Redis.Topology() == "url" {
			u.redisURL = cfg.Services.Redis.ConnectURL()
		}
	} else {
		pw, created, err := u.sd.redisPassword(cfg.Services.Redis.Password)
		if err != nil {
			return nil, err
		}
		u.createdPassword = created
		port := ports[len(ports)-1]
		// The daemons reach Redis over its Unix socket (unless the state
		// directory's path is too long for one); the CLI and redis-cli keep
		// the loopback port.
		socket := u.sd.redisSocket()
		if len(socket) > maxSocketPath {
			socket = ""
		}
		creds, err := newACLCredentials(u.spec.Name, cfg.Services.Redis.HashTag, agents, componentLink(port, socket))
		if err != nil {
			return nil, err
		}
		componentURL = creds.urls
		u.people = creds.people
		if err := u.sd.writeRedisConf(port, socket, pw, creds.confLines...); err != nil {
			return nil, err
		}
		u.redisURL = (&url.URL{Scheme: "redis", User: url.UserPassword("", pw),
			Host: "127.0.0.1:" + strconv.Itoa(port), Path: "/0"}).String()
		plan.Components = append(plan.Components, PlanComponent{
			Name: ComponentRedis, Stage: stageRedis, Argv: []string{u.bins.redis, u.sd.redisConf()},
			Env: baseEnv(os.Environ()), Dir: u.sd.redisData(), LogPath: u.sd.logPath(ComponentRedis), RedisURL: u.redisURL,
		})
	}

	// The Redis URL (with the password) is a secret: the daemons get it on
	// a pipe, not in their environment (see PlanComponent.Secrets).
	secrets := externalSecrets(cfg.Services.Redis)
	if u.redisURL != "" {
		secrets = map[string]string{"SETT_REDIS_URL": u.redisURL}
	}
	common := map[string]string{
		"SETT_INSTANCE":   u.spec.Name,
		"SETT_CONFIG":     u.spec.ConfigPath,
		"SETT_HASH_TAG":   strconv.FormatBool(cfg.Services.Redis.HashTag),
		"SETT_LOG_FORMAT": "json",
	}
	path := strings.Join([]string{filepath.Dir(u.bins.sett), filepath.Join(u.spec.Workspace, "bin"), os.Getenv("PATH")},
		string(os.PathListSeparator))
	// secretsFor hands a component its Redis URL on the secrets pipe: with
	// its own ACL user when Sett started Redis, else the shared one.
	secretsFor := func(component string) map[string]string {
		if link, ok := componentURL[component]; ok {
			return map[string]string{"SETT_REDIS_URL": link}
		}
		return secrets
	}
	for i, agent := range agents {
		addr := "127.0.0.1:" + strconv.Itoa(ports[1+i])
		isolation := isolationEnv(u.spec)
		if cfg.Agents[agent].IsController() {
			// A controller's tool is Sett's own worker launcher, which
			// needs the Docker socket; the agent's code runs in the
			// worker container, which is its isolation.
			isolation = nil
		}
		env := withEnv(baseEnv(os.Environ()), common, map[string]string{
			"SETT_HTTP_ADDR":    addr,
			"SETT_AGENT":        agent,
			"SETT_WORKSPACE":    u.spec.Workspace,
			"SETT_CUB_CONSUMER": u.spec.Name + "-" + agent,
			"PATH":              path,
			// The cub's tool ledger, which outlives a killed cub.
			"SETT_RUN_DIR": filepath.Join(u.sd.path(), "run", agent),
		}, isolation) // what its tools' sandbox hides (see cubd.isolateTools)
		argv := []string{u.bins.cub}
		if a := cfg.Agents[agent]; a.IsController() {
			// The cub takes its tool, the worker launcher, from its
			// arguments (cub.ConfigFrom leaves Command empty).
			argv = append(append(argv, "--", u.bins.worker), workerSpec(u.spec, agent, a).Args()...)
		}
		plan.Components = append(plan.Components, PlanComponent{
			Name: agent, Stage: stageCubs, Argv: argv, Env: env, Secrets: secretsFor(agent), Dir: u.spec.Workspace,
			LogPath: u.sd.logPath(agent), HTTPAddr: addr,
		})
	}
	orchAddr := "127.0.0.1:" + strconv.Itoa(ports[0])
	plan.Components = append(plan.Components, PlanComponent{
		Name: ComponentOrchestrator, Stage: stageOrchestrator, Argv: []string{u.bins.orchestrator},
		Env:     withEnv(baseEnv(os.Environ()), common, map[string]string{"SETT_HTTP_ADDR": orchAddr}),
		Secrets: secretsFor(ComponentOrchestrator),
		Dir:     u.spec.Workspace, LogPath: u.sd.logPath(ComponentOrchestrator), HTTPAddr: orchAddr,
	})
	return plan, nil
}

// externalSecrets are the credentials of an external Sentinel set or
// Cluster as this `sett up` resolved them (sett.yml, then its
// environment), for the daemons' secrets pipe: they read the rest of
// services.redis from sett.yml, so every component reaches Redis with
// exactly the settings `sett up` saw, even when the passwords came from
// this shell's environment.
func externalSecrets(r config.RedisConfig) map[string]string {
	out := map[string]string{}
	for name, v := range map[string]string{
		config.EnvRedisPassword:         r.Password,
		config.EnvRedisUsername:         r.Username,
		config.EnvRedisSentinelPassword: r.Sentinel.Password,
	} {
		if v != "" {
			out[name] = v
		}
	}
	return out
}

// startSupervisor starts `sett supervise --plan FILE` in a new session,
// with stdin and stdout on the null device and stderr on its log file.
func (u *upRun) startSupervisor() error {
	logf, err := os.OpenFile(u.sd.supervisorLog(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("local: open the supervisor log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(u.bins.sett, "supervise", "--plan", u.sd.planFile())
	cmd.Env = baseEnv(os.Environ())
	cmd.Dir = u.spec.Workspace
	cmd.Stderr = logf // Stdin and Stdout stay nil: the null device
	cmd.SysProcAttr = sessionAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("local: start the supervisor (%s supervise): %w", u.bins.sett, err)
	}
	u.supervisorPID = cmd.Process.Pid
	// `sett up` normally exits long before the supervisor, which init
	// then reaps; a caller that lives on (a test, a long-running program)
	// reaps it here, or it would linger as a zombie.
	go func() { _ = cmd.Wait() }()
	return nil
}

// waitReady polls every component until all are ready, one fails, or the
// deadline passes; it returns the supervisor's status at the end.
func (u *upRun) waitReady(ctx context.Context) (*Status, error) {
	timeout := u.r.readyTimeout()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(upPoll)
	defer tick.Stop()
	ready := map[string]bool{}
	lastErr := map[string]string{}
	for {
		st, _ := ReadStatus(u.sd.statusFile())
		if !processAlive(u.supervisorPID) {
			return nil, u.failure([]componentFailure{{name: ComponentSupervisor, reason: "the supervisor exited",
				log: u.sd.supervisorLog()}})
		}
		var failed []componentFailure
		for _, c := range u.plan.Components {
			if ready[c.Name] {
				continue
			}
			var cs ComponentStatus
			if st != nil {
				cs = st.Components[c.Name]
			}
			exits := cs.Starts
			if cs.State == ChildRunning {
				exits--
			}
			if exits >= failFastExits {
				failed = append(failed, componentFailure{name: c.Name, log: c.LogPath,
					reason: fmt.Sprintf("exited %d times without becoming ready (last: %s)", exits, cs.LastExit)})
				continue
			}
			if cs.State != ChildRunning {
				lastErr[c.Name] = notRunningReason(cs)
				continue
			}
			if err := probeReady(ctx, c, u.spec.Name); err != nil {
				lastErr[c.Name] = err.Error()
				u.progress(c.Name, "waiting", err.Error())
				continue
			}
			ready[c.Name] = true
			detail := c.HTTPAddr
			if c.Name == ComponentRedis {
				detail = redactedHost(u.redisURL)
			}
			u.progress(c.Name, "ready", detail)
		}
		if len(failed) > 0 {
			return nil, u.failure(failed)
		}
		if len(ready) == len(u.plan.Components) {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: interrupted (%v); stopped everything it had started", ErrNotReady, ctx.Err())
		case <-deadline.C:
			for _, c := range u.plan.Components {
				if !ready[c.Name] {
					failed = append(failed, componentFailure{name: c.Name, log: c.LogPath,
						reason: fmt.Sprintf("not ready after %s: %s", timeout, lastErr[c.Name])})
				}
			}
			return nil, u.failure(failed)
		case <-tick.C:
		}
	}
}

func notRunningReason(cs ComponentStatus) string {
	switch cs.State {
	case "", ChildWaiting:
		return "not started yet (it waits until the components before it are ready)"
	case ChildBackoff:
		return "exited (" + cs.LastExit + "); restarting"
	}
	return string(cs.State)
}

// componentFailure is one component that kept Up from finishing.
type componentFailure struct {
	name, reason, log string
}

// failure reports each failed component and builds the error with the
// tail of each one's log.
func (u *upRun) failure(failed []componentFailure) error {
	// The logs are read now: rollback may remove them with the state
	// directory this attempt created.
	var b strings.Builder
	for _, f := range failed {
		u.progress(f.name, "failed", f.reason)
		fmt.Fprintf(&b, "\n%s: %s\n--- last lines of its log (%s) ---\n%s", describe(f.name), f.reason,
			filepath.Base(f.log), tailLines(f.log, logTailLines))
	}
	return fmt.Errorf("%w: instance %s:%s", ErrNotReady, u.spec.Name, b.String())
}

// describe names a component for a message.
func describe(name string) string {
	switch name {
	case ComponentRedis, ComponentOrchestrator, ComponentSupervisor:
		return name
	}
	return fmt.Sprintf("agent %s (sett-cub)", name)
}

// rollback undoes a failed attempt: it stops the supervisor and anything
// left of its components, then removes what the attempt created. An
// earlier instance's Redis data, password and logs stay.
//
// It runs to the end even when ctx has ended (an interrupted `sett up`):
// only its own bound, DownTimeout, limits the wait.
func (u *upRun) rollback(ctx context.Context) {
	if u.supervisorPID != 0 {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), u.r.downTimeout()+5*time.Second)
		stopInstance(ctx, u.supervisorPID, u.sd, u.r.downTimeout())
		cancel()
	}
	for _, p := range []string{u.sd.planFile(), u.sd.statusFile(), u.sd.redisConf()} {
		_ = os.Remove(p)
	}
	if u.createdPassword {
		_ = os.Remove(u.sd.passwordFile())
	}
	for _, dir := range u.createdDirs {
		_ = os.RemoveAll(dir)
	}
}

// baseEnv is the caller's environment without SETT_* variables (except
// SETT_LOG_LEVEL): the components get exactly the settings Up chose, not
// whatever the shell that ran `sett up` had exported.
func baseEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "SETT_") && name != "SETT_LOG_LEVEL" {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// withEnv returns base with the variables of each map set (later maps
// win), replacing any entry of the same name, sorted for a stable plan.
func withEnv(base []string, sets ...map[string]string) []string {
	values := map[string]string{}
	var names []string
	for _, kv := range base {
		name, value, _ := strings.Cut(kv, "=")
		if _, dup := values[name]; !dup {
			names = append(names, name)
		}
		values[name] = value
	}
	for _, m := range sets {
		for name, value := range m {
			if _, dup := values[name]; !dup {
				names = append(names, name)
			}
			values[name] = value
		}
	}
	slices.Sort(names)
	out := make([]string, len(names))
	for i, name := range names {
		out[i] = name + "=" + values[name]
	}
	return out
}

// redactedHost is the host:port of a Redis URL, for display.
func redactedHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}
