package config

import (
	"net/url"
	"slices"
	"sort"
)

// Config is the decoded content of sett.yml. After Parse or Load it has its
// defaults applied and has passed Validate.
//
// The zero Config is not valid (it has no version and no agents); Default
// returns one with every default filled in. Config is plain data: safe for
// concurrent reads, not for concurrent writes.
type Config struct {
	// Version of the file format. Required; only "1.0" is accepted.
	Version string `yaml:"version"`

	// Instance is the instance name, a DNS label
	// (^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$). Empty: the CLI derives one.
	// Overridden by SETT_INSTANCE.
	Instance string `yaml:"instance"`

	// Orchestrator tunes the claim engine. The whole section is optional.
	Orchestrator OrchestratorConfig `yaml:"orchestrator"`

	// Agents maps each agent name (^[a-z0-9][a-z0-9_-]{0,62}$) to its
	// configuration. At least one agent is required.
	Agents map[string]AgentConfig `yaml:"agents"`

	// Approvals names the outputs that wait for a human decision.
	Approvals ApprovalsConfig `yaml:"approvals"`

	// Escalation is the optional hook run when a workflow is escalated.
	Escalation EscalationConfig `yaml:"escalation"`

	// Vault is the optional human-facing vault.
	Vault VaultConfig `yaml:"vault"`
	// Retention bounds how much history Redis keeps.
	Retention RetentionConfig `yaml:"retention"`

	// Services configures the services the instance runs on.
	Services ServicesConfig `yaml:"services"`

	// Isolation is how the local runtime isolates tools: "sandbox"
	// (default) or "none" (tools run unisolated; only by explicit
	// choice). See docs/security.md.
	Isolation Isolation `yaml:"isolation"`
	// ToolUID is the uid and gid a tool runs as when Sett runs as root
	// (local runtime, sandbox isolation). Default 65532; must be > 0.
	ToolUID int `yaml:"tool_uid"`

	// src remembers where each value came from, for messages; nil for a
	// Config built in code.
	src *source
}

