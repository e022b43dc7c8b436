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
