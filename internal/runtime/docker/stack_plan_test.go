package docker

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/mount"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/api/types/system"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/runtime"
)

const planYAML = `version: "1.0"
agents:
  coder:
    image: example-writer:1
    command: ["sett-writer", "--type", "CodeChange"]
    workspace: {mode: rw}
    resources: {cpus: 1.5, memory: 256MiB}
  reviewer:
    image: example-reviewer:1
    bidding_strategy: review
`

func parseConfig(t *testing.T, yaml string) *config.Config {
	t.Helper()
	cfg, _, err := config.Parse([]byte(yaml), "sett.yml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func planFor(t *testing.T, yaml string) *stackPlan {
	t.Helper()
	p, err := newStackPlan(runtime.UpSpec{Name: "demo", Workspace: "/ws", ConfigPath: "/ws/sett.yml", Config: parseConfig(t, yaml)},
		planInput{User: "1000:1000", RedisPassword: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func env(s containerSpec, name string) (string, bool) {
	for _, kv := range s.Env {
		if k, v, _ := strings.Cut(kv, "="); k == name {
			return v, true
		}
	}
	return "", false
}

func TestStackPlanLaysOutTheInstance(t *testing.T) {
	p := planFor(t, planYAML)
	if p.Network != "sett-demo" || p.Volume != "sett-demo-redis" {
		t.Errorf("network %q, volume %q", p.Network, p.Volume)
	}
	var names []string
	for _, c := range p.containers() {
		names = append(names, c.Name)
	}
	want := []string{"sett-demo-redis", "sett-demo-agent-coder", "sett-demo-agent-reviewer", "sett-demo-orchestrator"}
	if !slices.Equal(names, want) {
		t.Errorf("containers %v, want %v (Redis, agents, orchestrator: the start order)", names, want)
	}
	const internalURL = "redis://:s3cret@sett-demo-redis:6379/0"
	if p.RedisURL != internalURL {
		t.Errorf("daemons' Redis URL %q, want %q", p.RedisURL, internalURL)
	}
	for _, c := range p.containers() {
		if c.Labels[LabelInstance] != "demo" || c.Labels[LabelWorkspace] != "/ws" || c.Labels[LabelComponent] != c.Component {
			t.Errorf("%s: labels %v", c.Name, c.Labels)
		}
		if c.Component == ComponentRedis {
			continue
		}
		if c.User != "1000:1000" || !c.DropCaps {
			t.Errorf("%s: user %q, drop caps %v", c.Name, c.User, c.DropCaps)
		}
		for name, want := range map[string]string{"SETT_CONFIG": "/etc/sett/sett.yml", "SETT_INSTANCE": "demo"} {
			if got, _ := env(c, name); got != want {
				t.Errorf("%s: %s=%q, want %q", c.Name, name, got, want)
			}
		}
		// Each daemon reaches Redis as its own ACL user, which the Redis
		// command line creates.
		user := "sett-demo-orchestrator"
		if c.Agent != "" {
			user = "sett-demo-cub-" + c.Agent
		}
		got, _ := env(c, "SETT_REDIS_URL")
		if !strings.HasPrefix(got, "redis://"+user+":") || !strings.HasSuffix(got, "@sett-demo-redis:6379/0") {
			t.Errorf("%s: SETT_REDIS_URL=%q, want user %s at sett-demo-redis:6379/0", c.Name, got, user)
		}
		if !slices.Contains(p.Redis.Cmd, user) {
			t.Errorf("redis command line %q does not create user %s", p.Redis.Cmd, user)
		}
		if !slices.Contains(c.Mounts, mount.Mount{Type: mount.TypeBind, Source: "/ws/sett.yml", Target: "/etc/sett/sett.yml", ReadOnly: true}) {
			t.Errorf("%s: sett.yml not mounted read-only: %+v", c.Name, c.Mounts)
		}
	}
}

func TestStackPlanAgents(t *testing.T) {
	p := planFor(t, planYAML)
	coder, reviewer := p.Agents[0], p.Agents[1]
	if coder.Agent != "coder" || coder.Labels[LabelAgent] != "coder" || coder.Port != "8081/tcp" {
		t.Errorf("coder: %+v", coder)
	}
	if !slices.Equal(coder.Cmd, []string{"sett-writer", "--type", "CodeChange"}) || reviewer.Cmd != nil {
		t.Errorf("commands: coder %v, reviewer %v (want the configured one, and none: the image's CMD)", coder.Cmd, reviewer.Cmd)
	}
	if coder.NanoCPUs != 1_500_000_000 || coder.Memory != 256<<20 || reviewer.NanoCPUs != 0 || reviewer.Memory != 0 {
		t.Errorf("limits: coder %d/%d, reviewer %d/%d", coder.NanoCPUs, coder.Memory, reviewer.NanoCPUs, reviewer.Memory)
	}
	for _, tc := range []struct {
		name     string
		s        containerSpec
		readOnly bool
	}{{"coder (rw)", coder, false}, {"reviewer (ro)", reviewer, true}} {
		t.Run(tc.name, func(t *testing.T) {
			var ws, mask bool
			for _, m := range tc.s.Mounts {
				switch m.Target {
				case "/workspace":
					ws = m.Type == mount.TypeBind && m.Source == "/ws" && m.ReadOnly == tc.readOnly
				case "/workspace/.sett":
					mask = m.Type == mount.TypeTmpfs && m.ReadOnly
				}
			}
			if !ws || !mask {
				t.Errorf("mounts %+v: workspace ok %v, .sett masked %v", tc.s.Mounts, ws, mask)
			}
			for name, want := range map[string]string{"SETT_AGENT": tc.s.Agent, "SETT_WORKSPACE": "/workspace",
				"SETT_HTTP_ADDR": ":8081", "SETT_CUB_CONSUMER": tc.s.Agent} {
				if got, _ := env(tc.s, name); got != want {
					t.Errorf("%s=%q, want %q", name, got, want)
				}
			}
		})
	}
	if p.CmdFromImage["reviewer"] != "example-reviewer:1" || len(p.CmdFromImage) != 1 {
		t.Errorf("agents whose command comes from the image: %v", p.CmdFromImage)
	}
	wantImages := map[string][]string{
		"example-writer:1":       {"agents.coder.image"},
		"example-reviewer:1":     {"agents.reviewer.image"},
		DefaultOrchestratorImage: {"the orchestrator image"},
		config.DefaultRedisImage: {"services.redis.image"},
	}
	for img, want := range wantImages {
		if !slices.Equal(p.Images[img], want) {
			t.Errorf("image %s used by %v, want %v", img, p.Images[img], want)
		}
	}
}

func TestStackPlanRedis(t *testing.T) {
	p := planFor(t, planYAML)
	r := p.Redis
	if r == nil || r.Image != config.DefaultRedisImage || r.Port != "6379/tcp" || r.User != "" {
		t.Fatalf("redis: %+v", r)
	}
	cmd := strings.Join(r.Cmd, " ")
	if !strings.Contains(cmd, "--requirepass s3cret") || !strings.Contains(cmd, "--appendonly yes") {
		t.Errorf("redis command %q", cmd)
	}
	if auth, _ := env(*r, "REDISCLI_AUTH"); auth != "s3cret" {
		t.Errorf("REDISCLI_AUTH=%q", auth)
	}
	if !slices.Contains(r.Mounts, mount.Mount{Type: mount.TypeVolume, Source: "sett-demo-redis", Target: "/data"}) {
		t.Errorf("redis mounts %+v", r.Mounts)
	}
}

func TestStackPlanExternalRedis(t *testing.T) {
	p := planFor(t, planYAML+`services:
  redis:
    url: redis://cache.internal:6379/2
    password: "p@ss word"
`)
	if p.Redis != nil || p.Volume != "" || p.RedisPassword != "" {
		t.Errorf("an external Redis starts nothing: %+v", p.Redis)
	}
	if p.RedisURL != "redis://:p%40ss%20word@cache.internal:6379/2" {
		t.Errorf("daemons' Redis URL %q: want the external one with the configured password", p.RedisURL)
	}
	if _, ok := p.Images[config.DefaultRedisImage]; ok {
		t.Error("the Redis image is checked although Redis is external")
	}
}

func TestStackPlanSentinelAndCluster(t *testing.T) {
	tests := []struct {
		name, yaml string
		wantEnv    map[string]string
	}{
		{"sentinel", `services:
  redis:
    password: data-pw
    username: sett
    sentinel: {master_name: main, addresses: ["sentinel-1:26379", "sentinel-2:26379"], password: sentinel-pw}
    tls: {enabled: true, ca_file: /etc/sett/ca.pem, cert_file: /etc/sett/client.pem, key_file: /etc/sett/client.key}
`, map[string]string{"SETT_REDIS_PASSWORD": "data-pw", "SETT_REDIS_USERNAME": "sett", "SETT_REDIS_SENTINEL_PASSWORD": "sentinel-pw"}},
		{"cluster", `services:
  redis:
    password: cluster-pw
    cluster: {addresses: ["redis-1:6379", "redis-2:6379"]}
    tls: {enabled: true, ca_file: /etc/sett/ca.pem, cert_file: /etc/sett/client.pem, key_file: /etc/sett/client.key}
`, map[string]string{"SETT_REDIS_PASSWORD": "cluster-pw"}},
	}
	tlsFiles := []string{"/etc/sett/ca.pem", "/etc/sett/client.pem", "/etc/sett/client.key"}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := planFor(t, planYAML+tc.yaml)
			if p.Redis != nil || p.Volume != "" || p.RedisURL != "" {
				t.Fatalf("an external %s starts no Redis and has no URL: redis %+v, url %q", tc.name, p.Redis, p.RedisURL)
			}
			for _, c := range append([]containerSpec{p.Orchestrator}, p.Agents...) {
				if u, ok := env(c, "SETT_REDIS_URL"); ok {
					t.Errorf("%s: SETT_REDIS_URL=%q beside the %s settings", c.Name, u, tc.name)
				}
				for k, want := range tc.wantEnv {
					if got, _ := env(c, k); got != want {
						t.Errorf("%s: %s=%q, want %q", c.Name, k, got, want)
					}
				}
				for _, f := range tlsFiles {
					if !slices.Contains(c.Mounts, mount.Mount{Type: mount.TypeBind, Source: f, Target: f, ReadOnly: true}) {
						t.Errorf("%s: TLS file %s not mounted read-only at its own path: %+v", c.Name, f, c.Mounts)
					}
				}
			}
		})
	}
}

func TestStackPlanRefusals(t *testing.T) {
	good := parseConfig(t, planYAML)
	tests := []struct {
		name string
		spec runtime.UpSpec
		in   planInput
		want string
	}{
		{"bad name", runtime.UpSpec{Name: "Bad_Name", Workspace: "/ws", ConfigPath: "/ws/sett.yml", Config: good}, planInput{RedisPassword: "x"}, "instance name"},
		{"no config", runtime.UpSpec{Name: "demo", Workspace: "/ws", ConfigPath: "/ws/sett.yml"}, planInput{RedisPassword: "x"}, "no configuration"},
		{"relative workspace", runtime.UpSpec{Name: "demo", Workspace: "ws", ConfigPath: "/ws/sett.yml", Config: good}, planInput{RedisPassword: "x"}, "absolute"},
		{"relative config", runtime.UpSpec{Name: "demo", Workspace: "/ws", ConfigPath: "sett.yml", Config: good}, planInput{RedisPassword: "x"}, "absolute"},
		{"no password", runtime.UpSpec{Name: "demo", Workspace: "/ws", ConfigPath: "/ws/sett.yml", Config: good}, planInput{}, "password"},
		{"external Redis on loopback", runtime.UpSpec{Name: "demo", Workspace: "/ws", ConfigPath: "/ws/sett.yml",
			Config: parseConfig(t, planYAML+"services:\n  redis:\n    url: redis://:pw@127.0.0.1:6379/0\n")}, planInput{}, "loopback"},
		{"external Redis on a Unix socket", runtime.UpSpec{Name: "demo", Workspace: "/ws", ConfigPath: "/ws/sett.yml",
			Config: parseConfig(t, planYAML+"services:\n  redis:\n    url: unix://:pw@/run/redis/redis.sock\n")}, planInput{}, "Unix socket on this host"},
		{"sentinel on loopback", runtime.UpSpec{Name: "demo", Workspace: "/ws", ConfigPath: "/ws/sett.yml",
			Config: parseConfig(t, planYAML+"services:\n  redis:\n    sentinel: {master_name: m, addresses: [\"127.0.0.1:26379\"]}\n")}, planInput{}, "sentinel.addresses: 127.0.0.1:26379 is a loopback address"},
		{"cluster with a relative TLS file", runtime.UpSpec{Name: "demo", Workspace: "/ws", ConfigPath: "/ws/sett.yml",
			Config: parseConfig(t, planYAML+"services:\n  redis:\n    cluster: {addresses: [\"redis-1:6379\"]}\n    tls: {enabled: true, ca_file: certs/ca.pem}\n")}, planInput{}, "tls.ca_file \"certs/ca.pem\" is a relative path"},
		{"agent without image", runtime.UpSpec{Name: "demo", Workspace: "/ws", ConfigPath: "/ws/sett.yml",
			Config: parseConfig(t, "version: \"1.0\"\nagents:\n  planner:\n    command: [x]\n")}, planInput{RedisPassword: "x"}, "agents.planner.image is empty"},
		{"agent named like a component", runtime.UpSpec{Name: "demo", Workspace: "/ws", ConfigPath: "/ws/sett.yml",
			Config: withAgent(parseConfig(t, planYAML), "redis", config.AgentConfig{Image: "x"})}, planInput{RedisPassword: "x"}, "agents.redis"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := newStackPlan(tc.spec, tc.in)
			if !errors.Is(err, ErrInvalidSpec) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want ErrInvalidSpec saying %q", err, tc.want)
			}
		})
	}
}