// OrchestratorConfig tunes the orchestrator. In a file every key is
// optional; a missing key takes its default. In code a zero field takes its
// default when ApplyDefaults runs.
type OrchestratorConfig struct {
	// MaxReviewIterations is how many times a rejected artefact goes back to
	// its author before the workflow fails. Default 3 (nil); 0 means
	// unlimited, which is valid but produces a warning. Read it with
	// ReviewIterationLimit. A pointer, so that an explicit 0 differs from a
	// missing key.
	MaxReviewIterations *int `yaml:"max_review_iterations"`

	// BidTimeout is how long the orchestrator collects bids on a claim.
	// Default 5s; must be > 0.
	BidTimeout Duration `yaml:"bid_timeout"`

	// NoBidTimeout is how long past bid_timeout a claim keeps asking for
	// the answers it still needs — no agent bid for work while configured
	// consumers have not answered (down, frozen, partitioned, Redis
	// unreachable), or a required reviewer, or too few reviewers — before
	// it fails naming the agents that never answered. Bids are requested
	// again meanwhile, bid_timeout apart, doubling up to 30s. Default 5m;
	// must be > 0.
	NoBidTimeout Duration `yaml:"no_bid_timeout"`

	// LeaseTTL is the time to live of a work lease; the cub renews it every
	// third of it, and a lease that expires is lost. Default 30s; must be
	// at least 1s.
	LeaseTTL Duration `yaml:"lease_ttl"`

	// MaxGrantAttempts is how many times a grant whose lease was lost is
	// granted again before the claim fails. Default 2; must be at least 1.
	MaxGrantAttempts int `yaml:"max_grant_attempts"`

	// DeadLetterAfter is how many failed handlings in a row move an
	// orchestrator event to the dead-letter stream (shown by sett errors)
	// instead of retrying it forever. Default 5; must be at least 1.
	DeadLetterAfter int `yaml:"dead_letter_after"`

	// ReconcileRate bounds the claims per second the reconciler's
	// safety-net sweep reads, off the live-event path. Default 50; must
	// be at least 1.
	ReconcileRate int `yaml:"reconcile_rate"`

	// MaxWorkflowArtefacts caps the number of artefacts in one workflow.
	// Default 500; must be at least 1.
	MaxWorkflowArtefacts int `yaml:"max_workflow_artefacts"`

	// MaxChainDepth caps the length of a chain of artefacts (each derived
	// from the previous) in one workflow. Default 25; must be at least 1.
	MaxChainDepth int `yaml:"max_chain_depth"`

	// MaxPayloadBytes caps the payload of one artefact. Default 1MiB; must
	// be between 1KiB and 64MiB.
	MaxPayloadBytes ByteSize `yaml:"max_payload_bytes"`

	// AgentHeartbeatTTL is how long an agent counts as alive after its last
	// heartbeat. Default 10s; must be at least 1s.
	AgentHeartbeatTTL Duration `yaml:"agent_heartbeat_ttl"`

	// HTTPAddr is the listen address (host:port) for /healthz, /readyz and
	// /metrics. Default ":8080" (all interfaces, port 8080).
	HTTPAddr string `yaml:"http_addr"`

	// MaxConcurrentClaims caps how many claims hold grants at once across
	// the instance; further grants wait and are released highest priority
	// first, oldest workflow first. Default 0: no limit.
	MaxConcurrentClaims int `yaml:"max_concurrent_claims"`

	// DecideRuleBids makes the orchestrator record, when it creates a
	// claim (or starts consensus on a claim a person approved), the claim
	// and exclusive bids that live agents' rules decide (agents without a
	// bid_script that are not reviewers), instead of sending those agents
	// bid requests that they would answer from the same rules. Each asked agent costs Redis a request, a wake-up and a
	// submit_bid script per claim (about 115 µs of Redis CPU each,
	// measured by make bench's scale-agents step): with 100 agents
	// consuming a type, asking made a claim cost 10 to 15 times more.
	// Default true. The trade-off: an agent that still heartbeats but no
	// longer works is granted the work instead of being passed over for
	// its missing bid; the lease check finds the grant it never takes
	// (lease_ttl plus 0.5s after delivery), grants it again, and after
	// max_grant_attempts fails the claim and its workflow naming the agent
	// (about 61s with the defaults), even when another agent could have
	// done the work. false asks every live consumer: a silent one is
	// passed over after bid_timeout when another bid for the same work,
	// and otherwise asked again until no_bid_timeout.
	DecideRuleBids bool `yaml:"decide_rule_bids"`

	// MaxWorkflowTokens caps the model tokens (input plus output, as the
	// tools report them in usage) one workflow may spend; once its total
	// passes it, the workflow fails with a BudgetExceeded Failure. Default
	// 0: no limit.
	MaxWorkflowTokens int64 `yaml:"max_workflow_tokens"`

	// Learner names the agent whose tool turns each human rejection into
	// one learning (claim type "learn"). Empty: the human's
	// reason is the learning. A dedicated learner usually has
	// bidding_strategy ignore, so it only ever gets learn claims.
	Learner string `yaml:"learner"`

	// ReviewPolicy decides each review phase.
	ReviewPolicy ReviewPolicyConfig `yaml:"review_policy"`

	// ReviewClusters are named review policies, each deciding the review
	// phases of the artefact types it lists (several review clusters in one
	// pipeline). Types no cluster lists keep ReviewPolicy. Default: none.
	ReviewClusters map[string]*ReviewClusterConfig `yaml:"review_clusters"`

	// Priority scores goals so that urgent work is granted first.
	Priority PriorityConfig `yaml:"priority"`
}

// ReviewIterationLimit returns MaxReviewIterations as a plain int: the
// default (3) when it is unset, and 0 for unlimited.
func (o OrchestratorConfig) ReviewIterationLimit() int {
	if o.MaxReviewIterations == nil {
		return DefaultMaxReviewIterations
	}
	return *o.MaxReviewIterations
}

