package local

import (
	"net/url"

	"github.com/settdev/sett/internal/acl"
)

// aclCredentials are the ACL users of a Redis the local runtime starts:
// the redis.conf lines that create them and each component's URL, so that
// every cub and the orchestrator run on their own restricted user. New
// passwords on every start: redis.conf is rewritten then too.
type aclCredentials struct {
	confLines []string
	// urls by component: ComponentOrchestrator or an agent name.
	urls map[string]string
}

func newACLCredentials(instance string, hashTag bool, agents []string, host string) (*aclCredentials, error) {
	c := &aclCredentials{urls: map[string]string{}}
	for _, u := range acl.Users(instance, hashTag, agents) {
		pw, err := acl.NewPassword()
		if err != nil {
			return nil, err
		}
		c.confLines = append(c.confLines, u.ConfLine(pw))
		link := (&url.URL{Scheme: "redis", User: url.UserPassword(u.Name, pw), Host: host, Path: "/0"}).String()
		switch u.Role {
		case acl.RoleOrchestrator:
			c.urls[ComponentOrchestrator] = link
		case acl.RoleCub:
			c.urls[u.Agent] = link
		}
	}
	return c, nil
}
