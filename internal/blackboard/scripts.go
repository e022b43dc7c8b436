package blackboard

import (
	"context"
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

//go:embed scripts/*.lua
var scriptFS embed.FS

// How scripts reach Redis. Each script is a body (scripts/<name>.lua)
// that uses the helpers of scripts/lib.lua. Two ways are kept, chosen per
// client by preload:
//
//   - Redis Functions (Redis 7.0+), when the client connects as the
//     default user: one library holds lib.lua once and every body
//     wrapped as a function (libraryText, generated at load time; the
//     .lua files are the same for both ways), loaded with FUNCTION LOAD
//     and called with FCALL. Measured with BenchmarkScriptCalls
//     (docs/redis.md has the table): an FCALL costs Redis what a bare
//     EVALSHA does, where EVALSHA of lib.lua + body runs lib.lua's 19
//     definitions again on every call (≈ 1.0–1.2 µs), and the mid-sized
//     scripts (beat, take_lease, submit_bid, create_claim) take 15–25 %
//     less Redis time per call; create_artefact is within the noise.
//     Never slower, so used wherever it is safe.
//   - EVALSHA of lib.lua + the body (scriptBody), the fallback: on Redis
//     6.2, when the library cannot be loaded (NOPERM, a proxy without
//     FUNCTION), and always for a named ACL user (internal/acl). FUNCTION
//     LOAD is server-wide and keyless: a user allowed it could REPLACE a
//     library that another instance's users (or its own orchestrator)
//     then run under their own rights, where a script's sha names its
//     code. So no per-instance user holds it, and Sett's ACL users never
//     try (no ACL LOG entry); they run scripts as before.
//
// A call that finds its function or script missing (a Redis restarted
// without persistence, FUNCTION FLUSH, SCRIPT FLUSH, a new Cluster master
// after a resharding) reloads (preload) and is sent once more: preload
// loads the library again or, if that fails, falls back to the scripts,
// so a lost library never fails a call that EVALSHA would have served.

// script is one Lua script. It keeps only the sha that EVALSHA sends and
// its function name: lib.lua makes every body over 10 KB (270 KB for the
// set), and a client needs the bodies only to load them into Redis, at
// start and after Redis lost them: preload builds them again then
// (scriptBody, libraryText), rather than every daemon holding them.
type script struct {
	name string
	sha  string
	// fn is the script's function in the library: <library>_<name>.
	fn string
}

// scriptBody is the text of the script name: lib.lua, a newline, then
// name.lua.
func scriptBody(name string) (string, error) {
	lib, err := scriptFS.ReadFile("scripts/lib.lua")
	if err != nil {
		return "", fmt.Errorf("blackboard: read lib.lua: %w", err)
	}
	b, err := scriptFS.ReadFile("scripts/" + name + ".lua")
	if err != nil {
		return "", fmt.Errorf("blackboard: read %s.lua: %w", name, err)
	}
	return string(lib) + "\n" + string(b), nil
}

// allowOOM are the scripts registered with the allow-oom flag: they only
// delete, and must run when Redis is over maxmemory (a function without
// the flag is refused whole there, where an EVAL script is refused only
// at its first write that may grow memory).
var allowOOM = map[string]bool{"purge_workflow": true, "reap_consumers": true}

// libraryName is the name of the library holding names' scripts: "sett_"
// and 16 hex digits of the digest of lib.lua and the bodies, so that two
// Sett versions on one Redis (a rolling upgrade) each call their own code
// and a library's name always names the same text.
func libraryName(names []string) (string, error) {
	h := sha1.New()
	lib, err := scriptFS.ReadFile("scripts/lib.lua")
	if err != nil {
		return "", fmt.Errorf("blackboard: read lib.lua: %w", err)
	}
	fmt.Fprintf(h, "%d\n%s", len(lib), lib)
	for _, n := range sorted(names) {
		b, err := scriptFS.ReadFile("scripts/" + n + ".lua")
		if err != nil {
			return "", fmt.Errorf("blackboard: read %s.lua: %w", n, err)
		}
		fmt.Fprintf(h, "%s\n%v\n%d\n%s", n, allowOOM[n], len(b), b)
	}
	return "sett_" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

// libraryText is the Functions library named library holding names'
// scripts (libraryOf).
func libraryText(library string, names []string) (string, error) {
	lib, err := scriptFS.ReadFile("scripts/lib.lua")
	if err != nil {
		return "", fmt.Errorf("blackboard: read lib.lua: %w", err)
	}
	bodies := map[string]string{}
	for _, n := range names {
		body, err := scriptFS.ReadFile("scripts/" + n + ".lua")
		if err != nil {
			return "", fmt.Errorf("blackboard: read %s.lua: %w", n, err)
		}
		bodies[n] = string(body)
	}
	return libraryOf(library, string(lib), bodies), nil
}

// libraryOf is the text of the Functions library named library: lib once,
// then each body (by script name) as the function <library>_<name>. A
// function's callback sets KEYS and ARGV, locals of the library that
// lib's helpers read as a script reads its globals; calls never nest
// (Redis runs one at a time), so each sees its own.
func libraryOf(library, lib string, bodies map[string]string) string {
	names := make([]string, 0, len(bodies))
	for n := range bodies {
		names = append(names, n)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "#!lua name=%s\nlocal KEYS, ARGV\n%s\n", library, lib)
	for _, n := range sorted(names) {
		flags := ""
		if allowOOM[n] {
			flags = ", flags = {'allow-oom'}"
		}
		fmt.Fprintf(&b, "redis.register_function{function_name = '%s_%s'%s, callback = function(keys, args)\nKEYS, ARGV = keys, args\n%s\nend}\n",
			library, n, flags, bodies[n])
	}
	return b.String()
}

func sorted(names []string) []string {
	out := append([]string(nil), names...)
	sort.Strings(out)
	return out
}

// tryFunctions is whether a client connecting as user tries the
// Functions library: only the default user (no user name, or
// "default"). A named user is one of Sett's ACL users, which may not load
// a library (see the comment at the top of this file).
func tryFunctions(user string) bool { return user == "" || user == "default" }

// aclUser is the user name rdb authenticates as ("" for the default
// user).
func aclUser(rdb redis.UniversalClient) string {
	switch r := rdb.(type) {
	case *redis.Client:
		return r.Options().Username
	case *redis.ClusterClient:
		return r.Options().Username
	}
	return ""
}

// scriptSet holds every script, loaded once per client.
type scriptSet struct {
	createArtefact  *script
	createClaim     *script
	transitionClaim *script
	submitBid       *script
	takeLease       *script
	extendLease     *script
	leader          *script
	popTimers       *script
	ackTimer        *script
	endWorkflow     *script
	decideApproval  *script
	recordLearning  *script
	publishMemory   *script
	beat            *script
	control         *script
	releaseGrant    *script
	writeShared     *script
	retryClaim      *script
	// completeWorkflow ends a workflow a cub's result left due.
	completeWorkflow *script
	// Retention: the janitor's and `sett gc`'s.
	purgeWorkflow *script
	reapConsumers *script

	// library is the Functions library's name (libraryName).
	library string
	// functions is set while calls go by FCALL: preload loaded the
	// library (or found it loaded) for this client. It is never set for
	// a client that may not try them (tryFunctions).
	functions    atomic.Bool
	tryFunctions bool
	// reload serialises preloads: of the calls that all found their
	// function missing at once, the first loads the library and the
	// others get "already exists", which Redis answers before compiling.
	reload sync.Mutex
}

// loadScriptSet names every script; functions says whether preload may
// try the Functions library (tryFunctions).
func loadScriptSet(functions bool) (*scriptSet, error) {
	read := func(name string) (*script, error) {
		body, err := scriptBody(name)
		if err != nil {
			return nil, err
		}
		sum := sha1.Sum([]byte(body))
		return &script{name: name, sha: hex.EncodeToString(sum[:])}, nil
	}
	s := &scriptSet{tryFunctions: functions}
	for name, dst := range map[string]**script{
		"create_artefact":     &s.createArtefact,
		"create_claim":        &s.createClaim,
		"transition_claim":    &s.transitionClaim,
		"submit_bid":          &s.submitBid,
		"take_lease":          &s.takeLease,
		"extend_lease":        &s.extendLease,
		"leader":              &s.leader,
		"pop_timers":          &s.popTimers,
		"ack_timer":           &s.ackTimer,
		"end_workflow":        &s.endWorkflow,
		"decide_approval":     &s.decideApproval,
		"record_learning":     &s.recordLearning,
		"publish_tool_memory": &s.publishMemory,
		"beat":                &s.beat,
		"control":             &s.control,
		"release_grant":       &s.releaseGrant,
		"write_shared_memory": &s.writeShared,
		"retry_claim":         &s.retryClaim,
		"complete_workflow":   &s.completeWorkflow,
		"purge_workflow":      &s.purgeWorkflow,
		"reap_consumers":      &s.reapConsumers,
	} {
		sc, err := read(name)
		if err != nil {
			return nil, err
		}
		*dst = sc
	}
	var err error
	if s.library, err = libraryName(s.names()); err != nil {
		return nil, err
	}
	for _, sc := range s.all() {
		sc.fn = s.library + "_" + sc.name
	}
	return s, nil
}

func (s *scriptSet) names() []string {
	var names []string
	for _, sc := range s.all() {
		names = append(names, sc.name)
	}
	return names
}

func (s *scriptSet) all() []*script {
	return []*script{s.createArtefact, s.createClaim, s.transitionClaim, s.submitBid,
		s.takeLease, s.extendLease, s.leader, s.popTimers, s.ackTimer, s.endWorkflow,
		s.decideApproval, s.recordLearning, s.publishMemory, s.beat, s.control, s.releaseGrant, s.writeShared, s.retryClaim,
		s.completeWorkflow, s.purgeWorkflow, s.reapConsumers}
}

// preload makes every script callable: the Functions library when the
// client may try it and Redis takes it (then calls go by FCALL), else
// every script by SCRIPT LOAD (then calls go by EVALSHA). A Redis error
// reply to FUNCTION LOAD (an unknown command on Redis 6.2, NOPERM) means
// the scripts; a connection error is returned.
func (s *scriptSet) preload(ctx context.Context, rdb redis.UniversalClient) error {
	s.reload.Lock()
	defer s.reload.Unlock()
	if s.tryFunctions {
		err := s.loadLibrary(ctx, rdb)
		if err == nil {
			s.functions.Store(true)
			return nil
		}
		if !isRedisReply(err) {
			return err
		}
	}
	s.functions.Store(false)
	return s.loadScripts(ctx, rdb)
}

// loadLibrary loads the library unless Redis has it (on every master of
// a Cluster, as ClusterClient.ScriptLoad does for scripts).
func (s *scriptSet) loadLibrary(ctx context.Context, rdb redis.UniversalClient) error {
	text, err := libraryText(s.library, s.names())
	if err != nil {
		return err
	}
	load := func(ctx context.Context, c redis.Cmdable) error {
		err := c.FunctionLoad(ctx, text).Err()
		if err != nil && strings.Contains(err.Error(), "already exists") {
			return nil // the same name is the same text (libraryName)
		}
		if err != nil {
			return fmt.Errorf("blackboard: load the functions library %s: %w", s.library, err)
		}
		return nil
	}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return load(ctx, m) })
	}
	return load(ctx, rdb)
}

