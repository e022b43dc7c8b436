package cli

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/settdev/sett/internal/instance"
)

// The compose stack (docker-compose.yml of the Sett repository) reads its
// settings from .env next to the compose file, as both docker-compose (v1)
// and docker compose (v2) do. `sett init --compose` (or `make
// compose-env`) writes that file; the sett commands run in its directory
// find the stack from it, without --redis-url or --name.
const (
	composeEnvFile  = ".env"
	composeFile     = "docker-compose.yml"
	composeInstance = "compose" // SETT_INSTANCE's default in docker-compose.yml
	// composeWorkspaceDir is the workspace `sett init --compose` makes
	// next to the compose file, unless --workspace names another.
	composeWorkspaceDir = "workspace"
)

// composeStack is a compose stack as its .env describes it.
type composeStack struct {
	Dir       string // the directory of docker-compose.yml and .env
	Project   string // COMPOSE_PROJECT_NAME
	Instance  string // SETT_INSTANCE
	Password  string // SETT_REDIS_PASSWORD
	Port      int    // SETT_REDIS_PORT
	Workspace string // SETT_WORKSPACE_DIR
}

// RedisURL reaches the stack's Redis from the host.
func (s *composeStack) RedisURL() string {
	u := url.URL{Scheme: "redis", User: url.UserPassword("", s.Password), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)), Path: "/0"}
	return u.String()
}

// Where describes the stack without its password.
func (s *composeStack) Where() string {
	return fmt.Sprintf("compose project %s (Redis 127.0.0.1:%d, from %s)", s.Project, s.Port, filepath.Join(s.Dir, composeEnvFile))
}

// parseDotEnv reads KEY=VALUE lines as Compose does for the simple values
// `sett init --compose` writes: comments and blank lines are skipped, an
// optional "export " prefix and matching quotes around the value are
// removed.
func parseDotEnv(b []byte) map[string]string {
	env := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		line = strings.TrimPrefix(line, "export ")
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
			v = v[1 : len(v)-1]
		}
		env[k] = v
	}
	return env
}

// composeStackFromEnv reads the stack's settings from the .env of dir;
// ok is false when the file does not describe a Sett compose stack (no
// SETT_REDIS_PASSWORD). A stack without a port or with a bad one is an
// error that says how to fix it.
func composeStackFromEnv(dir string, env map[string]string) (s *composeStack, ok bool, err error) {
	pw := env["SETT_REDIS_PASSWORD"]
	if pw == "" {
		return nil, false, nil
	}
	s = &composeStack{Dir: dir, Project: env["COMPOSE_PROJECT_NAME"], Instance: env["SETT_INSTANCE"], Password: pw,
		Workspace: env["SETT_WORKSPACE_DIR"]}
	if s.Project == "" {
		s.Project = filepath.Base(dir) // Compose's default project name
	}
	if s.Instance == "" {
		s.Instance = composeInstance
	}
	port := env["SETT_REDIS_PORT"]
	if port == "" {
		port = "6379" // docker-compose.yml's default before .env named it
	}
	p, perr := strconv.Atoi(port)
	if perr != nil || p < 1 || p > 65535 {
		return nil, false, fmt.Errorf("%s: SETT_REDIS_PORT=%q is not a port: set a free one (or regenerate the file with `sett init --compose --force`)",
			filepath.Join(dir, composeEnvFile), port)
	}
	s.Port = p
	return s, true, nil
}

// composeStackIn is the compose stack of dir: docker-compose.yml and a
// .env that names a Redis password. ok is false when dir has none.
func composeStackIn(dir string) (*composeStack, bool, error) {
	if _, err := os.Stat(filepath.Join(dir, composeFile)); err != nil {
		return nil, false, nil
	}
	b, err := os.ReadFile(filepath.Join(dir, composeEnvFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", filepath.Join(dir, composeEnvFile), err)
	}
	return composeStackFromEnv(dir, parseDotEnv(b))
}

// composeProjectName is a project name unique to dir: "sett-", the
// directory's name as an instance name, and a hash of its path, so that
// two checkouts never share containers, network or volume.
func composeProjectName(dir string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(dir)))
	return "sett-" + instance.DeriveName(dir) + "-" + hex.EncodeToString(sum[:3])
}

// composeEnvSettings is what .env holds.
type composeEnvSettings struct {
	Project, Instance, Password, Workspace, ConfigFile, UIToken string
	Port, ConsolePort, UID, GID                                 int
}

