package docker

import (
	"cmp"
	"fmt"
	"net/netip"
	"net/url"
	"path/filepath"
	"sort"
	"strings"

	"github.com/moby/moby/api/types/mount"

	"github.com/settdev/sett/internal/acl"
	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/runtime"
	"github.com/settdev/sett/internal/worker"
)

// stackPlan is everything Up creates for an instance, decided before
// anything is created. newStackPlan is pure: no Docker, no files.
type stackPlan struct {
	Instance  string
	Workspace string
	Network   string
	// Volume is the Redis data volume; "" with an external Redis.
	Volume string
	// RedisURL is the URL the daemons use: the Redis container on the
	// instance network, or services.redis.url; with the password.
	RedisURL string
	// People are the human's and the reader's ACL users (name, password)
	// of the Redis the runtime starts, for the record.
	People map[acl.Role][2]string
	// RedisPassword is the password of the Redis Up starts; "" with an
	// external Redis.
	RedisPassword string
	// Redis is nil with an external Redis.
	Redis        *containerSpec
	Agents       []containerSpec // sorted by agent name
	Orchestrator containerSpec
	// Images maps each image to the settings that name it, for messages.
	Images map[string][]string
	// CmdFromImage maps each agent without a configured command to its
	// image, whose CMD must then give the tool command.
	CmdFromImage map[string]string
}

// planInput is what newStackPlan needs besides the UpSpec.
type planInput struct {
	OrchestratorImage string
	// User runs the orchestrator and the agents ("uid:gid").
	User string
	// OrchestratorUser replaces User for the orchestrator alone: the
	// vault's owner (see planVaultOwner). Empty: User.
	OrchestratorUser string
	// RedisPassword is the password for the Redis Up starts.
	RedisPassword string
	// DockerSocket is the host's Docker socket, handed to controller
	// agents (and to no other container); zero when there are none.
	DockerSocket dockerSocket
	// LookupEnvFunc reads the environment of `sett up` for the agents'
	// environment_from_host names (os.LookupEnv); nil passes none.
	LookupEnvFunc func(string) (string, bool)
}

