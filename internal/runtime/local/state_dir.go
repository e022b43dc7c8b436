package local

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/settdev/sett/internal/instance"
)

// stateDir is the state directory of one local instance,
// <state home>/local/<name>-<hash> (instance.StatePath); its methods name
// the files in it (see the package documentation for the layout).
type stateDir string

func stateDirOf(workspace, name string) stateDir {
	return stateDir(instance.StatePath("local", workspace, name))
}

// legacyStateDirOf is where earlier versions kept the state, inside the
// workspace (where tools could read the Redis password).
func legacyStateDirOf(workspace, name string) stateDir {
	return stateDir(filepath.Join(instance.SettDir(workspace), "local", name))
}

// recordStateDir is the state directory of a record: the one it names when
// that is valid, else the current location.
func recordStateDir(rec *instance.Record) stateDir {
	if sd, err := checkStateDir(rec); err == nil {
		return sd
	}
	return stateDirOf(rec.Workspace, rec.Name)
}

// migrateLegacyState moves the state directory an earlier version kept in
// the workspace to the state home, unless the state home already has one.
// It refuses while a supervisor still runs from the legacy directory. It
// returns the directory it moved from ("" when there was nothing to move).
func migrateLegacyState(workspace, name string) (string, error) {
	legacy, cur := legacyStateDirOf(workspace, name), stateDirOf(workspace, name)
	if _, err := os.Stat(legacy.path()); err != nil {
		return "", nil
	}
	if _, err := os.Stat(cur.path()); err == nil {
		return "", nil
	}
	if st, err := ReadStatus(legacy.statusFile()); err == nil && supervisorRunning(st.SupervisorPID, legacy) {
		return "", fmt.Errorf("%w: instance %q still runs from its old state directory %s inside the workspace: stop it with `sett down --name %s`, then `sett up` moves its state out of the workspace",
			ErrAlreadyRunning, name, legacy, name)
	}
	if err := os.MkdirAll(filepath.Dir(cur.path()), 0o700); err != nil {
		return "", fmt.Errorf("local: %w", err)
	}
	if err := os.Rename(legacy.path(), cur.path()); err != nil {
		return "", fmt.Errorf("local: move the state of instance %q from %s to %s: %w (move it by hand, or remove it to start afresh)",
			name, legacy, cur, err)
	}
	return legacy.path(), nil
}

func (d stateDir) path() string          { return string(d) }
func (d stateDir) redisData() string     { return filepath.Join(string(d), "redis") }
func (d stateDir) passwordFile() string  { return filepath.Join(string(d), "redis.password") }
func (d stateDir) redisConf() string     { return filepath.Join(string(d), "redis.conf") }
func (d stateDir) redisSocket() string   { return filepath.Join(string(d), "redis.sock") }
func (d stateDir) planFile() string      { return filepath.Join(string(d), "plan.json") }
func (d stateDir) statusFile() string    { return filepath.Join(string(d), "status.json") }
func (d stateDir) logDir() string        { return filepath.Join(string(d), "logs") }
func (d stateDir) supervisorLog() string { return d.logPath("supervisor") }
func (d stateDir) logPath(component string) string {
	return filepath.Join(d.logDir(), component+".log")
}

// checkStateDir returns the state directory a record names, after checking
// that it is the instance's (in the state home, or the legacy one in the
// workspace): Down removes it on purge, so a corrupt or hand-edited record
// must never point it elsewhere.
func checkStateDir(rec *instance.Record) (stateDir, error) {
	if rec.StateDir == "" || rec.Workspace == "" || rec.Name == "" {
		return "", fmt.Errorf("%w: instance %q has no state directory or workspace", ErrBadRecord, rec.Name)
	}
	want := stateDirOf(rec.Workspace, rec.Name)
	if legacy := legacyStateDirOf(rec.Workspace, rec.Name); filepath.Clean(rec.StateDir) == legacy.path() {
		return legacy, nil
	}
	if filepath.Clean(rec.StateDir) != want.path() {
		return "", fmt.Errorf("%w: instance %q names state directory %s, expected %s", ErrBadRecord, rec.Name, rec.StateDir, want)
	}
	return want, nil
}

// mkdirTracked creates dir and its parents with mode 0700 and returns the
// topmost directory it created ("" when dir already existed), so that a
// failed Up removes exactly what it created.
func mkdirTracked(dir string) (string, error) {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("local: %w", err)
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("local: create %s: %w", dir, err)
	}
	if len(missing) == 0 {
		return "", nil
	}
	return missing[len(missing)-1], nil
}

// redisPassword returns the password of the Redis the instance starts:
// the configured one when set, else the one stored with the data by an
// earlier Up, else a new one (32 hex characters from crypto/rand), which
// it stores (mode 0600) so that the next Up reuses it. created reports
// whether it wrote the file.
func (d stateDir) redisPassword(configured string) (pw string, created bool, err error) {
	if configured != "" {
		return configured, false, nil
	}
	b, err := os.ReadFile(d.passwordFile())
	switch {
	case err == nil && len(strings.TrimSpace(string(b))) > 0:
		return strings.TrimSpace(string(b)), false, nil
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return "", false, fmt.Errorf("local: read the Redis password: %w", err)
	}
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return "", false, fmt.Errorf("local: generate a Redis password: %w", err)
	}
	pw = hex.EncodeToString(raw)
	if err := writeFileAtomic(d.passwordFile(), []byte(pw+"\n"), 0o600); err != nil {
		return "", false, err
	}
	return pw, true, nil
}

// writeRedisConf writes the configuration of the instance's redis-server.
// The password goes into this file (mode 0600), never onto the command
// line, where every user of the host could read it in ps.
//
// socket, when not empty, is a Unix socket Redis listens on too (mode 0700,
// like the state directory it is in): the daemons use it, because a round
// trip over it costs a fraction of one over loopback TCP.
func (d stateDir) writeRedisConf(port int, socket, password string, users ...string) error {
	lines := []string{
		"# Written by sett up (local runtime); rewritten on every start.",
		"bind 127.0.0.1",
		"protected-mode yes",
		fmt.Sprintf("port %d", port),
		"dir " + redisQuote(d.redisData()),
		"requirepass " + redisQuote(password),
		"appendonly yes",
		"daemonize no",
		`logfile ""`,
	}
	if socket != "" {
		lines = append(lines, "unixsocket "+redisQuote(socket), "unixsocketperm 700")
	}
	// The instance's ACL users (package acl), after requirepass, which
	// keeps the default user for the CLI.
	lines = append(lines, users...)
	return writeFileAtomic(d.redisConf(), []byte(strings.Join(lines, "\n")+"\n"), 0o600)
}

// redisQuote quotes s for redis.conf, whose parser understands double
// quotes with backslash escapes.
func redisQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// writeFileAtomic writes data to path through a temporary file in the same
// directory and a rename, so that a reader never sees half a file.
func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("local: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("local: write %s: %w", path, err)
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return fmt.Errorf("local: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("local: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("local: %w", err)
	}
	return nil
}
