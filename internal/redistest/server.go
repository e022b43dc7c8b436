package redistest

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/settdev/sett/internal/tiedchild"
)

// Server is a redis-server child process on a loopback port. Its data
// directory is private, and with AppendOnly it survives Kill and Start
// like a real deployment does.
type Server struct {
	Addr       string
	Password   string
	AppendOnly bool
	fsync      string
	dir        string
	extra      []string
	tls        *TLSFiles
	sentinel   bool
	cmd        *exec.Cmd
	exited     <-chan struct{}
}

// ServerOptions configure NewServer.
type ServerOptions struct {
	// Password, when set, is required by the server (requirepass). It is
	// passed in a 0600 config file, never on the command line.
	Password string
	// AppendOnly turns on AOF persistence so that a killed server restarts
	// with its data.
	AppendOnly bool
	// AppendFsync is the AOF fsync policy: "always" (the default: nothing
	// acknowledged is ever lost, which crash tests rely on) or "everysec"
	// (what Sett's runtimes use, for benchmarks).
	AppendFsync string
	// Dir holds the data files; empty means a new temporary directory.
	Dir string
	// Extra are more redis.conf lines (cluster, replication, ACL users).
	Extra []string
	// TLS, when set, makes the server listen with TLS only (no plaintext
	// port) and require client certificates signed by the CA.
	TLS *TLSFiles
	// Sentinel runs the process as a sentinel (redis-server --sentinel);
	// Extra then holds the sentinel directives.
	Sentinel bool
	// Host is the address the server binds to and is reached at; empty
	// is 127.0.0.1. Containers reach a server on the Docker host by the
	// host's address on the Docker bridge, so a topology that containers
	// use binds there (and its nodes announce that address).
	Host string
}

// NewServer starts a redis-server on a free loopback port and waits until
// it answers PING. The caller must Stop it.
func NewServer(opts ServerOptions) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New("redistest: redis-server not found on PATH: install it (Debian: apt-get install redis-server) — integration tests need a real Redis")
	}
	dir := opts.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "sett-redis-*"); err != nil {
			return nil, fmt.Errorf("redistest: temp dir: %w", err)
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("redistest: data dir: %w", err)
	}
	if opts.AppendFsync == "" {
		opts.AppendFsync = "always"
	}
	host := opts.Host
	if host == "" {
		host = "127.0.0.1"
	}
	s := &Server{Password: opts.Password, AppendOnly: opts.AppendOnly, fsync: opts.AppendFsync, dir: dir,
		extra: opts.Extra, tls: opts.TLS, sentinel: opts.Sentinel}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		s.Addr = net.JoinHostPort(host, strconv.Itoa(port))
		if lastErr = s.start(bin); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

// URL is the redis:// (rediss:// with TLS) URL of the server, with the
// password when set.
func (s *Server) URL() string {
	scheme := "redis://"
	if s.tls != nil {
		scheme = "rediss://"
	}
	if s.Password != "" {
		return scheme + ":" + s.Password + "@" + s.Addr + "/0"
	}
	return scheme + s.Addr + "/0"
}

// ClientTLS is a TLS config that trusts the server and presents the client
// certificate, or nil for a plaintext server.
func (s *Server) ClientTLS() *tls.Config {
	if s.tls == nil {
		return nil
	}
	return s.tls.ClientConfig()
}

// Raw returns a go-redis client on this one node (TLS and password
// included); the caller closes it.
func (s *Server) Raw() *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr, Password: s.Password, TLSConfig: s.ClientTLS()})
}

func (s *Server) start(bin string) error {
	host, port, _ := net.SplitHostPort(s.Addr)
	conf := []string{"bind " + host, `dir "` + s.dir + `"`, "daemonize no", `logfile ""`, "loglevel warning"}
	if s.tls != nil {
		conf = append(conf, "port 0", "tls-port "+port,
			`tls-cert-file "`+s.tls.ServerCert+`"`, `tls-key-file "`+s.tls.ServerKey+`"`,
			`tls-ca-cert-file "`+s.tls.CA+`"`, "tls-auth-clients yes", "tls-replication yes")
	} else {
		conf = append(conf, "port "+port)
	}
	if !s.sentinel {
		conf = append(conf, `save ""`,
			"appendonly "+map[bool]string{true: "yes", false: "no"}[s.AppendOnly],
			"appendfsync "+s.fsync)
	}
	if s.Password != "" {
		conf = append(conf, "requirepass "+s.Password)
	}
	conf = append(conf, s.extra...)
	confPath := filepath.Join(s.dir, "redis.conf")
	if s.sentinel {
		// A sentinel rewrites its config file with what it learns (the
		// current master, the replicas, the other sentinels); after a
		// restart it must keep that, not the first version.
		confPath = filepath.Join(s.dir, "sentinel.conf")
	}
	if _, err := os.Stat(confPath); !s.sentinel || err != nil {
		if err := os.WriteFile(confPath, []byte(strings.Join(conf, "\n")+"\n"), 0o600); err != nil {
			return fmt.Errorf("redistest: write %s: %w", filepath.Base(confPath), err)
		}
	}
	args := []string{confPath}
	if s.sentinel {
		args = append(args, "--sentinel")
	}
	cmd := exec.Command(bin, args...)
	logs, _ := cmd.StdoutPipe() // --logfile "" sends the log to stdout
	// Tied to the test process: no goroutine of it that ends its thread (a
	// cub running in-process retires tool spawners) can kill the server.
	exited, err := tiedchild.Start(cmd)
	if err != nil {
		return fmt.Errorf("redistest: start redis-server: %w", err)
	}
	var out strings.Builder
	scanDone := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(logs)
		for sc.Scan() {
			if out.Len() < 4096 {
				out.WriteString(sc.Text() + "\n")
			}
		}
		close(scanDone)
	}()
	s.cmd, s.exited = cmd, exited

	rdb := redis.NewClient(&redis.Options{Addr: s.Addr, Password: s.Password, MaxRetries: -1, TLSConfig: s.ClientTLS()})
	defer rdb.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-exited:
			<-scanDone
			return fmt.Errorf("redistest: redis-server on %s exited at start: %s", s.Addr, strings.TrimSpace(out.String()))
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := rdb.Ping(ctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			_ = s.Kill()
			return fmt.Errorf("redistest: redis-server on %s not ready after 10s: %v", s.Addr, err)
		}
		// Poll the observable state (PING) against the deadline; the
		// server needs a few milliseconds to bind.
		select {
		case <-exited:
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// Kill stops the server with SIGKILL, like a crash. With AppendOnly the
// data survives for Start.
func (s *Server) Kill() error {
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	<-s.exited
	return nil
}

// Start restarts a killed server on the same address and data directory.
func (s *Server) Start() error {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return err
	}
	return s.start(bin)
}

// Stop kills the server and removes its data directory.
func (s *Server) Stop() {
	_ = s.Kill()
	_ = os.RemoveAll(s.dir)
}

// Shutdown stops the server cleanly (SIGTERM, so it flushes its AOF;
// SIGKILL after 5s) and keeps its data directory.
func (s *Server) Shutdown() {
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

// Pid is the server's process id.
func (s *Server) Pid() int {
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Dir is the server's data directory.
func (s *Server) Dir() string { return filepath.Clean(s.dir) }
