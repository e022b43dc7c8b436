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
	RoleReader       Role = "reader"
)

// AllRoles lists every role.
func AllRoles() []Role { return []Role{RoleOrchestrator, RoleCub, RoleReader} }

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
	Rules []string
}

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
	"get", "exists", "pttl", "hget", "hgetall", "hmget", "hexists", "scard", "sismember", "smembers",
	"zcard", "zcount", "zrange", "zrangebyscore", "zrangebylex", "zrevrange", "zrevrangebylex",
	"zrevrangebyscore", "zrank", "zscore", "xlen", "xrange", "xrevrange", "xread", "xinfo|stream",
	"subscribe", "psubscribe", "unsubscribe", "punsubscribe",
}

// writes are the write commands the blackboard's scripts and pipelines
// run. Scripts run under the caller's ACL user, so every command a script
// calls must be allowed.
var writes = []string{
	"evalsha", "multi", "exec", "discard", "wait",
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
// agent (sorted as given) and the reader. hashTag must match the
// instance's services.redis.hash_tag: it decides the key prefix.
func Users(instance string, hashTag bool, agents []string) []User {
	prefix := "sett:" + instance + ":"
	if hashTag {
		prefix = "sett:{" + instance + "}:"
	}
	keys, chans := "~"+prefix+"*", "&"+prefix+"*"
	base := []string{"resetkeys", "resetchannels", "-@all"}
	allow := func(cmds ...[]string) []string {
		var out []string
		for _, list := range cmds {
			for _, c := range list {
				out = append(out, "+"+c)
			}
		}
		return out
	}
	users := []User{{
		Name: Name(instance, RoleOrchestrator, ""), Role: RoleOrchestrator,
		Rules: concat(base, []string{keys, chans}, allow(connection, reads, writes, maintenance)),
	}}
	for _, a := range agents {
		users = append(users, User{
			Name: Name(instance, RoleCub, a), Role: RoleCub, Agent: a,
			// A cub reads the whole instance (claims, artefacts,
			// memories) but writes only the families its scripts
			// write: its own agent keys and leases, the records a
			// result creates, and the streams it appends to. It
			// never writes another agent's inbox, grants or replicas.
			Rules: concat(base, []string{"%R~" + prefix + "*"}, cubWriteKeys(prefix, a), []string{chans},
				allow(connection, reads, writes)),
		})
	}
	users = append(users, User{
		Name: Name(instance, RoleReader, ""), Role: RoleReader,
		Rules: concat(base, []string{"%R~" + prefix + "*", chans}, allow(connection, reads)),
	})
	return users
}

// cubWriteKeys are the key families a cub of agent writes, as %RW~ patterns.
func cubWriteKeys(prefix, agent string) []string {
	fams := []string{
		"agent:" + agent + ":*", "lease:*:" + agent,
		"artefact:*", "thread:*", "claim:*", "claim_by_artefact:*", "workflow:*",
		"index:*", "events", "orchestrator:queue", "timers", "agents",
		"scheduler:*", "control", "learnings", "tool_memory", "tokens:*",
		// The leader epoch is only read, but a script key must be
		// writable to be passed in KEYS[] at all.
		"orchestrator:epoch",
	}
	out := make([]string, len(fams))
	for i, f := range fams {
		out[i] = "%RW~" + prefix + f
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
