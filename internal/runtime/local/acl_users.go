package local

import (
	"net/url"
	"strconv"

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
	// people are the human's and the reader's user names and passwords,
	// for the commands people run (instance.Record.HumanRedisURL).
	people map[acl.Role][2]string
}

// newACLCredentials creates the users; link builds a component's URL from
// its user name and password.
func newACLCredentials(instance string, hashTag bool, agents []string, link func(user, password string) string) (*aclCredentials, error) {
	c := &aclCredentials{urls: map[string]string{}, people: map[acl.Role][2]string{}}
	for _, u := range acl.Users(instance, hashTag, agents) {
		pw, err := acl.NewPassword()
		if err != nil {
			return nil, err
		}
		c.confLines = append(c.confLines, u.ConfLine(pw))
		switch u.Role {
		case acl.RoleOrchestrator:
			c.urls[ComponentOrchestrator] = link(u.Name, pw)
		case acl.RoleCub:
			c.urls[u.Agent] = link(u.Name, pw)
		case acl.RoleHuman, acl.RoleReader:
			c.people[u.Role] = [2]string{u.Name, pw}
		}
	}
	return c, nil
}

// maxSocketPath is the longest Unix socket path Linux takes (sun_path is
// 108 bytes with its terminating NUL).
const maxSocketPath = 107

// componentLink returns how the daemons reach the instance's Redis: over
// its Unix socket when the path fits in a socket address, else over
// loopback TCP on port.
func componentLink(port int, socket string) func(user, password string) string {
	if socket != "" && len(socket) <= maxSocketPath {
		return func(user, password string) string {
			return (&url.URL{Scheme: "unix", User: url.UserPassword(user, password), Path: socket, RawQuery: "db=0"}).String()
		}
	}
	host := "127.0.0.1:" + strconv.Itoa(port)
	return func(user, password string) string {
		return (&url.URL{Scheme: "redis", User: url.UserPassword(user, password), Host: host, Path: "/0"}).String()
	}
}