// AgentConfig configures one agent. In a file every key is optional.
type AgentConfig struct {
	// Name is the agent's key in the agents map. It is not read from the
	// file; ApplyDefaults and Config.Agent fill it in.
	Name string `yaml:"-"`

	// Role names what the agent does; several agents can share a role.
	// Default (empty): the agent name.
	Role string `yaml:"role"`

	// Image is the container image for the Docker runtime. Empty is
	// allowed here (the local runtime needs none); the CLI checks what its
	// runtime requires.
	Image string `yaml:"image"`

	// Command is the tool's command line (argv). Empty: the Docker runtime
	// runs the image's CMD; the CLI checks what its runtime requires.
	Command []string `yaml:"command"`

	// BiddingStrategy is how the agent bids on claims it consumes: review,
	// claim (parallel), exclusive or ignore. Default exclusive.
	BiddingStrategy BiddingStrategy `yaml:"bidding_strategy"`

	// Consumes lists the artefact types the agent bids on, as path.Match
	// glob patterns ("Plan", "Code*"). Empty: every type.
	Consumes []string `yaml:"consumes"`

	// BidOnOwnOutputs lets the agent bid on artefacts it produced itself.
	// Default false.
	BidOnOwnOutputs bool `yaml:"bid_on_own_outputs"`

	// BidScript is an optional command (argv) the cub runs to decide each
	// bid. Empty: the agent always bids its BiddingStrategy.
	BidScript []string `yaml:"bid_script"`

	// BidScriptTimeout bounds one run of BidScript. Default 5s; must be
	// > 0.
	BidScriptTimeout Duration `yaml:"bid_script_timeout"`

	// Workspace says how the tool sees the workspace.
	Workspace WorkspaceConfig `yaml:"workspace"`

	// Environment is added to the tool's environment. Keys must match
	// ^[A-Za-z_][A-Za-z0-9_]*$, must not start with SETT_ (reserved) and
	// must not mention REDIS: tools never get Redis credentials. Empty:
	// nothing is added.
	Environment map[string]string `yaml:"environment"`

	// EnvironmentFromHost names variables of the cub's own environment
	// that reach the tool (and the bid script) unchanged, e.g.
	// [OPENAI_API_KEY] set in the cub's container from a Kubernetes
	// Secret. Names follow the rules of Environment's keys. A name the
	// cub's environment lacks is left out. Everything else stays scrubbed
	// (PATH, HOME, LANG, LC_ALL, TZ and TMPDIR always pass). The Docker
	// runtime copies these variables from the environment of `sett up`
	// into the agent's container. Empty: nothing passes.
	EnvironmentFromHost []string `yaml:"environment_from_host"`

	// Timeout bounds one run of the tool. Default 10m; must be > 0.
	Timeout Duration `yaml:"timeout"`

	// StopGrace is how long a tool that is stopped (its timeout passed,
	// its workflow was cancelled, its lease was lost) gets between SIGTERM
	// and SIGKILL of its process group. Default 10s; 0 kills at once.
	StopGrace Duration `yaml:"stop_grace"`

	// DrainTimeout is how long a cub told to stop (SIGTERM: a rollout, a
	// node drain) keeps its running tools going so they can finish and
	// deliver; it takes no new work meanwhile. Tools still running then
	// are stopped (with StopGrace) and their leases released. Keep it
	// plus StopGrace below the time the platform waits before SIGKILL
	// (Kubernetes' terminationGracePeriodSeconds, `docker stop -t`).
	// Overridden by the cub's SETT_DRAIN_TIMEOUT. Default 0: tools are
	// stopped at once.
	DrainTimeout Duration `yaml:"drain_timeout"`

	// MaxConcurrent is how many claims the agent works on at once.
	// Default 1; must be at least 1.
	MaxConcurrent int `yaml:"max_concurrent"`

	// MaxTokensPerClaim caps the model tokens (input plus output) one run
	// of the agent's tool may report; a run that reports more fails
	// permanently (no retry). Default 0: no limit.
	MaxTokensPerClaim int64 `yaml:"max_tokens_per_claim"`

	// MaxOutputBytes caps what the cub reads from the tool's stdout, and
	// separately from its stderr. Default 4MiB; must be at least 1KiB.
	MaxOutputBytes ByteSize `yaml:"max_output_bytes"`

	// Resources limits the agent's container.
	Resources ResourcesConfig `yaml:"resources"`

	// Review says how the agent's reviews count.
	Review ReviewConfig `yaml:"review"`

	// Retry says how failed runs of the agent's tool are retried.
	Retry RetryConfig `yaml:"retry"`

	// Mode is "" (the cub runs the tool itself) or controller (the cub
	// runs each granted claim in a fresh worker container).
	// Default "".
	Mode AgentMode `yaml:"mode"`

	// Worker configures the worker containers of a controller agent; it
	// must stay empty otherwise. See worker.go.
	Worker WorkerConfig `yaml:"worker"`
}

// WorkspaceConfig says how an agent's tool sees the workspace.
type WorkspaceConfig struct {
	// Mode is ro (read-only) or rw (read-write). Default ro.
	Mode WorkspaceMode `yaml:"mode"`
}

// ResourcesConfig limits an agent's container. The zero value sets no
// limits.
type ResourcesConfig struct {
	// CPUs is the number of CPUs, fractions allowed (0.5). 0 means no
	// limit; must be >= 0.
	CPUs float64 `yaml:"cpus"`

	// Memory is the memory limit. 0 means no limit; otherwise at least
	// 6MiB (the smallest limit Docker accepts).
	Memory ByteSize `yaml:"memory"`
}

// ServicesConfig configures the services an instance runs on.
type ServicesConfig struct {
	// Redis is the blackboard's Redis.
	Redis RedisConfig `yaml:"redis"`
	// Containers says how the Docker runtime runs the orchestrator and
	// agent containers (user, pids limit, read-only root).
	Containers ContainersConfig `yaml:"containers"`
}

