package docker

import (
	"net/url"
	"strings"

	"github.com/settdev/sett/internal/acl"
)

// aclUsers creates the instance's ACL users in the Redis container the
// runtime starts (redis-server --user arguments, passwords hashed) and
// returns each component's Redis URL: ComponentOrchestrator's and each
// agent's, by agent name. Passwords are new on every `sett up`, like the
// containers.
//
// people are the human's and the reader's user names and passwords, for
// the record's URLs (instance.Record.HumanRedisURL).
func aclUsers(instance string, hashTag bool, agents []string, host string) (args []string, urls map[string]string, people map[acl.Role][2]string, err error) {
	urls, people = map[string]string{}, map[acl.Role][2]string{}
	for _, u := range acl.Users(instance, hashTag, agents) {
		pw, err := acl.NewPassword()
		if err != nil {
			return nil, nil, nil, err
		}
		args = append(args, u.ServerArgs(pw)...)
		link := (&url.URL{Scheme: "redis", User: url.UserPassword(u.Name, pw), Host: host, Path: "/0"}).String()
		switch u.Role {
		case acl.RoleOrchestrator:
			urls[ComponentOrchestrator] = link
		case acl.RoleCub:
			urls[u.Agent] = link
		case acl.RoleHuman, acl.RoleReader:
			people[u.Role] = [2]string{u.Name, pw}
		}
	}
	return args, urls, people, nil
}

// withRedisURL replaces SETT_REDIS_URL in env when link is not empty.
func withRedisURL(env []string, link string) []string {
	if link == "" {
		return env
	}
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, "SETT_REDIS_URL=") {
			out = append(out, kv)
		}
	}
	return append(out, "SETT_REDIS_URL="+link)
}
