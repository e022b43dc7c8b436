package instance

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Runtimes.
const (
	RuntimeDocker = "docker"
	RuntimeLocal  = "local"
)

// ErrNoInstance is returned when no instance can be found for a command.
var ErrNoInstance = errors.New("instance: no instance here: run `sett up` in this workspace or pass --name")

// Component is one process or container of an instance.
type Component struct {
	// HTTPAddr is where /healthz, /readyz and /metrics answer, reachable
	// from the host ("" when not published).
	HTTPAddr string `json:"http_addr,omitempty"`
	// PID is the process id (local runtime).
	PID int `json:"pid,omitempty"`
	// LogPath is the log file (local runtime).
	LogPath string `json:"log_path,omitempty"`
	// Container is the container name (Docker runtime).
	Container string `json:"container,omitempty"`
}

// Record is what Sett remembers about a started instance.
type Record struct {
	Name      string `json:"name"`
	Runtime   string `json:"runtime"`
	Workspace string `json:"workspace"`
	// RedisURL reaches the instance's Redis from the host, password
	// included.
	RedisURL string `json:"redis_url"`
	// HumanRedisURL and ReaderRedisURL reach the same Redis as the
	// instance's people's ACL user (goals, approvals, pause, retry,
	// cancel) and its read-only user (package acl). Empty when the runtime
	// created no ACL users (an external Redis) and in records of earlier
	// versions: commands then use RedisURL.
	HumanRedisURL  string    `json:"human_redis_url,omitempty"`
	ReaderRedisURL string    `json:"reader_redis_url,omitempty"`
	HashTag        bool      `json:"hash_tag,omitempty"`
	CreatedAt      time.Time `json:"created_at"`
	// StateDir holds runtime files (local runtime: Redis data, logs).
	StateDir string `json:"state_dir,omitempty"`
	// SupervisorPID is the local runtime's supervisor process.
	SupervisorPID int                  `json:"supervisor_pid,omitempty"`
	Components    map[string]Component `json:"components,omitempty"`
	// ConfigPath is the sett.yml `sett up` started the instance from, and
	// ConfigSHA256 the hex SHA-256 of its bytes then: `sett status` warns
	// when the file changed since (a change needs `sett down` and `sett
	// up`). Empty in records of earlier versions.
	ConfigPath   string `json:"config_path,omitempty"`
	ConfigSHA256 string `json:"config_sha256,omitempty"`
	// Isolation says how the local runtime isolates tools, in one line
	// for `sett status` ("" for other runtimes).
	Isolation string `json:"isolation,omitempty"`
	// StoppedAt is when `sett down` stopped the instance and kept its
	// data: the record stays, so that the instance keeps its identity
	// (name, workspace, runtime) while stopped; nil while it runs.
	// Find skips stopped records; `sett up` reuses them; `sett down
	// --purge` removes them.
	StoppedAt *time.Time `json:"stopped_at,omitempty"`
}

// Stopped reports whether `sett down` stopped the instance (its data kept).
func (r *Record) Stopped() bool { return r != nil && r.StoppedAt != nil }

// MarkStopped keeps the record of the instance name of workspace as
// stopped at t (see Record.StoppedAt). A missing record is fine: there is
// nothing to remember.
func MarkStopped(workspace, name string, t time.Time) error {
	r, ok, err := readRecord(recordPath(workspace, name))
	if err != nil || !ok {
		return err
	}
	t = t.UTC()
	r.StoppedAt = &t
	r.SupervisorPID = 0
	return writeJSON(recordPath(workspace, name), r)
}

// SettDir is the workspace's legacy private directory. Earlier versions
// kept instance records and local state in it, where every tool could read
// the Redis password; records found there are read and moved to the state
// home (see MigrateLegacy).
func SettDir(workspace string) string { return filepath.Join(workspace, ".sett") }

// legacyRecordPath is where earlier versions kept the record.
func legacyRecordPath(workspace, name string) string {
	return filepath.Join(SettDir(workspace), "instances", name+".json")
}

// pointer is the user-level index entry that earlier versions wrote next to
// a legacy record.
type pointer struct {
	Name      string `json:"name"`
	Runtime   string `json:"runtime"`
	Workspace string `json:"workspace"`
}

// StateHome is the user-level state directory ($XDG_STATE_HOME/sett, or
// ~/.local/state/sett). It holds the instance records and each runtime's
// per-instance state, outside every workspace, with mode 0700.
func StateHome() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "sett")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "sett-state-"+strconv.Itoa(os.Getuid()))
	}
	return filepath.Join(home, ".local", "state", "sett")
}

// Key names the instance name of workspace in the state home: the name
// plus a hash of the workspace, so that two workspaces may each run an
// instance of the same name (each local instance has its own Redis) and
// neither overwrites or removes the other's files.
func Key(workspace, name string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(workspace)))
	return name + "-" + hex.EncodeToString(sum[:4])
}

// StatePath is a path under the state home for the instance name of
// workspace: StateHome()/<kind>/<Key>.
func StatePath(kind, workspace, name string) string {
	return filepath.Join(StateHome(), kind, Key(workspace, name))
}

