package config

import (
	"regexp"
	"strconv"
	"strings"
)

// DefaultPidsLimit caps the processes of each orchestrator and agent
// container when services.containers.pids_limit is 0.
const DefaultPidsLimit = 1024

// ContainersConfig says how the Docker runtime runs the orchestrator and
// agent containers (services.containers). Every key is optional; the
// local runtime ignores them (and `sett up` says so when it matters).
type ContainersConfig struct {
	// User runs the orchestrator and agent containers, "uid" or
	// "uid:gid". Empty: the user who runs `sett up`, so that files tools
	// write in an rw workspace belong to that user; 65532:65532 when that
	// is root. Root (0) is refused: the daemons need no privileges.
	User string `yaml:"user"`

	// PidsLimit caps the number of processes in each container. 0 means
	// DefaultPidsLimit (1024); -1 means no limit.
	PidsLimit int64 `yaml:"pids_limit"`

	// WritableRoot leaves the containers' root filesystem writable.
	// Default false: it is read-only, with a writable tmpfs at /tmp (the
	// tools' HOME).
	WritableRoot bool `yaml:"writable_root"`
}

var containerUserPattern = regexp.MustCompile(`^[0-9]+(:[0-9]+)?$`)

// EffectivePidsLimit is the limit to apply: DefaultPidsLimit for 0, none
// (0) for -1.
func (c ContainersConfig) EffectivePidsLimit() int64 {
	switch {
	case c.PidsLimit == 0:
		return DefaultPidsLimit
	case c.PidsLimit < 0:
		return 0
	}
	return c.PidsLimit
}

func (c *ContainersConfig) validate(v *validator, p string) {
	if c.User != "" {
		uid, _, _ := strings.Cut(c.User, ":")
		if !containerUserPattern.MatchString(c.User) {
			v.addf(p+".user", "%q is not a numeric user (write \"uid\" or \"uid:gid\", for example \"1000:1000\")", c.User)
		} else if n, _ := strconv.Atoi(uid); n == 0 {
			v.addf(p+".user", "%q is root: the containers run without privileges (leave it empty to use your own uid:gid)", c.User)
		}
	}
	if c.PidsLimit < -1 {
		v.addf(p+".pids_limit", "%d is not valid (use a positive number, 0 for the default %d, or -1 for no limit)", c.PidsLimit, DefaultPidsLimit)
	}
}
