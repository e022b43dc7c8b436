package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisServer is a redis-server child process configured the way the local
// runtime configures an instance's Redis (internal/runtime/local): bound to
// loopback, a password, append-only persistence with the default fsync
// policy (everysec), no RDB snapshots.
type redisServer struct {
	Addr     string
	Password string
	Pid      int
	dir      string
	cmd      *exec.Cmd
	exited   chan struct{}
}

// startRedisServer starts a redis-server with its data and config in dir
// and waits until it answers PING. appendOnly false turns persistence off
// (for the read-only listing benchmarks, which seed 100 000 artefacts).
func startRedisServer(ctx context.Context, dir string, appendOnly bool) (*redisServer, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("bench: redis-server not found on PATH (Debian: apt-get install redis-server)")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("bench: redis dir: %w", err)
	}
	raw := make([]byte, 16)
	if _, err := rand.Read(raw); err != nil {
		return nil, err
	}
	s := &redisServer{Password: hex.EncodeToString(raw), dir: dir}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s.Addr = "127.0.0.1:" + strconv.Itoa(port)
		if lastErr = s.start(ctx, bin, port, appendOnly); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

func (s *redisServer) start(ctx context.Context, bin string, port int, appendOnly bool) error {
	aof := "no"
	if appendOnly {
		aof = "yes"
	}
	conf := strings.Join([]string{
		"bind 127.0.0.1",
		"protected-mode yes",
		"port " + strconv.Itoa(port),
		`dir "` + s.dir + `"`,
		"requirepass " + s.Password,
		"appendonly " + aof,
		`save ""`,
		"daemonize no",
		`logfile "` + filepath.Join(s.dir, "redis.log") + `"`,
		"loglevel warning",
	}, "\n") + "\n"
	confPath := filepath.Join(s.dir, "redis.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		return fmt.Errorf("bench: redis.conf: %w", err)
	}
	cmd := exec.Command(bin, confPath)
	cmd.Dir = s.dir
	// Pdeathsig: a harness killed mid-run leaves no Redis behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("bench: start redis-server: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.cmd, s.exited, s.Pid = cmd, exited, cmd.Process.Pid

	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, Password: s.Password, MaxRetries: -1})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := rdb.Ping(pctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			return fmt.Errorf("bench: redis-server on %s exited at start: %s", s.Addr, strings.TrimSpace(string(log)))
		case <-ctx.Done():
			s.Stop()
			return ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			s.Stop()
			return fmt.Errorf("bench: redis-server on %s not answering after 10s: %v", s.Addr, err)
		}
		// Poll PING against the deadline: the server needs a few
		// milliseconds to bind.
		select {
		case <-exited:
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// URL is the redis:// URL with the password.
func (s *redisServer) URL() string {
	return (&url.URL{Scheme: "redis", User: url.UserPassword("", s.Password), Host: s.Addr, Path: "/0"}).String()
}

// URLVia is the URL of the server reached through addr (a proxy).
func (s *redisServer) URLVia(addr string) string {
	return (&url.URL{Scheme: "redis", User: url.UserPassword("", s.Password), Host: addr, Path: "/0"}).String()
}

// Stop ends the server (SIGTERM, SIGKILL after 5s) and waits for it.
func (s *redisServer) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.exited:
		return
	default:
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("bench: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
