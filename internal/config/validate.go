package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"
)

var (
	instancePattern  = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)
	agentNamePattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	envKeyPattern    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
)

// Limits checked by Validate.
const (
	MinLeaseTTL          = Duration(time.Second)
	MinAgentHeartbeatTTL = Duration(time.Second)
	MinMaxPayloadBytes   = 1 * KiB
	MaxMaxPayloadBytes   = 64 * MiB
	MinMaxOutputBytes    = 1 * KiB
	// MinMemory is the smallest memory limit Docker accepts.
	MinMemory = 6 * MiB
)

// validator collects FieldErrors, locating each through the source.
type validator struct {
	src  *source
	errs []FieldError
}

func (v *validator) addf(path, format string, args ...any) {
	v.errs = append(v.errs, FieldError{
		File:    v.src.filename(),
		Line:    v.src.line(path),
		Path:    path,
		Message: fmt.Sprintf(format, args...),
		Err:     ErrInvalid,
	})
}

// Validate checks every rule and returns nil or a *ValidationError listing
// all broken rules (each matching ErrInvalid), in file order. It expects
// ApplyDefaults to have run: a zero that a default would replace is
// reported as invalid. Validate does not modify c.
func (c *Config) Validate() error {
	v := &validator{src: c.src}

	switch c.Version {
	case CurrentVersion:
	case "":
		v.addf("version", "required (write version: %q)", CurrentVersion)
	default:
		v.addf("version", "%q is not supported (only %q is)", c.Version, CurrentVersion)
	}
	if c.Instance != "" {
		if msg := checkInstance(c.Instance); msg != "" {
			v.addf("instance", "%s", msg)
		}
	}

	c.Orchestrator.validate(v, "orchestrator")
	c.validateReviewClusters(v)

	if len(c.Agents) == 0 {
		v.addf("agents", "at least one agent is required (see sett.yml.example)")
	}
	for _, name := range c.AgentNames() {
		p := "agents." + name
		if !agentNamePattern.MatchString(name) {
			v.addf(p, "%q is not a valid agent name (use lowercase letters, digits, '_' and '-', at most 63 characters, starting with a letter or digit)", name)
		}
		if slices.Contains(ReservedAgentNames(), name) {
			v.addf(p, "%q is reserved for a component of the instance (reserved: %s); rename the agent", name, strings.Join(ReservedAgentNames(), ", "))
		}
		a := c.Agents[name]
		a.validate(v, p)
	}

	c.Approvals.validate(v, c)
	c.Escalation.validate(v)
	c.Vault.validate(v)
	c.Retention.validate(v)
	c.validateIsolation(v)
	c.Services.Redis.validate(v, "services.redis")
	c.Services.Containers.validate(v, "services.containers")

	if len(v.errs) == 0 {
		return nil
	}
	sort.SliceStable(v.errs, func(i, j int) bool { return v.errs[i].Line < v.errs[j].Line })
	return &ValidationError{Errors: v.errs}
}

func (o *OrchestratorConfig) validate(v *validator, p string) {
	if n := o.ReviewIterationLimit(); n < 0 {
		v.addf(p+".max_review_iterations", "%d is not valid (use a positive number, or 0 for unlimited)", n)
	}
	positiveDuration(v, p+".bid_timeout", o.BidTimeout)
	positiveDuration(v, p+".no_bid_timeout", o.NoBidTimeout)
	minDuration(v, p+".lease_ttl", o.LeaseTTL, MinLeaseTTL)
	atLeastOne(v, p+".max_grant_attempts", o.MaxGrantAttempts)
	atLeastOne(v, p+".dead_letter_after", o.DeadLetterAfter)
	atLeastOne(v, p+".reconcile_rate", o.ReconcileRate)
	atLeastOne(v, p+".max_workflow_artefacts", o.MaxWorkflowArtefacts)
	atLeastOne(v, p+".max_chain_depth", o.MaxChainDepth)
	if o.MaxPayloadBytes < MinMaxPayloadBytes || o.MaxPayloadBytes > MaxMaxPayloadBytes {
		v.addf(p+".max_payload_bytes", "%s is out of range (must be between %s and %s)", o.MaxPayloadBytes, MinMaxPayloadBytes, MaxMaxPayloadBytes)
	}
	minDuration(v, p+".agent_heartbeat_ttl", o.AgentHeartbeatTTL, MinAgentHeartbeatTTL)
	if o.MaxWorkflowTokens < 0 {
		v.addf(p+".max_workflow_tokens", "%d is not valid (use a positive number of tokens, or 0 for no limit)", o.MaxWorkflowTokens)
	}
	if o.MaxConcurrentClaims < 0 {
		v.addf(p+".max_concurrent_claims", "%d is not valid (use a positive number, or 0 for no limit)", o.MaxConcurrentClaims)
	}
	if msg := checkListenAddr(o.HTTPAddr); msg != "" {
		v.addf(p+".http_addr", "%s", msg)
	}
	o.ReviewPolicy.validate(v, p+".review_policy")
	o.Priority.validate(v, p+".priority")
}