// recordPath is where the record lives: in the state home, keyed by name
// and workspace.
func recordPath(workspace, name string) string {
	return StatePath("instances", workspace, name) + ".json"
}

// RecordPath is the file that holds the record of the instance name of
// workspace.
func RecordPath(workspace, name string) string { return recordPath(workspace, name) }

// legacyPointerPath is where records saved by earlier versions kept their
// pointer (by name only); Remove still deletes it when it points to the
// same workspace.
func legacyPointerPath(name string) string {
	return filepath.Join(StateHome(), "instances", name+".json")
}

// Save writes the record (atomically, mode 0600, in a 0700 directory of
// the state home) and removes a legacy record of the workspace.
func Save(r *Record) error {
	if r.Name == "" || r.Workspace == "" {
		return errors.New("instance: a record needs a name and a workspace")
	}
	if err := writeJSON(recordPath(r.Workspace, r.Name), r); err != nil {
		return err
	}
	// The state home may predate this version with a wider mode.
	if err := os.Chmod(StateHome(), 0o700); err != nil {
		return fmt.Errorf("instance: %w", err)
	}
	if err := os.Remove(legacyRecordPath(r.Workspace, r.Name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("instance: remove the legacy record: %w", err)
	}
	return nil
}

// Remove deletes the record (and a legacy record or pointer of the same
// workspace); missing files are fine. It never touches the files of a
// same-named instance of another workspace.
func Remove(workspace, name string) error {
	paths := []string{recordPath(workspace, name), legacyRecordPath(workspace, name)}
	if p, ok := readPointer(legacyPointerPath(name)); ok && filepath.Clean(p.Workspace) == filepath.Clean(workspace) {
		paths = append(paths, legacyPointerPath(name))
	}
	for _, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("instance: remove %s: %w", p, err)
		}
	}
	return nil
}

// readPointer reads one pointer file; ok is false when it is missing or
// unreadable.
func readPointer(path string) (pointer, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return pointer{}, false
	}
	var p pointer
	if json.Unmarshal(b, &p) != nil || p.Name == "" || p.Workspace == "" {
		return pointer{}, false
	}
	return p, true
}

// readRecord reads one record file. A file that is only a pointer (written
// by an earlier version at the same path) is not a record: ok is false.
func readRecord(path string) (r *Record, ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("instance: read %s: %w", path, err)
	}
	var rec Record
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, false, fmt.Errorf("instance: %s is corrupt (%v): remove it or run `sett up` again", path, err)
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(b, &keys) == nil {
		if _, isRecord := keys["created_at"]; !isRecord {
			return nil, false, nil // a pointer: records always carry created_at
		}
	}
	return &rec, true, nil
}

// Load reads the record of name in workspace: from the state home, else
// from the workspace's legacy .sett directory. Errors wrap ErrNoInstance
// when it does not exist.
func Load(workspace, name string) (*Record, error) {
	for _, p := range []string{recordPath(workspace, name), legacyRecordPath(workspace, name)} {
		r, ok, err := readRecord(p)
		if err != nil {
			return nil, err
		}
		if ok {
			return r, nil
		}
	}
	return nil, fmt.Errorf("%w (no instance %q in %s)", ErrNoInstance, name, workspace)
}

// MigrateLegacy moves the records that earlier versions kept in
// <workspace>/.sett/instances into the state home, where tools cannot
// reach them through the workspace, and returns the paths it moved. A
// record already present in the state home wins; the legacy copy is
// removed either way.
func MigrateLegacy(workspace string) ([]string, error) {
	dir := filepath.Join(SettDir(workspace), "instances")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("instance: list %s: %w", dir, err)
	}
	var moved []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(name, ".") {
			continue
		}
		legacy := filepath.Join(dir, e.Name())
		r, ok, err := readRecord(legacy)
		if err != nil || !ok {
			continue
		}
		if _, ok, _ := readRecord(recordPath(workspace, name)); !ok {
			r.Workspace = workspace
			if err := writeJSON(recordPath(workspace, name), r); err != nil {
				return moved, err
			}
		}
		if err := os.Remove(legacy); err != nil {
			return moved, fmt.Errorf("instance: remove %s: %w", legacy, err)
		}
		moved = append(moved, legacy)
	}
	return moved, nil
}