// newStackPlan checks spec and lays out the instance. Errors wrap
// ErrInvalidSpec and name the setting to fix.
func newStackPlan(spec runtime.UpSpec, in planInput) (*stackPlan, error) {
	if err := blackboard.ValidateInstance(spec.Name); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidSpec, err)
	}
	cfg := spec.Config
	if cfg == nil {
		return nil, fmt.Errorf("%w: no configuration", ErrInvalidSpec)
	}
	if !filepath.IsAbs(spec.Workspace) {
		return nil, fmt.Errorf("%w: the workspace %q is not an absolute path", ErrInvalidSpec, spec.Workspace)
	}
	if !filepath.IsAbs(spec.ConfigPath) {
		return nil, fmt.Errorf("%w: the configuration path %q is not an absolute path", ErrInvalidSpec, spec.ConfigPath)
	}
	if len(cfg.Agents) == 0 {
		return nil, fmt.Errorf("%w: sett.yml defines no agents", ErrInvalidSpec)
	}
	workspace := filepath.Clean(spec.Workspace)
	p := &stackPlan{
		Instance:     spec.Name,
		Workspace:    workspace,
		Network:      networkName(spec.Name),
		Images:       map[string][]string{},
		CmdFromImage: map[string]string{},
	}
	use := func(image, setting string) { p.Images[image] = append(p.Images[image], setting) }

	configMount := mount.Mount{Type: mount.TypeBind, Source: filepath.Clean(spec.ConfigPath),
		Target: containerConfigPath, ReadOnly: true}
	common := func(component, agent string) map[string]string {
		l := baseLabels(spec.Name, workspace)
		l[LabelComponent] = component
		if agent != "" {
			l[LabelAgent] = agent
		}
		return l
	}

	componentURL := map[string]string{}
	var redisEnv []string         // how the daemons reach Redis
	var redisMounts []mount.Mount // the TLS files of an external Redis
	if t := cfg.Services.Redis.Topology(); t == "sentinel" || t == "cluster" {
		var err error
		if redisEnv, redisMounts, err = externalTopology(cfg.Services.Redis); err != nil {
			return nil, err
		}
	} else if ext := cfg.Services.Redis.URL; ext != "" {
		if strings.HasPrefix(ext, "unix://") {
			return nil, fmt.Errorf("%w: services.redis.url %s is a Unix socket on this host, which the containers cannot reach: use a redis:// address the containers reach, leave services.redis.url empty to let sett up start Redis, or run `sett up --runtime local`",
				ErrInvalidSpec, redactURL(ext))
		}
		if isLoopback(ext) {
			return nil, fmt.Errorf("%w: services.redis.url %s is a loopback address, which inside the containers is the container itself: use an address the containers reach, or leave services.redis.url empty to let sett up start Redis",
				ErrInvalidSpec, redactURL(ext))
		}
		p.RedisURL = cfg.Services.Redis.ConnectURL()
	} else {
		if in.RedisPassword == "" {
			return nil, fmt.Errorf("%w: no Redis password", ErrInvalidSpec)
		}
		p.Volume = volumeName(spec.Name)
		p.RedisPassword = in.RedisPassword
		name := redisContainer(spec.Name)
		p.RedisURL = (&url.URL{Scheme: "redis", User: url.UserPassword("", in.RedisPassword),
			Host: name + ":6379", Path: "/0"}).String()
		image := cfg.Services.Redis.Image
		if image == "" {
			image = config.DefaultRedisImage
		}
		use(image, "services.redis.image")
		userArgs, urls, people, err := aclUsers(spec.Name, cfg.Services.Redis.HashTag, cfg.AgentNames(), name+":6379")
		if err != nil {
			return nil, err
		}
		componentURL = urls
		p.People = people
		p.Redis = &containerSpec{
			Name: name, Component: ComponentRedis, Image: image,
			// The same command line works for the official image (its
			// entrypoint recognises redis-server) and for sett-redis:local.
			// The instance's ACL users (package acl) follow: each daemon
			// gets its own; the default user stays for the CLI and the
			// healthcheck.
			Cmd: append([]string{"redis-server", "--appendonly", "yes", "--requirepass", in.RedisPassword,
				"--dir", containerRedisData}, userArgs...),
			// redis-cli reads REDISCLI_AUTH: an image HEALTHCHECK that runs
			// `redis-cli ping` (sett-redis:local has one) authenticates.
			Env:     []string{"REDISCLI_AUTH=" + in.RedisPassword},
			Mounts:  []mount.Mount{{Type: mount.TypeVolume, Source: p.Volume, Target: containerRedisData}},
			Port:    redisPort,
			Labels:  common(ComponentRedis, ""),
			Aliases: []string{ComponentRedis},
		}
	}

	// Agents and the orchestrator: a pids limit, and a read-only root with
	// a writable /tmp (the tools' HOME) unless services.containers says
	// otherwise.
	hardened := func(c containerSpec) containerSpec {
		c.PidsLimit = cfg.Services.Containers.EffectivePidsLimit()
		if !cfg.Services.Containers.WritableRoot {
			c.ReadOnlyRoot = true
			c.Tmpfs = map[string]string{"/tmp": "rw,nosuid,nodev,size=256m,mode=1777"}
		}
		return c
	}

	daemonEnv := []string{
		"SETT_CONFIG=" + containerConfigPath,
		"SETT_INSTANCE=" + spec.Name,
		"SETT_LOG_FORMAT=json",
	}
	if p.RedisURL != "" {
		daemonEnv = append(daemonEnv, "SETT_REDIS_URL="+p.RedisURL)
	}
	daemonEnv = append(daemonEnv, redisEnv...)

	for _, name := range cfg.AgentNames() {
		a := cfg.Agents[name]
		if name == ComponentRedis || name == ComponentOrchestrator {
			return nil, fmt.Errorf("%w: agents.%s: the name %q is taken by a component of the instance: rename the agent", ErrInvalidSpec, name, name)
		}
		if a.Image == "" {
			return nil, fmt.Errorf("%w: agents.%s.image is empty: the docker runtime runs every agent from an image (see images/README.md), or use `sett up --runtime local`", ErrInvalidSpec, name)
		}
		use(a.Image, "agents."+name+".image")
		if a.IsController() {
			use(a.Worker.Image, "agents."+name+".worker.image")
		} else if len(a.Command) == 0 {
			p.CmdFromImage[name] = a.Image
		}
		mode := a.Workspace.Mode
		if mode == "" {
			mode = config.DefaultWorkspaceMode
		}
		env := append(withRedisURL(append([]string{}, daemonEnv...), componentURL[name]),
			"SETT_AGENT="+name,
			"SETT_WORKSPACE="+containerWorkspacePath,
			"SETT_HTTP_ADDR=:8081",
			// A stable consumer name: a recreated container takes over the
			// inbox entries its predecessor left pending.
			"SETT_CUB_CONSUMER="+name,
			// Tools may run as a user the image does not know; give them a
			// writable home.
			"HOME=/tmp",
		)
		// The cub hands these on to its tool (environment_from_host); a
		// name `sett up` does not have is left out, as the cub would.
		for _, k := range a.EnvironmentFromHost {
			if in.LookupEnvFunc == nil {
				break
			}
			if v, ok := in.LookupEnvFunc(k); ok {
				env = append(env, k+"="+v)
			}
		}
		p.Agents = append(p.Agents, hardened(containerSpec{
			Name: agentContainer(spec.Name, name), Component: ComponentAgent, Agent: name,
			Image: a.Image, Cmd: a.Command, Env: env, User: in.User,
			Mounts: append([]mount.Mount{
				{Type: mount.TypeBind, Source: workspace, Target: containerWorkspacePath,
					ReadOnly: mode != config.WorkspaceReadWrite},
				// The workspace's .sett holds the instance records, whose
				// Redis URL carries the password: tools must not see it.
				// (The daemon gives the tmpfs the mode and owner of the
				// directory it covers.)
				{Type: mount.TypeTmpfs, Target: containerWorkspacePath + "/.sett", ReadOnly: true,
					TmpfsOptions: &mount.TmpfsOptions{SizeBytes: 64 << 10}},
				configMount,
			}, redisMounts...),
			Port:     cubPort,
			NanoCPUs: int64(a.Resources.CPUs * 1e9),
			Memory:   a.Resources.Memory.Int64(),
			DropCaps: true,
			Labels:   common(ComponentAgent, name),
		}))
	}

	image := in.OrchestratorImage
	if image == "" {
		image = DefaultOrchestratorImage
	}
	use(image, "the orchestrator image")
	p.Orchestrator = hardened(containerSpec{
		Name: orchestratorContainer(spec.Name), Component: ComponentOrchestrator, Image: image,
		Env:    append(withRedisURL(append([]string{}, daemonEnv...), componentURL[ComponentOrchestrator]), "SETT_HTTP_ADDR=:8080"),
		User:   cmp.Or(in.OrchestratorUser, in.User),
		Mounts: append([]mount.Mount{configMount}, redisMounts...),
		Port:   orchestratorPort, DropCaps: true,
		Labels: common(ComponentOrchestrator, ""),
	})
	if vp := cfg.Vault.ResolvedPath(filepath.Dir(filepath.Clean(spec.ConfigPath))); vp != "" {
		// The vault is the orchestrator's alone (its bridge is the one
		// writer); agents never see it. The orchestrator runs as in.User,
		// the workspace's owner, so the files it writes stay the person's.
		p.Orchestrator.Mounts = append(p.Orchestrator.Mounts, mount.Mount{Type: mount.TypeBind, Source: vp, Target: containerVaultPath})
		p.Orchestrator.Env = append(p.Orchestrator.Env, "SETT_VAULT_PATH="+containerVaultPath)
		// A vault inside the workspace is hidden from the agents' view of
		// it, as .sett is.
		if rel, err := filepath.Rel(workspace, vp); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			for i := range p.Agents {
				p.Agents[i].Mounts = append(p.Agents[i].Mounts, mount.Mount{Type: mount.TypeTmpfs,
					Target: containerWorkspacePath + "/" + filepath.ToSlash(rel), ReadOnly: true,
					TmpfsOptions: &mount.TmpfsOptions{SizeBytes: 64 << 10}})
			}
		}
	}
	if err := p.planControllers(cfg, in); err != nil {
		return nil, err
	}
	for img := range p.Images {
		sort.Strings(p.Images[img])
	}
	return p, nil
}