func (a *AgentConfig) validate(v *validator, p string) {
	if strings.TrimSpace(a.Role) != a.Role {
		v.addf(p+".role", "%q has leading or trailing spaces", a.Role)
	}
	if strings.IndexFunc(a.Image, unicode.IsSpace) >= 0 {
		v.addf(p+".image", "%q is not a valid image reference (it contains spaces)", a.Image)
	}
	checkCommand(v, p+".command", a.Command)
	if !a.BiddingStrategy.Valid() {
		v.addf(p+".bidding_strategy", "%q is not valid (use review, claim, exclusive or ignore)", a.BiddingStrategy)
	}
	for i, pattern := range a.Consumes {
		ip := fmt.Sprintf("%s.consumes[%d]", p, i)
		if pattern == "" {
			v.addf(ip, "an empty pattern matches no artefact type (remove it; an empty consumes list means every type)")
			continue
		}
		// path.Match checks the whole pattern for syntax, whatever the
		// name it is matched against.
		if _, err := path.Match(pattern, ""); err != nil {
			v.addf(ip, "%q is not a valid pattern (use path.Match syntax: *, ?, [a-z], \\ to escape)", pattern)
		}
	}
	checkCommand(v, p+".bid_script", a.BidScript)
	positiveDuration(v, p+".bid_script_timeout", a.BidScriptTimeout)
	if !a.Workspace.Mode.Valid() {
		v.addf(p+".workspace.mode", "%q is not valid (use ro or rw)", a.Workspace.Mode)
	}
	keys := make([]string, 0, len(a.Environment))
	for k := range a.Environment {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if msg := checkEnvKey(k); msg != "" {
			v.addf(p+".environment."+k, "%s", msg)
		}
	}
	seenHost := make(map[string]bool, len(a.EnvironmentFromHost))
	for i, k := range a.EnvironmentFromHost {
		ip := fmt.Sprintf("%s.environment_from_host[%d]", p, i)
		if msg := checkEnvKey(k); msg != "" {
			v.addf(ip, "%s", msg)
		} else if seenHost[k] {
			v.addf(ip, "%q is listed twice", k)
		} else if _, both := a.Environment[k]; both {
			v.addf(ip, "%q is also set in %s.environment: keep one (environment sets a value, environment_from_host passes the cub's)", k, p)
		}
		seenHost[k] = true
	}
	positiveDuration(v, p+".timeout", a.Timeout)
	if a.DrainTimeout < 0 {
		v.addf(p+".drain_timeout", "%s is not valid (use a duration like 45s, or 0 to stop tools at once)", a.DrainTimeout)
	}
	if a.StopGrace < 0 {
		v.addf(p+".stop_grace", "%s is not valid (use a duration like 10s, or 0 to kill at once)", a.StopGrace)
	}
	atLeastOne(v, p+".max_concurrent", a.MaxConcurrent)
	if a.MaxTokensPerClaim < 0 {
		v.addf(p+".max_tokens_per_claim", "%d is not valid (use a positive number of tokens, or 0 for no limit)", a.MaxTokensPerClaim)
	}
	if a.MaxOutputBytes < MinMaxOutputBytes {
		v.addf(p+".max_output_bytes", "%s is too small (must be at least %s)", a.MaxOutputBytes, MinMaxOutputBytes)
	}
	switch cpus := a.Resources.CPUs; {
	case math.IsNaN(cpus) || math.IsInf(cpus, 0):
		v.addf(p+".resources.cpus", "%v is not a number of CPUs", cpus)
	case cpus < 0:
		v.addf(p+".resources.cpus", "%v is not valid (use a positive number like 0.5 or 2, or 0 for no limit)", cpus)
	}
	switch mem := a.Resources.Memory; {
	case mem < 0:
		v.addf(p+".resources.memory", "%s is not valid (use a size like 512MiB, or 0 for no limit)", mem)
	case mem > 0 && mem < MinMemory:
		v.addf(p+".resources.memory", "%s is too small (Docker needs at least %s; use 0 for no limit)", mem, MinMemory)
	}
	a.Review.validate(v, p+".review")
	a.Retry.validate(v, p+".retry")
	a.validateWorker(v, p)
}

func (r *RedisConfig) validate(v *validator, p string) {
	switch {
	case r.Image == "":
		v.addf(p+".image", "must not be empty")
	case strings.IndexFunc(r.Image, unicode.IsSpace) >= 0:
		v.addf(p+".image", "%q is not a valid image reference (it contains spaces)", r.Image)
	}
	if r.URL != "" {
		if msg := checkRedisURL(r.URL); msg != "" {
			v.addf(p+".url", "%s", msg)
		}
	}
	r.validateTopology(v, p)
}