// withAgent adds an agent in code, past the file's validation (which
// reserves component names too).
func withAgent(cfg *config.Config, name string, a config.AgentConfig) *config.Config {
	cfg.Agents[name] = a
	return cfg
}

func TestCreateOptionsConfineTheContainer(t *testing.T) {
	p := planFor(t, planYAML)
	o := p.Agents[0].createOptions(p.Network)
	hc := o.HostConfig
	if o.Name != "sett-demo-agent-coder" || o.Config.Image != "example-writer:1" || o.Config.User != "1000:1000" {
		t.Errorf("create: %+v", o)
	}
	if hc.RestartPolicy.Name != container.RestartPolicyUnlessStopped || !slices.Equal(hc.SecurityOpt, []string{"no-new-privileges:true"}) ||
		!slices.Equal(hc.CapDrop, []string{"ALL"}) || string(hc.NetworkMode) != "sett-demo" {
		t.Errorf("host config: %+v", hc)
	}
	port := network.MustParsePort("8081/tcp")
	b := hc.PortBindings[port]
	if len(b) != 1 || b[0].HostIP.String() != "127.0.0.1" || b[0].HostPort != "" {
		t.Errorf("port bindings %v: want 8081 on a free loopback port", hc.PortBindings)
	}
	fixed := p.Agents[0]
	fixed.HostPort = "40001"
	if b := fixed.createOptions(p.Network).HostConfig.PortBindings[port]; len(b) != 1 || b[0].HostPort != "40001" {
		t.Errorf("port bindings with a host port: %v", b)
	}
	if _, ok := o.Config.ExposedPorts[port]; !ok {
		t.Errorf("exposed ports %v", o.Config.ExposedPorts)
	}
	if _, ok := o.NetworkingConfig.EndpointsConfig["sett-demo"]; !ok {
		t.Errorf("not on the instance network: %+v", o.NetworkingConfig)
	}
	if hc.NanoCPUs != 1_500_000_000 || hc.Memory != 256<<20 {
		t.Errorf("limits %d, %d", hc.NanoCPUs, hc.Memory)
	}
	redis := p.Redis.createOptions(p.Network)
	if redis.HostConfig.CapDrop != nil || redis.Config.User != "" {
		t.Errorf("Redis keeps its image's user and capabilities (the official image drops root itself): %+v", redis.HostConfig)
	}
	if a := redis.NetworkingConfig.EndpointsConfig["sett-demo"].Aliases; !slices.Equal(a, []string{"redis"}) {
		t.Errorf("redis aliases %v", a)
	}
}

