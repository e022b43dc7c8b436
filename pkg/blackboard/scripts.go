package blackboard

import (
	"context"
	"crypto/sha1"
	"embed"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

//go:embed scripts/*.lua
var scriptFS embed.FS

// script is one Lua script with the shared prelude (lib.lua) prepended. It
// keeps only the sha that EVALSHA sends: lib.lua makes every body over
// 10 KB (270 KB for the set), and a client needs the bodies only to load
// them into Redis, at start and after Redis lost its script cache: preload
// builds them again then (scriptBody), rather than every daemon holding
// them.
type script struct {
	name string
	sha  string
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
}

func loadScriptSet() (*scriptSet, error) {
	read := func(name string) (*script, error) {
		body, err := scriptBody(name)
		if err != nil {
			return nil, err
		}
		sum := sha1.Sum([]byte(body))
		return &script{name: name, sha: hex.EncodeToString(sum[:])}, nil
	}
	s := &scriptSet{}
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
	return s, nil
}

func (s *scriptSet) all() []*script {
	return []*script{s.createArtefact, s.createClaim, s.transitionClaim, s.submitBid,
		s.takeLease, s.extendLease, s.leader, s.popTimers, s.ackTimer, s.endWorkflow,
		s.decideApproval, s.recordLearning, s.publishMemory, s.beat, s.control, s.releaseGrant, s.writeShared, s.retryClaim,
		s.completeWorkflow, s.purgeWorkflow, s.reapConsumers}
}

// preload sends SCRIPT LOAD for every script in one pipeline, so that later
// calls (and pipelines) only ever send EVALSHA.
func (s *scriptSet) preload(ctx context.Context, rdb redis.UniversalClient) error {
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

// isNoScript reports whether Redis lost its script cache (a restart or
// SCRIPT FLUSH); the caller reloads and retries once.
func isNoScript(err error) bool {
	return err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT")
}

// evalsha executes a script by sha, reloading the cache once if Redis lost
// it.
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

// evalshaOnce sends one EVALSHA. With WaitReplicas it sends WAIT in the
// same pipeline: WAIT counts the replicas that acknowledged the writes of
// its own connection, so it must share the script's connection.
func (c *Client) evalshaOnce(ctx context.Context, sc *script, keys []string, args ...any) *redis.Cmd {
	if c.waitReplicas <= 0 {
		return c.rdb.EvalSha(ctx, sc.sha, keys, args...)
	}
	var cmd *redis.Cmd
	var wait *redis.Cmd
	_, _ = c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		cmd = p.EvalSha(ctx, sc.sha, keys, args...)
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