// planControllers turns the containers of controller agents into worker
// launchers: the tool command is sett-worker with the worker container's
// whole spec, and the container alone gets the Docker socket. It runs last,
// once every mount of the agents is known: a worker hides what its
// controller's view of the workspace hides.
func (p *stackPlan) planControllers(cfg *config.Config, in planInput) error {
	for i := range p.Agents {
		c := &p.Agents[i]
		a, _ := cfg.Agent(c.Agent)
		if !a.IsController() {
			continue
		}
		if in.DockerSocket.Path == "" {
			return fmt.Errorf("%w: agents.%s runs in mode: controller but no Docker socket was found to hand to it", ErrInvalidSpec, c.Agent)
		}
		ws := worker.Spec{
			Image:             a.Worker.Image,
			Command:           a.WorkerCommand(),
			User:              c.User,
			Network:           p.Network,
			Workspace:         p.Workspace,
			WorkspaceTarget:   containerWorkspacePath,
			WorkspaceReadOnly: a.Workspace.Mode != config.WorkspaceReadWrite,
			NanoCPUs:          c.NanoCPUs,
			Memory:            c.Memory,
			PidsLimit:         c.PidsLimit,
			ReadOnlyRoot:      c.ReadOnlyRoot,
			Labels: map[string]string{LabelInstance: p.Instance, LabelWorkspace: p.Workspace,
				LabelComponent: ComponentWorker, LabelAgent: c.Agent},
			NamePrefix:  c.Name + "-worker",
			StopTimeout: worker.StopTimeoutFor(a.StopGrace.Std()),
			DockerHost:  "unix://" + containerDockerSocket,
			MaxOutput:   a.MaxOutputBytes.Int64(),
		}
		for _, m := range c.Mounts {
			if m.Type == mount.TypeTmpfs && strings.HasPrefix(m.Target, containerWorkspacePath+"/") {
				ws.Masks = append(ws.Masks, m.Target)
			}
		}
		// The cub of a controller agent takes its tool command from its
		// arguments (cub.ConfigFrom leaves Command empty in this mode).
		c.Cmd = append([]string{launcherPath}, ws.Args()...)
		// The container starts with a sweep that removes the workers a
		// killed predecessor (a restart after the cub died) left running,
		// then execs the cub: a claim re-granted here never runs in two
		// workers at once.
		sweep := worker.Sweep{Labels: ws.Labels, DockerHost: ws.DockerHost, Exec: []string{cubPath}}
		c.Entrypoint = append([]string{launcherPath}, sweep.Args()...)
		// The narrow mount: the socket file only (not its directory),
		// only here. Read-only keeps the file from being replaced; it
		// does not limit the API, which is root-equivalent on the host.
		c.Mounts = append(c.Mounts, mount.Mount{Type: mount.TypeBind, Source: in.DockerSocket.Path,
			Target: containerDockerSocket, ReadOnly: true})
		c.GroupAdd = []string{in.DockerSocket.Group}
	}
	return nil
}

