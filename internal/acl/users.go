package acl

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// Role is what a user is for.
type Role string

// Roles.
const (
	RoleOrchestrator Role = "orchestrator"
	RoleCub          Role = "cub"
	RoleHuman        Role = "human"
	RoleReader       Role = "reader"
)

// AllRoles lists every role.
func AllRoles() []Role { return []Role{RoleOrchestrator, RoleCub, RoleHuman, RoleReader} }

// Valid reports whether r is a known role.
func (r Role) Valid() bool { return slices.Contains(AllRoles(), r) }

// User is one ACL user of an instance. The zero value is not usable;
// build users with Users.
type User struct {
	// Name is the ACL user name, "sett-<instance>-<role>[-<agent>]".
	Name string
	Role Role
	// Agent is the agent whose cubs use it (RoleCub only).
	Agent string
	// Rules are the ACL SETUSER rules after "reset on" and the password.
	// Selectors ("(...)", Redis 7.0+) are one rule each.
	Rules []string
}

// Privileges are what a script checks its caller may do, beyond the keys
// it may write (internal/blackboard/scripts/lib.lua refuse_unless): a user
// holds privilege p when it may SET <prefix>privilege:<p>, a key nothing
// writes.
const (
	// PrivLead: take and keep the leadership (the leader lease and the
	// epoch) and fire timers.
	PrivLead = "lead"
	// PrivEndWorkflow: end a workflow (complete, fail, cancel).
	PrivEndWorkflow = "end_workflow"
	// PrivDecide: approve or reject a claim awaiting approval.
	PrivDecide = "decide"
	// PrivControl: pause and resume the instance.
	PrivControl = "control"
	// PrivRetry: retry a failed claim or workflow.
	PrivRetry = "retry"
	// PrivMaintain: the retention janitor's purges, stream trims and
	// consumer reaping.
	PrivMaintain = "maintain"
)

// connection is what every go-redis client sends besides data commands:
// the handshake, the clock, and the cluster topology and command table a
// cluster client routes by. CLIENT SETINFO (Redis 7.2+) is left out:
// older servers refuse unknown names in ACL SETUSER, and go-redis ignores
// its failure.
var connection = []string{
	"ping", "echo", "hello", "auth", "select", "client|setname", "client|id",
	"time", "command", "cluster|slots", "cluster|shards", "cluster|nodes", "cluster|info", "readonly",
	"script|load", "script|exists",
}

// reads are the read commands the blackboard issues (directly and inside
// its scripts).
var reads = []string{
	"get", "exists", "pttl", "hget", "hgetall", "hmget", "hexists", "hlen", "scard", "sismember", "smembers",
	"zcard", "zcount", "zrange", "zrangebyscore", "zrangebylex", "zrevrange", "zrevrangebylex",
	"zrevrangebyscore", "zrank", "zscore", "xlen", "xrange", "xrevrange", "xread", "xinfo|stream",
	"subscribe", "psubscribe", "unsubscribe", "punsubscribe",
}

// keyless are the transaction commands and PUBLISH (its channel is checked
// against the user's channel pattern): they name no key, and each
// command they wrap is checked on its own.
var keyless = []string{"multi", "exec", "discard", "wait", "publish"}

// writes are the write commands the blackboard's scripts and pipelines
// run. Scripts run under the caller's ACL user, so every command a script
// calls must be allowed.
var writes = []string{
	"set", "del", "incr", "pexpire", "hset", "hsetnx", "hdel", "hincrby", "sadd", "srem",
	"zadd", "zrem", "zremrangebyscore", "xadd", "xack", "xdel", "xgroup|create", "xreadgroup",
	"xautoclaim", "xclaim", "publish",
}

// maintenance are the retention janitor's commands (retention):
// only the orchestrator, which alone runs the janitor, gets them.
var maintenance = []string{
	"unlink", "xtrim", "xinfo|consumers", "xgroup|delconsumer",
}

// Users returns the instance's users: the orchestrator, one cub user per
// agent (sorted as given), the human (people's commands) and the reader.
// hashTag must match the instance's services.redis.hash_tag: it decides
// the key prefix.
//
// Redis checks a script's KEYS against its caller's user as writes, and
// then each command the script runs on its own. So every user that runs
// scripts holds EVALSHA on all its instance's keys in a selector of its
// own (the scripts' KEYS), and what it may really write is the
// per-family selectors below: the same for a command sent directly and
// for one a script runs. What a script does beyond single writes (ending
// a workflow, leading, deciding) is a privilege it checks (Privileges).
//
// No user gets FUNCTION or FCALL: a Functions library is server-wide and
// keyless, so a user allowed to load one could replace code that other
// users run under their rights. A client connecting as a named user runs
// the scripts by EVALSHA (internal/blackboard/scripts.go).
func Users(instance string, hashTag bool, agents []string) []User {
	prefix := "sett:" + instance + ":"
	if hashTag {
		prefix = "sett:{" + instance + "}:"
	}
	keys, chans := "~"+prefix+"*", "&"+prefix+"*"
	base := []string{"resetkeys", "resetchannels", "-@all"}
	readAll := concat([]string{"%R~" + prefix + "*", chans}, allow(connection, reads))
	scripts := selector(prefix, []string{"*"}, "evalsha")
	users := []User{{
		Name: Name(instance, RoleOrchestrator, ""), Role: RoleOrchestrator,
		Rules: concat(base, []string{keys, chans}, allow(connection, reads, keyless, []string{"evalsha"}, writes, maintenance)),
	}}
	for _, a := range agents {
		users = append(users, User{
			Name: Name(instance, RoleCub, a), Role: RoleCub, Agent: a,
			Rules: concat(base, readAll, allow(keyless), []string{scripts}, cubSelectors(prefix, a)),
		})
	}
	users = append(users, User{
		Name: Name(instance, RoleHuman, ""), Role: RoleHuman,
		Rules: concat(base, readAll, allow(keyless), []string{scripts}, humanSelectors(prefix)),
	}, User{
		Name: Name(instance, RoleReader, ""), Role: RoleReader,
		Rules: concat(base, readAll),
	})
	return users
}

