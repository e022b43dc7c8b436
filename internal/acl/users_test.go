package acl

import (
	"slices"
	"strings"
	"testing"
)

func TestUsersStayInTheirInstance(t *testing.T) {
	for _, hashTag := range []bool{false, true} {
		prefix := map[bool]string{false: "sett:prod:", true: "sett:{prod}:"}[hashTag]
		users := Users("prod", hashTag, []string{"coder", "planner"})
		var names []string
		for _, u := range users {
			names = append(names, u.Name)
			for _, r := range u.Rules {
				if i := strings.IndexAny(r, "~&"); i >= 0 && !strings.HasPrefix(r[i+1:], prefix) {
					t.Errorf("%s: rule %q reaches outside %s", u.Name, r, prefix)
				}
				for _, bad := range []string{"+flushall", "+flushdb", "+config", "+keys", "+debug", "+@all", "+@dangerous", "+script|flush", "+acl"} {
					if r == bad {
						t.Errorf("%s: rule %q", u.Name, r)
					}
				}
			}
			if u.Role == RoleReader && slices.ContainsFunc(u.Rules, func(r string) bool { return r == "+evalsha" || strings.HasPrefix(r, "~") }) {
				t.Errorf("reader can write: %v", u.Rules)
			}
			if u.Role == RoleCub && slices.ContainsFunc(u.Rules, func(r string) bool {
				return strings.Contains(r, "agent:") && !strings.Contains(r, "agent:"+u.Agent+":")
			}) {
				t.Errorf("cub %s writes another agent's keys: %v", u.Agent, u.Rules)
			}
		}
		want := []string{"sett-prod-orchestrator", "sett-prod-cub-coder", "sett-prod-cub-planner", "sett-prod-human", "sett-prod-reader"}
		if !slices.Equal(names, want) {
			t.Fatalf("users %v, want %v", names, want)
		}
	}
	u := Users("prod", false, nil)[0]
	if line := u.ConfLine("pw"); strings.Contains(line, "pw ") || !strings.Contains(line, " #") {
		t.Errorf("conf line keeps the password in clear: %s", line)
	}
}

// grants reports whether some rule of u (its root or one selector) allows
// command cmd on a key matching family (after the prefix), going by the
// literal patterns and commands of the rules.
func grants(u User, prefix, family, cmd string) bool {
	for _, r := range u.Rules {
		if !strings.HasPrefix(r, "(") {
			continue
		}
		words := strings.Fields(strings.Trim(r, "()"))
		if slices.Contains(words, "~"+prefix+family) && slices.Contains(words, "+"+cmd) {
			return true
		}
	}
	return false
}

func TestNarrowUsersHoldOnlyWhatTheyNeed(t *testing.T) {
	const prefix = "sett:prod:"
	users := map[Role]User{}
	for _, u := range Users("prod", false, []string{"coder"}) {
		users[u.Role] = u
	}
	cub, human := users[RoleCub], users[RoleHuman]
	for _, tc := range []struct {
		u      User
		family string
		cmd    string
		want   bool
	}{
		{cub, "artefact:*", "hsetnx", true},
		{cub, "artefact:*", "hset", false},
		{cub, "artefact:*", "del", false},
		{cub, "workflow:*", "hincrby", true},
		{cub, "workflow:*", "hset", false},
		{cub, "workflow:*", "del", false},
		{cub, "events", "xadd", true},
		{cub, "events", "xtrim", false},
		{cub, "events", "xdel", false},
		{cub, "events", "del", false},
		{cub, "orchestrator:epoch", "incr", false},
		{cub, "orchestrator:epoch", "set", false},
		{cub, "privilege:end_workflow", "set", false},
		{cub, "agent:coder:*", "xack", true},
		{cub, "*", "evalsha", true},
		{human, "artefact:*", "hset", false},
		{human, "workflow:*", "hset", true},
		{human, "events", "xtrim", false},
		{human, "privilege:end_workflow", "set", true},
		{human, "privilege:decide", "set", true},
		{human, "privilege:lead", "set", false},
		{human, "privilege:maintain", "set", false},
	} {
		if got := grants(tc.u, prefix, tc.family, tc.cmd); got != tc.want {
			t.Errorf("%s: %s on %s = %v, want %v", tc.u.Name, tc.cmd, tc.family, got, tc.want)
		}
	}
	for _, u := range []User{cub, human, users[RoleReader]} {
		for _, r := range u.Rules {
			if r == "~"+prefix+"*" || strings.HasPrefix(r, "%RW~") || strings.HasPrefix(r, "%W~") {
				t.Errorf("%s: root rule %q writes keys: writes go in selectors, family by family", u.Name, r)
			}
		}
	}
}