// isRedisReply reports whether err is an error reply from Redis (not a
// connection or context error).
func isRedisReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, redis.Nil)
}

// loadScripts sends SCRIPT LOAD for every script in one pipeline, so that
// later calls (and pipelines) only ever send EVALSHA.
func (s *scriptSet) loadScripts(ctx context.Context, rdb redis.UniversalClient) error {
	if isCluster(rdb) {
		// A keyless pipelined SCRIPT LOAD would reach one random node;
		// ClusterClient.ScriptLoad sends it to every master, so the
		// node owning the instance's slot (now or after a resharding
		// or failover) has every script.
		for _, sc := range s.all() {
			body, err := scriptBody(sc.name)
			if err != nil {
				return err
			}
			sha, err := rdb.ScriptLoad(ctx, body).Result()
			if err != nil {
				return fmt.Errorf("blackboard: load script %s: %w", sc.name, err)
			}
			if sha != sc.sha {
				return fmt.Errorf("blackboard: script %s loaded with sha %s, expected %s", sc.name, sha, sc.sha)
			}
		}
		return nil
	}
	pipe := rdb.Pipeline()
	cmds := make([]*redis.StringCmd, 0, len(s.all()))
	for _, sc := range s.all() {
		body, err := scriptBody(sc.name)
		if err != nil {
			return err
		}
		cmds = append(cmds, pipe.ScriptLoad(ctx, body))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return fmt.Errorf("blackboard: load scripts: %w", err)
	}
	for i, sc := range s.all() {
		if cmds[i].Val() != sc.sha {
			return fmt.Errorf("blackboard: script %s loaded with sha %s, expected %s", sc.name, cmds[i].Val(), sc.sha)
		}
	}
	return nil
}