// selector is an ACL selector granting cmds on the key families fams
// (patterns after the prefix).
func selector(prefix string, fams []string, cmds ...string) string {
	var parts []string
	for _, f := range fams {
		parts = append(parts, "~"+prefix+f)
	}
	for _, c := range cmds {
		parts = append(parts, "+"+c)
	}
	return "(" + strings.Join(parts, " ") + ")"
}

// privilege is the selector granting privileges caps.
func privilege(prefix string, caps ...string) string {
	fams := make([]string, len(caps))
	for i, c := range caps {
		fams[i] = "privilege:" + c
	}
	return selector(prefix, fams, "set")
}

// cubSelectors are what a cub of agent may write, family by family. It
// reads the whole instance (claims, artefacts, memories), writes its own
// agent keys and leases, and otherwise only what a result, a bid or a
// claim it opens writes:
//   - artefacts with HSETNX only: an artefact's fields, once written, are
//     never changed, by its author or anyone else;
//   - the workflow hash with HINCRBY only (its counters): never its
//     status, so a cub cannot end a workflow;
//   - the event log and the orchestrator's queue with XADD only: never
//     trimmed, deleted from or deleted;
//   - never the leader lease, the epoch, the dead letters, the control
//     hash, another agent's keys, or a privilege.
func cubSelectors(prefix, agent string) []string {
	return []string{
		selector(prefix, []string{"agent:" + agent + ":*"}, writes...),
		selector(prefix, []string{"lease:*:" + agent}, "set", "del", "pexpire", "publish"),
		selector(prefix, []string{"artefact:*"}, "hsetnx"),
		selector(prefix, []string{"workflow:*"}, "hincrby"),
		selector(prefix, []string{"workflow:*:memories", "workflow:*:shared_memory"}, "hset", "hsetnx"),
		selector(prefix, []string{"events", "orchestrator:queue"}, "xadd"),
		selector(prefix, []string{"thread:*", "claim:*", "claim_by_artefact:*", "index:*", "timers", "agents",
			"scheduler:*", "learnings", "tool_memory", "tokens:*"}, writes...),
	}
}

// humanSelectors are what people's commands write: goals (a goal's
// artefact, workflow and claim), approval decisions, pause and resume,
// retries and cancellations. Never the leader lease, the epoch, the
// retention janitor's trims and deletes of the event log, or an existing
// artefact's fields.
func humanSelectors(prefix string) []string {
	return []string{
		selector(prefix, []string{"artefact:*"}, "hsetnx"),
		selector(prefix, []string{"events", "orchestrator:queue"}, "xadd"),
		selector(prefix, []string{"workflow:*", "thread:*", "claim:*", "claim_by_artefact:*", "index:*", "timers",
			"agents", "agent:*", "lease:*", "scheduler:*", "control", "learnings", "tool_memory", "tokens:*",
			"orchestrator:dead_letters"}, writes...),
		privilege(prefix, PrivEndWorkflow, PrivDecide, PrivControl, PrivRetry),
	}
}

func allow(cmds ...[]string) []string {
	var out []string
	for _, list := range cmds {
		for _, c := range list {
			out = append(out, "+"+c)
		}
	}
	return out
}

// Name is the ACL user name of a role (agent only for RoleCub).
func Name(instance string, role Role, agent string) string {
	if role == RoleCub {
		return "sett-" + instance + "-cub-" + agent
	}
	return "sett-" + instance + "-" + string(role)
}

// SetUser is the redis-cli line that creates or replaces u with password.
// The password is passed as a ">password" rule: Redis keeps only its
// SHA-256.
func (u User) SetUser(password string) string {
	return "ACL SETUSER " + u.Name + " reset on >" + password + " " + strings.Join(u.Rules, " ")
}

// Args are SetUser's words after "ACL", for a client's Do.
func (u User) Args(password string) []any {
	args := []any{"SETUSER", u.Name, "reset", "on", ">" + password}
	for _, r := range u.Rules {
		args = append(args, r)
	}
	return args
}

// NewPassword returns 32 random bytes, hex encoded.
func NewPassword() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("acl: random password: %w", err)
	}
	return hex.EncodeToString(b), nil
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

// ServerArgs are the redis-server command-line arguments that create u
// at start (`--user name reset on #sha256 rules...`), password hashed.
func (u User) ServerArgs(password string) []string {
	sum := sha256.Sum256([]byte(password))
	return append([]string{"--user", u.Name, "reset", "on", "#" + hex.EncodeToString(sum[:])}, u.Rules...)
}

// ConfLine is the redis.conf `user` directive for u: the same rules as
// SetUser, with the password stored as its SHA-256 (#hex) so that the
// file on disk never holds it.
func (u User) ConfLine(password string) string {
	sum := sha256.Sum256([]byte(password))
	return "user " + u.Name + " reset on #" + hex.EncodeToString(sum[:]) + " " + strings.Join(u.Rules, " ")
}
