package cli

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/settdev/sett/internal/connect"
	"github.com/settdev/sett/internal/instance"
)

// The compose stack's files and the stack itself (connect.ComposeStack)
// are package connect's, which finds the stack for every command run in
// its directory; this file writes them (`sett init --compose`).

// composeWorkspaceDir is the workspace `sett init --compose` makes next
// to the compose file, unless --workspace names another.
const composeWorkspaceDir = "workspace"

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
	if _, err := os.Stat(filepath.Join(dir, connect.ComposeFile)); err != nil {
		return fmt.Errorf("no %s in %s: run `sett init --compose` in the directory of the compose file (the root of the Sett repository)", connect.ComposeFile, dir)
	}
	envPath := filepath.Join(dir, connect.ComposeEnvFile)
	old, err := os.ReadFile(envPath)
	switch {
	case err == nil && !force:
		return fmt.Errorf("%s exists: the stack keeps using it (`sett init --compose --force` rewrites it with a new port and the same password)", envPath)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	password := connect.ParseDotEnv(old)["SETT_REDIS_PASSWORD"]
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
		return fmt.Errorf("--workspace %s contains %s: the agents would see %s (the Redis password) and the Sett sources; choose a directory of its own", workspace, dir, connect.ComposeEnvFile)
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
	text := renderComposeEnv(composeEnvSettings{Project: composeProjectName(dir), Instance: connect.ComposeInstance, Password: password,
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