// RedisConfig says which Redis the instance uses.
type RedisConfig struct {
	// Image is the Redis image the Docker runtime starts. Default
	// "sett-redis:local" (built by make images).
	Image string `yaml:"image"`

	// URL of an external Redis (redis://, rediss:// for TLS, or
	// unix:///path/to/redis.sock for a socket on the same host). Empty: the
	// runtime starts its own Redis. Overridden by SETT_REDIS_URL.
	URL string `yaml:"url"`

	// Password for Redis AUTH. Empty: the Docker runtime generates one for
	// the Redis it starts. Overridden by SETT_REDIS_PASSWORD; prefer the
	// variable over writing a password into the file.
	Password string `yaml:"password"`

	// HashTag wraps the instance in a Redis Cluster hash tag so that all of
	// an instance's keys live in one slot (sett:{instance}:...). Default
	// false, but true with a cluster (which refuses false). Overridden by
	// SETT_HASH_TAG.
	HashTag bool `yaml:"hash_tag"`

	// Username is the ACL user for Redis AUTH. Empty: the URL's user, or
	// the default user. Overridden by SETT_REDIS_USERNAME.
	Username string `yaml:"username"`

	// TLS, Sentinel and Cluster: see redis.go. At most one of URL,
	// Sentinel and Cluster is set.
	TLS      RedisTLSConfig      `yaml:"tls"`
	Sentinel RedisSentinelConfig `yaml:"sentinel"`
	Cluster  RedisClusterConfig  `yaml:"cluster"`

	// WaitReplicas makes every blackboard write wait until that many
	// replicas acknowledged it (Redis WAIT) and fail otherwise. Default 0
	// (no waiting: what a failover can lose is bounded by the replication
	// lag). Not supported with a cluster.
	WaitReplicas int `yaml:"wait_replicas"`

	// WaitTimeout bounds each WAIT. Default 1s.
	WaitTimeout Duration `yaml:"wait_timeout"`
}

// BiddingStrategy is how an agent bids on a claim. Its values are the bids
// of the blackboard.
type BiddingStrategy string

// Bidding strategies, in the order their phases run.
const (
	BidReview    BiddingStrategy = "review"
	BidClaim     BiddingStrategy = "claim"
	BidExclusive BiddingStrategy = "exclusive"
	BidIgnore    BiddingStrategy = "ignore"
)

// AllBiddingStrategies lists every bidding strategy.
func AllBiddingStrategies() []BiddingStrategy {
	return []BiddingStrategy{BidReview, BidClaim, BidExclusive, BidIgnore}
}

// Valid reports whether s is a known bidding strategy.
func (s BiddingStrategy) Valid() bool { return slices.Contains(AllBiddingStrategies(), s) }

// WorkspaceMode is how a tool sees the workspace.
type WorkspaceMode string

// Workspace modes.
const (
	WorkspaceReadOnly  WorkspaceMode = "ro"
	WorkspaceReadWrite WorkspaceMode = "rw"
)

// AllWorkspaceModes lists every workspace mode.
func AllWorkspaceModes() []WorkspaceMode {
	return []WorkspaceMode{WorkspaceReadOnly, WorkspaceReadWrite}
}

// Valid reports whether m is a known workspace mode.
func (m WorkspaceMode) Valid() bool { return slices.Contains(AllWorkspaceModes(), m) }

// Agent returns the configuration of the named agent, with Name set, and
// whether it exists. The returned value shares its slices and maps with c.
func (c *Config) Agent(name string) (AgentConfig, bool) {
	a, ok := c.Agents[name]
	if !ok {
		return AgentConfig{}, false
	}
	a.Name = name
	return a, true
}

// AgentNames returns the names of all agents, sorted.
func (c *Config) AgentNames() []string {
	names := make([]string, 0, len(c.Agents))
	for name := range c.Agents {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// AgentsByRole returns the names of the agents whose role is role, sorted.
// An agent whose Role is still empty (a Config built in code, before
// ApplyDefaults) has its name as role, as ApplyDefaults would set it.
func (c *Config) AgentsByRole(role string) []string {
	var names []string
	for _, name := range c.AgentNames() {
		r := c.Agents[name].Role
		if r == "" {
			r = name
		}
		if r == role {
			names = append(names, name)
		}
	}
	return names
}

// ConnectURL is URL with Password added when the URL carries no
// credentials of its own: how the daemons and the runtimes reach an
// external Redis. A URL that does not parse is returned as it is (Validate
// reports it).
func (r RedisConfig) ConnectURL() string {
	if r.Password == "" {
		return r.URL
	}
	u, err := url.Parse(r.URL)
	if err != nil || u.User != nil {
		return r.URL
	}
	u.User = url.UserPassword("", r.Password)
	return u.String()
}