// containers lists every container of the plan: Redis, the agents, the
// orchestrator — the order Up starts them in.
func (p *stackPlan) containers() []containerSpec {
	var out []containerSpec
	if p.Redis != nil {
		out = append(out, *p.Redis)
	}
	out = append(out, p.Agents...)
	return append(out, p.Orchestrator)
}

// imageNames returns the images of the plan, sorted.
func (p *stackPlan) imageNames() []string {
	out := make([]string, 0, len(p.Images))
	for img := range p.Images {
		out = append(out, img)
	}
	sort.Strings(out)
	return out
}

// isLoopback reports whether a Redis URL names this host's loopback.
// externalTopology checks an external Sentinel set or Cluster for the
// containers and returns what every daemon gets: its credentials (as
// `sett up` resolved them, file and environment) and a read-only mount of
// each TLS file at the same path, so that the sett.yml they read names
// files that exist inside the container. Errors wrap ErrInvalidSpec.
func externalTopology(r config.RedisConfig) ([]string, []mount.Mount, error) {
	key, addrs := "services.redis.cluster.addresses", r.Cluster.Addresses
	if r.Topology() == "sentinel" {
		key, addrs = "services.redis.sentinel.addresses", r.Sentinel.Addresses
	}
	for _, a := range addrs {
		if isLoopback("redis://" + a) {
			return nil, nil, fmt.Errorf("%w: %s: %s is a loopback address, which inside the containers is the container itself: name the Redis hosts by an address the containers reach (see docs/redis.md, \"Docker runtime\"), or run `sett up --runtime local`",
				ErrInvalidSpec, key, a)
		}
	}
	var env []string
	for _, kv := range [][2]string{{config.EnvRedisPassword, r.Password}, {config.EnvRedisUsername, r.Username},
		{config.EnvRedisSentinelPassword, r.Sentinel.Password}} {
		if kv[1] != "" {
			env = append(env, kv[0]+"="+kv[1])
		}
	}
	var mounts []mount.Mount
	for _, f := range [][2]string{{"ca_file", r.TLS.CAFile}, {"cert_file", r.TLS.CertFile}, {"key_file", r.TLS.KeyFile}} {
		if f[1] == "" {
			continue
		}
		if !filepath.IsAbs(f[1]) {
			return nil, nil, fmt.Errorf("%w: services.redis.tls.%s %q is a relative path: the docker runtime mounts each TLS file into the containers at its own path, so write it absolute", ErrInvalidSpec, f[0], f[1])
		}
		mounts = append(mounts, mount.Mount{Type: mount.TypeBind, Source: filepath.Clean(f[1]), Target: filepath.Clean(f[1]), ReadOnly: true})
	}
	return env, mounts, nil
}

func isLoopback(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil {
		return false
	}
	host := u.Hostname()
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// redactURL drops the password from a URL for messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// hostRedisURL is the URL of the instance's Redis from the host, through
// its published loopback port.
func hostRedisURL(password, hostPort string) string {
	return (&url.URL{Scheme: "redis", User: url.UserPassword("", password),
		Host: "127.0.0.1:" + hostPort, Path: "/0"}).String()
}

// settingsList joins settings for a message: "a, b and c".
func settingsList(s []string) string {
	switch len(s) {
	case 0:
		return ""
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " and " + s[len(s)-1]
}