// InWorkspace lists the records of a workspace, sorted by name.
func InWorkspace(workspace string) ([]*Record, error) {
	all, err := All()
	if err != nil {
		return nil, err
	}
	var out []*Record
	seen := map[string]bool{}
	for _, r := range all {
		if filepath.Clean(r.Workspace) == filepath.Clean(workspace) {
			out = append(out, r)
			seen[r.Name] = true
		}
	}
	// Legacy records nobody migrated yet.
	entries, _ := os.ReadDir(filepath.Join(SettDir(workspace), "instances"))
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || seen[name] || strings.HasPrefix(name, ".") {
			continue
		}
		r, ok, err := readRecord(filepath.Join(SettDir(workspace), "instances", e.Name()))
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// All lists the records of every workspace: those in the state home, and
// the legacy records that pointers of earlier versions name.
func All() ([]*Record, error) {
	dir := filepath.Join(StateHome(), "instances")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("instance: list: %w", err)
	}
	var out []*Record
	seen := map[string]bool{} // workspace + name: a legacy pointer and a record may both exist
	add := func(r *Record) {
		key := filepath.Clean(r.Workspace) + "\x00" + r.Name
		if !seen[key] {
			seen[key] = true
			out = append(out, r)
		}
	}
	var pointers []pointer
	for _, e := range entries {
		if filepath.Ext(e.Name()) != ".json" || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if r, ok, err := readRecord(path); err == nil && ok {
			add(r)
		} else if p, ok := readPointer(path); ok {
			pointers = append(pointers, p)
		}
	}
	for _, p := range pointers {
		if r, ok, err := readRecord(legacyRecordPath(p.Workspace, p.Name)); err == nil && ok {
			add(r)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return out[i].Workspace < out[j].Workspace
	})
	return out, nil
}

// FindWorkspace walks up from dir to the nearest directory holding sett.yml
// or .sett; it returns dir itself when there is none.
func FindWorkspace(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	for d := abs; ; {
		for _, marker := range []string{"sett.yml", ".sett"} {
			if _, err := os.Stat(filepath.Join(d, marker)); err == nil {
				return d
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return abs
		}
		d = parent
	}
}

// Find returns the running instance a command means: the named one, or
// else the only one of the workspace. Stopped records (Record.Stopped) are
// not found: a command about a stopped instance gets ErrNoInstance, which
// the CLI explains with the command that starts it again. Errors wrap
// ErrNoInstance, and say what to do when the choice is ambiguous.
func Find(workspace, name string) (*Record, error) {
	if name != "" {
		r, err := Load(workspace, name)
		if err == nil && !r.Stopped() {
			return r, nil
		}
		if err == nil {
			err = fmt.Errorf("%w (instance %q in %s is stopped)", ErrNoInstance, name, workspace)
		}
		all, aerr := All()
		if aerr == nil {
			for _, r := range all {
				if r.Name == name && !r.Stopped() {
					return r, nil
				}
			}
		}
		return nil, err
	}
	all, err := InWorkspace(workspace)
	if err != nil {
		return nil, err
	}
	var recs []*Record
	for _, r := range all {
		if !r.Stopped() {
			recs = append(recs, r)
		}
	}
	switch len(recs) {
	case 0:
		return nil, ErrNoInstance
	case 1:
		return recs[0], nil
	}
	names := make([]string, len(recs))
	for i, r := range recs {
		names[i] = r.Name
	}
	return nil, fmt.Errorf("instance: this workspace has %d instances (%v): pass --name", len(recs), names)
}

// writeJSON writes v to path atomically (temp file + rename), mode 0600.
func writeJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("instance: %w", err)
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("instance: encode: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return fmt.Errorf("instance: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("instance: write %s: %w", path, err)
	}
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("instance: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("instance: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("instance: %w", err)
	}
	return nil
}

// DeriveName turns a workspace directory name into a valid instance name:
// lowercase, runs of other characters as one '-', at most 63 characters;
// "sett" when nothing usable is left.
func DeriveName(workspace string) string {
	base := filepath.Base(filepath.Clean(workspace))
	out := make([]byte, 0, len(base))
	dash := false
	for _, r := range base {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			out = append(out, byte(r))
			dash = false
		case r >= 'A' && r <= 'Z':
			out = append(out, byte(r-'A'+'a'))
			dash = false
		default:
			if !dash && len(out) > 0 {
				out = append(out, '-')
				dash = true
			}
		}
	}
	if len(out) > 63 {
		out = out[:63]
	}
	name := string(out)
	for len(name) > 0 && name[len(name)-1] == '-' {
		name = name[:len(name)-1]
	}
	if name == "" {
		return "sett"
	}
	return name
}

// Access is which Redis user a command connects as.
type Access int

// Accesses.
const (
	// AccessHuman is the people's user: what `forage`, `approve`,
	// `pause`, `retry` and `cancel` do, and every read.
	AccessHuman Access = iota
	// AccessReader is the read-only user: `hoard`, `watch`, a read-only
	// console.
	AccessReader
	// AccessAdmin is the instance's admin (the default user): `gc` and
	// `redis-cli`.
	AccessAdmin
)

// URLFor is the URL a command needing access connects with: the ACL
// user's when the runtime created ACL users, else RedisURL.
func (r *Record) URLFor(access Access) string {
	switch {
	case access == AccessHuman && r.HumanRedisURL != "":
		return r.HumanRedisURL
	case access == AccessReader && r.ReaderRedisURL != "":
		return r.ReaderRedisURL
	}
	return r.RedisURL
}

// WithUser is raw (a Redis URL) with its credentials replaced by user and
// password; raw unchanged when it does not parse.
func WithUser(raw, user, password string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.User = url.UserPassword(user, password)
	return u.String()
}