func TestDaemonContainersGetAPidsLimitAndAReadOnlyRoot(t *testing.T) {
	p := planFor(t, planYAML)
	for _, s := range append(append([]containerSpec{}, p.Agents...), p.Orchestrator) {
		hc := s.createOptions(p.Network).HostConfig
		if hc.PidsLimit == nil || *hc.PidsLimit != config.DefaultPidsLimit || !hc.ReadonlyRootfs || hc.Tmpfs["/tmp"] == "" {
			t.Errorf("%s: pids limit %v, read-only root %v, tmpfs %v; want %d, true and /tmp", s.Name, hc.PidsLimit, hc.ReadonlyRootfs, hc.Tmpfs, config.DefaultPidsLimit)
		}
	}
	loose := planFor(t, planYAML+"services:\n  containers: {pids_limit: -1, writable_root: true}\n")
	hc := loose.Agents[0].createOptions(loose.Network).HostConfig
	if hc.PidsLimit != nil || hc.ReadonlyRootfs || hc.Tmpfs != nil {
		t.Errorf("with pids_limit -1 and writable_root: %v %v %v", hc.PidsLimit, hc.ReadonlyRootfs, hc.Tmpfs)
	}
}

func TestUnenforcedLimitsAreNamed(t *testing.T) {
	p := planFor(t, planYAML)
	if w := unenforcedLimits(system.Info{CPUCfsQuota: true, MemoryLimit: true, PidsLimit: true}, p); len(w) != 0 {
		t.Errorf("a daemon that enforces everything: %q", w)
	}
	w := unenforcedLimits(system.Info{CPUCfsQuota: true, MemoryLimit: false, PidsLimit: false}, p)
	if len(w) != 2 || !strings.Contains(w[0], "memory") || !strings.Contains(w[0], "coder") || !strings.Contains(w[1], "pids") || !strings.Contains(w[1], "orchestrator") {
		t.Errorf("warnings %q", w)
	}
}

