package tool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// baseEnvAllowed are the variables of the cub's own environment that every
// tool receives; everything else must be named in keep or set in extra.
var baseEnvAllowed = []string{"PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR"}

// ScrubbedEnv builds the complete environment of a tool from the cub's own
// environment base (in os.Environ form).
//
// Only an allow-list passes from base: PATH, HOME, LANG, LC_ALL, TZ, TMPDIR
// and the names in keep (the agent's configured pass-through list). Then
// every entry of extra is set (SETT_INSTANCE, SETT_AGENT, SETT_CLAIM_ID,
// SETT_WORKSPACE and the agent's configured environment), overriding a base
// variable of the same name.
//
// Redis credentials never reach tools because nothing passes that is not
// allow-listed: REDIS_URL, SETT_REDIS_PASSWORD and the like stay with the
// cub. As a second guard, names in keep that start with "REDIS" or
// "SETT_REDIS" are ignored, so a pass-through list cannot leak them either.
//
// The result is deterministic: the base variables sorted by name, then extra
// sorted by name, each name once (the last occurrence in base wins, as in
// os/exec). It is never nil, so a child started with it never inherits the
// parent's environment.
func ScrubbedEnv(base []string, keep []string, extra map[string]string) []string {
	allowed := make(map[string]bool, len(baseEnvAllowed)+len(keep))
	for _, name := range baseEnvAllowed {
		allowed[name] = true
	}
	for _, name := range keep {
		if name != "" && !isRedisName(name) {
			allowed[name] = true
		}
	}

	values := make(map[string]string)
	for _, kv := range base {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || !allowed[name] {
			continue
		}
		if _, overridden := extra[name]; overridden {
			continue
		}
		values[name] = value
	}

	env := make([]string, 0, len(values)+len(extra))
	for _, name := range sortedKeys(values) {
		env = append(env, name+"="+values[name])
	}
	for _, name := range sortedKeys(extra) {
		if name == "" || strings.Contains(name, "=") {
			continue // not representable in an environment
		}
		env = append(env, name+"="+extra[name])
	}
	return env
}

// isRedisName reports whether name looks like it carries the cub's Redis
// connection settings.
func isRedisName(name string) bool {
	upper := strings.ToUpper(name)
	return strings.HasPrefix(upper, "REDIS") || strings.HasPrefix(upper, "SETT_REDIS")
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// envValue returns the value of name in env, the last occurrence winning as
// in os/exec, and whether it is set.
func envValue(env []string, name string) (string, bool) {
	value, found := "", false
	for _, kv := range env {
		if n, v, ok := strings.Cut(kv, "="); ok && n == name {
			value, found = v, true
		}
	}
	return value, found
}

// lookPath resolves a command name the way a shell in the child would: a
// name with a slash is used as it is (relative to the working directory of
// the child), any other name is searched in the child's PATH, not in the
// cub's.
//
// Like exec.LookPath since Go 1.19, it refuses to run a program found through
// a relative PATH entry (including an empty one, which means "."): a tool's
// workspace must not be able to shadow a system command.
func lookPath(file string, env []string) (string, error) {
	if file == "" {
		return "", errors.New("the command is empty")
	}
	if strings.Contains(file, "/") {
		return file, nil
	}
	path, _ := envValue(env, "PATH")
	if path == "" {
		return "", fmt.Errorf("%q not found: the child's PATH is empty", file)
	}
	var skipped []string
	for _, dir := range filepath.SplitList(path) {
		if !filepath.IsAbs(dir) {
			skipped = append(skipped, dir)
			continue
		}
		candidate := filepath.Join(dir, file)
		if isExecutable(candidate) {
			return candidate, nil
		}
	}
	if len(skipped) > 0 {
		quoted := make([]string, len(skipped))
		for i, dir := range skipped {
			quoted[i] = strconv.Quote(dir)
		}
		return "", fmt.Errorf("executable %q not found in the child's PATH %q (relative entries %s are not searched)",
			file, path, strings.Join(quoted, ", "))
	}
	return "", fmt.Errorf("executable %q not found in the child's PATH %q", file, path)
}

// isExecutable reports whether path is a regular file (after symlinks) with
// an execute bit set.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	return fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}