// Warnings returns sentences about settings that are valid but probably
// unintended, each starting with its location. Parse and Load return them;
// call it again after changing c.
func (c *Config) Warnings() []string {
	var out []string
	warn := func(path, format string, args ...any) {
		loc := FieldError{File: c.src.filename(), Line: c.src.line(path), Path: path, Message: fmt.Sprintf(format, args...)}
		out = append(out, loc.Error())
	}
	if c.Orchestrator.ReviewIterationLimit() == 0 {
		warn("orchestrator.max_review_iterations",
			"0 means unlimited: a rejected artefact goes back to its author until a reviewer approves it, possibly forever")
	}
	c.reviewWarnings(warn)
	c.clusterWarnings(warn)
	for _, name := range c.AgentNames() {
		a := c.Agents[name]
		// The learner gets learn claims without bidding.
		if a.BiddingStrategy == BidIgnore && len(a.BidScript) == 0 && name != c.Orchestrator.Learner {
			warn("agents."+name+".bidding_strategy",
				"agent %q bids ignore and has no bid_script, so it never gets any work", name)
		}
	}
	return out
}

func positiveDuration(v *validator, p string, d Duration) {
	if d <= 0 {
		v.addf(p, "%s is not valid (must be greater than 0, like 5s)", d)
	}
}

func minDuration(v *validator, p string, d, min Duration) {
	if d < min {
		v.addf(p, "%s is too short (must be at least %s)", d, min)
	}
}

func atLeastOne(v *validator, p string, n int) {
	if n < 1 {
		v.addf(p, "%d is not valid (must be at least 1)", n)
	}
}

// checkCommand checks an argv: empty is allowed, an empty program is not.
// Later arguments may be empty strings.
func checkCommand(v *validator, p string, argv []string) {
	if len(argv) > 0 && strings.TrimSpace(argv[0]) == "" {
		v.addf(p+"[0]", "the program to run must not be empty")
	}
}

// checkInstance returns why name is not a valid instance name, or "".
func checkInstance(name string) string {
	if instancePattern.MatchString(name) {
		return ""
	}
	return fmt.Sprintf("%q is not a valid instance name (use lowercase letters, digits and '-', at most 63 characters, starting and ending with a letter or digit)", name)
}

// checkEnvKey returns why k may not be passed to a tool, or "".
func checkEnvKey(k string) string {
	switch {
	case !envKeyPattern.MatchString(k):
		return fmt.Sprintf("%q is not a valid variable name (use letters, digits and '_', not starting with a digit)", k)
	case strings.Contains(strings.ToUpper(k), "REDIS"):
		// Checked before the SETT_ prefix so that SETT_REDIS_URL gets the
		// reason that matters.
		return fmt.Sprintf("%q is not allowed: tools never get Redis credentials (only the cub talks to Redis), so no variable naming REDIS is passed to a tool", k)
	case strings.HasPrefix(strings.ToUpper(k), "SETT_"):
		return fmt.Sprintf("%q is not allowed: names starting with SETT_ are reserved for Sett", k)
	}
	return ""
}

// checkListenAddr returns why addr is not a host:port to listen on, or "".
func checkListenAddr(addr string) string {
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		if n, perr := strconv.Atoi(port); perr == nil && n >= 0 && n <= 65535 {
			return ""
		}
	}
	return fmt.Sprintf("%q is not a listen address (use host:port or :port with a port number, like :8080)", addr)
}

// checkRedisURL returns why raw is not a usable Redis URL, or "". The
// message never repeats raw itself, which may hold a password.
func checkRedisURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // url.Error repeats the URL, password included
		}
		return fmt.Sprintf("not a valid URL: %v (use redis://host:6379, rediss://host:6380 or unix:///path/to/redis.sock)", err)
	}
	switch {
	case u.Scheme == "unix":
		// A Unix socket: the same host only, and far cheaper per round
		// trip than loopback TCP (see docs/operations.md, Runtimes).
		if u.Host != "" || !strings.HasPrefix(u.Path, "/") {
			return fmt.Sprintf("%q needs an absolute socket path and no host (use unix:///path/to/redis.sock, or unix://:password@/path/to/redis.sock)", u.Redacted())
		}
	case u.Scheme != "redis" && u.Scheme != "rediss":
		return fmt.Sprintf("%q has scheme %q (use redis:// or rediss:// for TLS, unix:// for a socket on this host)", u.Redacted(), u.Scheme)
	case u.Host == "":
		return fmt.Sprintf("%q has no host (use redis://host:6379)", u.Redacted())
	}
	return ""
}

// ReservedAgentNames are names the runtimes and `sett logs` use for the
// instance's own components, so no agent may take them.
func ReservedAgentNames() []string { return []string{"orchestrator", "redis", "supervisor"} }