// scripter is what a script call is sent on: a client or a pipeline.
type scripter interface {
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	FCall(ctx context.Context, function string, keys []string, args ...any) *redis.Cmd
}

// call queues or sends one call of sc on p: FCALL of its function while
// the library is loaded, else EVALSHA.
func (s *scriptSet) call(ctx context.Context, p scripter, sc *script, keys []string, args ...any) *redis.Cmd {
	if s.functions.Load() {
		return p.FCall(ctx, sc.fn, keys, args...)
	}
	return p.EvalSha(ctx, sc.sha, keys, args...)
}

// isNoScript reports whether Redis lost the script or function called (a
// restart without persistence, SCRIPT FLUSH, FUNCTION FLUSH, a new Cluster
// master); the caller reloads (preload) and retries once.
func isNoScript(err error) bool {
	return err != nil && (strings.HasPrefix(err.Error(), "NOSCRIPT") || strings.HasPrefix(err.Error(), "ERR Function not found"))
}

// evalsha executes a script (by FCALL or EVALSHA, see call), reloading
// once if Redis lost it.
func (c *Client) evalsha(ctx context.Context, sc *script, keys []string, args ...any) *redis.Cmd {
	cmd := c.evalshaOnce(ctx, sc, keys, args...)
	if isNoScript(cmd.Err()) {
		if err := c.scripts.preload(ctx, c.rdb); err != nil {
			cmd.SetErr(err)
			return cmd
		}
		cmd = c.evalshaOnce(ctx, sc, keys, args...)
	}
	return cmd
}

