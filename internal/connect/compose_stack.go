package connect

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The compose stack (docker-compose.yml of the Sett repository) reads its
// settings from .env next to the compose file, as both docker-compose (v1)
// and docker compose (v2) do. `sett init --compose` (or `make
// compose-env`) writes that file; the sett commands run in its directory
// find the stack from it, without --redis-url or --name.
const (
	// ComposeEnvFile is the stack's settings, next to ComposeFile.
	ComposeEnvFile = ".env"
	// ComposeFile is the compose file of the Sett repository.
	ComposeFile = "docker-compose.yml"
	// ComposeInstance is SETT_INSTANCE's default in docker-compose.yml.
	ComposeInstance = "compose"
)

// ComposeStack is a compose stack as its .env describes it.
type ComposeStack struct {
	Dir       string // the directory of docker-compose.yml and .env
	Project   string // COMPOSE_PROJECT_NAME
	Instance  string // SETT_INSTANCE
	Password  string // SETT_REDIS_PASSWORD
	Port      int    // SETT_REDIS_PORT
	Workspace string // SETT_WORKSPACE_DIR
}

// RedisURL reaches the stack's Redis from the host.
func (s *ComposeStack) RedisURL() string {
	u := url.URL{Scheme: "redis", User: url.UserPassword("", s.Password), Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port)), Path: "/0"}
	return u.String()
}

// Where describes the stack without its password.
func (s *ComposeStack) Where() string {
	return fmt.Sprintf("compose project %s (Redis 127.0.0.1:%d, from %s)", s.Project, s.Port, filepath.Join(s.Dir, ComposeEnvFile))
}

// ParseDotEnv reads KEY=VALUE lines as Compose does for the simple values
// `sett init --compose` writes: comments and blank lines are skipped, an
// optional "export " prefix and matching quotes around the value are
// removed.
func ParseDotEnv(b []byte) map[string]string {
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
func composeStackFromEnv(dir string, env map[string]string) (s *ComposeStack, ok bool, err error) {
	pw := env["SETT_REDIS_PASSWORD"]
	if pw == "" {
		return nil, false, nil
	}
	s = &ComposeStack{Dir: dir, Project: env["COMPOSE_PROJECT_NAME"], Instance: env["SETT_INSTANCE"], Password: pw,
		Workspace: env["SETT_WORKSPACE_DIR"]}
	if s.Project == "" {
		s.Project = filepath.Base(dir) // Compose's default project name
	}
	if s.Instance == "" {
		s.Instance = ComposeInstance
	}
	port := env["SETT_REDIS_PORT"]
	if port == "" {
		port = "6379" // docker-compose.yml's default before .env named it
	}
	p, perr := strconv.Atoi(port)
	if perr != nil || p < 1 || p > 65535 {
		return nil, false, fmt.Errorf("%s: SETT_REDIS_PORT=%q is not a port: set a free one (or regenerate the file with `sett init --compose --force`)",
			filepath.Join(dir, ComposeEnvFile), port)
	}
	s.Port = p
	return s, true, nil
}

// ComposeStackIn is the compose stack of dir: docker-compose.yml and a
// .env that names a Redis password. ok is false when dir has none; an
// unreadable .env or a bad port is an error naming the file.
func ComposeStackIn(dir string) (*ComposeStack, bool, error) {
	if _, err := os.Stat(filepath.Join(dir, ComposeFile)); err != nil {
		return nil, false, nil
	}
	b, err := os.ReadFile(filepath.Join(dir, ComposeEnvFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", filepath.Join(dir, ComposeEnvFile), err)
	}
	return composeStackFromEnv(dir, ParseDotEnv(b))
}