// renderComposeEnv is the text of .env.
func renderComposeEnv(s composeEnvSettings) string {
	return fmt.Sprintf(`# The Sett compose stack of docker-compose.yml, written by `+"`sett init --compose`"+`
# (make compose-env). docker-compose (v1) and docker compose (v2) read it from
# this directory; so do the sett commands run here (sett status, sett
# redis-cli PING), which find the stack without flags. It holds the Redis
# password: keep it private (mode 0600), outside the workspace.
# docs/operations.md, "Docker Compose", explains every variable.

# Unique to this directory: containers, network and volume of two checkouts
# never collide.
COMPOSE_PROJECT_NAME=%s
SETT_INSTANCE=%s
SETT_REDIS_PASSWORD=%s
# Redis on the host's loopback (free when this file was written).
SETT_REDIS_PORT=%d
# The directory the agents mount at /workspace (the coder agent read-write).
SETT_WORKSPACE_DIR=%s
# The sett.yml the stack runs; its agents must match the services.
SETT_CONFIG_FILE=%s
# The user the daemons and agents run as (yours; 65532 instead of root).
SETT_UID=%d
SETT_GID=%d
# The optional web console (docker-compose --profile console up -d):
# http://127.0.0.1:<SETT_CONSOLE_PORT>/?token=<SETT_UI_TOKEN>
SETT_CONSOLE_PORT=%d
SETT_UI_TOKEN=%s
`, s.Project, s.Instance, s.Password, s.Port, s.Workspace, s.ConfigFile, s.UID, s.GID, s.ConsolePort, s.UIToken)
}

// composeUser is the user the stack runs as: the caller's, or 65532 (the
// images' nonroot user) instead of root.
func composeUser(uid, gid int) (int, int) {
	if uid == 0 {
		return 65532, 65532
	}
	return uid, gid
}

// freePort returns a loopback port nothing listens on: the first free one
// of the hundred from first, else one the kernel picks.
func freePort(first int) (int, error) {
	for p := first; p < first+100; p++ {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err == nil {
			l.Close()
			return p, nil
		}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// initCompose writes dir/.env for the compose stack and makes its
// workspace. An existing .env is kept unless force; with force its Redis
// password is kept (the stack's Redis volume was made with it).
func initCompose(out io.Writer, dir, workspace string, force bool) error {
	if _, err := os.Stat(filepath.Join(dir, composeFile)); err != nil {
		return fmt.Errorf("no %s in %s: run `sett init --compose` in the directory of the compose file (the root of the Sett repository)", composeFile, dir)
	}
	envPath := filepath.Join(dir, composeEnvFile)
	old, err := os.ReadFile(envPath)
	switch {
	case err == nil && !force:
		return fmt.Errorf("%s exists: the stack keeps using it (`sett init --compose --force` rewrites it with a new port and the same password)", envPath)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	password := parseDotEnv(old)["SETT_REDIS_PASSWORD"]
	if password == "" {
		if password, err = randomHex(24); err != nil {
			return err
		}
	}
	token, err := randomHex(24)
	if err != nil {
		return err
	}
	if workspace == "" {
		workspace = filepath.Join(dir, composeWorkspaceDir)
	} else if !filepath.IsAbs(workspace) {
		workspace = filepath.Join(dir, workspace)
	}
	workspace = filepath.Clean(workspace)
	if rel, err := filepath.Rel(workspace, dir); err == nil && !strings.HasPrefix(rel, "..") {
		return fmt.Errorf("--workspace %s contains %s: the agents would see %s (the Redis password) and the Sett sources; choose a directory of its own", workspace, dir, composeEnvFile)
	}
	uid, gid := composeUser(os.Getuid(), os.Getgid())
	if err := os.MkdirAll(workspace, 0o755); err != nil {
		return fmt.Errorf("make the workspace: %w", err)
	}
	if os.Getuid() == 0 {
		// The agents run as 65532: the rw coder must write the workspace.
		if err := os.Chown(workspace, uid, gid); err != nil {
			return fmt.Errorf("hand the workspace to uid %d: %w", uid, err)
		}
	}
	port, err := freePort(6380) // next to Redis's own 6379
	if err != nil {
		return err
	}
	consolePort, err := freePort(7070) // sett ui's default
	if err != nil {
		return err
	}
	text := renderComposeEnv(composeEnvSettings{Project: composeProjectName(dir), Instance: composeInstance, Password: password,
		Workspace: workspace, ConfigFile: "./sett.yml.example", Port: port, UID: uid, GID: gid, ConsolePort: consolePort, UIToken: token})
	tmp := envPath + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, envPath); err != nil {
		return err
	}
	fmt.Fprintf(out, `Wrote %s (project %s, Redis on 127.0.0.1:%d, workspace %s).

Next, in %s:
  docker-compose up -d       (or docker compose up -d --wait with Compose v2)
  sett status                finds the stack from this directory
  sett forage --goal "Describe what you want done" --wait
  docker-compose down        stops it (the Redis volume stays; -v deletes it)
The web console is optional: docker-compose --profile console up -d, then
  http://127.0.0.1:%d/?token=<SETT_UI_TOKEN in .env>
`, envPath, composeProjectName(dir), port, workspace, dir, consolePort)
	return nil
}

// randomHex is n random bytes in hex.
func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}