// TestStackPlanEnvironmentFromHost: an agent's environment_from_host
// names are copied from the environment of `sett up` into that agent's
// container (where its cub hands them to the tool), a name `sett up` lacks
// is left out, and no other container gets them.
func TestStackPlanEnvironmentFromHost(t *testing.T) {
	host := map[string]string{"OPENAI_API_KEY": "sk-1", "ANTHROPIC_API_KEY": "sk-2"}
	yaml := strings.Replace(planYAML, "    workspace: {mode: rw}\n",
		"    workspace: {mode: rw}\n    environment_from_host: [OPENAI_API_KEY, NOT_SET]\n", 1)
	p, err := newStackPlan(runtime.UpSpec{Name: "demo", Workspace: "/ws", ConfigPath: "/ws/sett.yml", Config: parseConfig(t, yaml)},
		planInput{User: "1000:1000", RedisPassword: "s3cret", LookupEnvFunc: func(k string) (string, bool) {
			v, ok := host[k]
			return v, ok
		}})
	if err != nil {
		t.Fatal(err)
	}
	coder, reviewer := p.Agents[0], p.Agents[1]
	if v, ok := env(coder, "OPENAI_API_KEY"); !ok || v != "sk-1" {
		t.Errorf("coder's OPENAI_API_KEY = %q (set %v), want sk-1", v, ok)
	}
	for _, s := range []containerSpec{coder, reviewer, p.Orchestrator} {
		for _, k := range []string{"NOT_SET", "ANTHROPIC_API_KEY"} {
			if _, ok := env(s, k); ok {
				t.Errorf("%s has %s", s.Name, k)
			}
		}
	}
	if _, ok := env(reviewer, "OPENAI_API_KEY"); ok {
		t.Error("reviewer, which lists nothing, has OPENAI_API_KEY")
	}
}