// evalshaOnce sends one call of sc. With WaitReplicas it sends WAIT in the
// same pipeline: WAIT counts the replicas that acknowledged the writes of
// its own connection, so it must share the script's connection.
func (c *Client) evalshaOnce(ctx context.Context, sc *script, keys []string, args ...any) *redis.Cmd {
	if c.waitReplicas <= 0 {
		return c.scripts.call(ctx, c.rdb, sc, keys, args...)
	}
	var cmd *redis.Cmd
	var wait *redis.Cmd
	_, _ = c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		cmd = c.scripts.call(ctx, p, sc, keys, args...)
		wait = p.Do(ctx, "WAIT", c.waitReplicas, c.waitTimeout.Milliseconds())
		return nil
	})
	if n, err := wait.Int64(); cmd.Err() == nil && err == nil && n < int64(c.waitReplicas) {
		cmd.SetErr(fmt.Errorf("%w: script %s reached %d of %d replicas within %s", ErrNotReplicated, sc.name, n, c.waitReplicas, c.waitTimeout))
	}
	return cmd
}

// run executes a script that returns a status list ({code, detail...}).
func (c *Client) run(ctx context.Context, sc *script, keys []string, args ...any) ([]string, error) {
	res, err := c.evalsha(ctx, sc, keys, args...).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("blackboard: script %s: %w", sc.name, err)
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("blackboard: script %s returned nothing", sc.name)
	}
	return res, nil
}

// scriptError maps a script's return code to a sentinel error.
func scriptError(name string, res []string) error {
	detail := strings.Join(res[1:], " ")
	var base error
	switch res[0] {
	case "OK":
		return nil
	case "EXISTS":
		base = ErrExists
	case "VERSION_CONFLICT":
		base = ErrVersionConflict
	case "STALE_STATUS":
		base = ErrStaleStatus
	case "STALE_GRANT":
		base = ErrStaleGrant
	case "FENCED":
		base = ErrFenced
	case "NO_EPOCH":
		base = ErrNoEpoch
	case "NOT_FOUND":
		base = ErrNotFound
	case "NOT_INVITED":
		base = ErrNotInvited
	case "WORKFLOW_ENDED":
		base = ErrWorkflowEnded
	case "BUDGET_EXCEEDED":
		base = ErrBudgetExceeded
	case "STALE_MEMORY":
		base = ErrStaleMemory
	case "HELD":
		base = ErrLeaseHeld
	case "ALREADY_DECIDED":
		base = ErrAlreadyDecided
	case "EXPIRED":
		base = ErrApprovalExpired
	default:
		return fmt.Errorf("blackboard: script %s returned unknown code %q", name, res[0])
	}
	return fmt.Errorf("%w (%s: %s)", base, name, detail)
}
