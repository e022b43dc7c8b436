package chaos

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/settdev/sett/internal/tiedchild"
)

// process is a daemon the campaign can kill and start again with the
// same arguments. The zero value is not usable; build one with
// newProcess. Safe for concurrent use.
type process struct {
	name string
	argv []string
	env  []string
	dir  string

	mu       sync.Mutex
	cmd      *exec.Cmd
	exited   chan struct{}
	httpAddr string
	// Unexpected counts exits the campaign did not cause.
	unexpected int
	killing    bool
}

func newProcess(name string, argv, env []string, dir string) *process {
	return &process{name: name, argv: argv, env: env, dir: dir}
}

// start starts the process (with --http-addr on a free port) and waits
// until it answers /readyz.
func (p *process) start(ctx context.Context) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("chaos: free port: %w", err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	logf, err := os.OpenFile(filepath.Join(p.dir, p.name+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("chaos: %w", err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	cmd := exec.Command(p.argv[0], append([]string{"--http-addr", addr}, p.argv[1:]...)...)
	cmd.Env, cmd.Dir, cmd.Stdout, cmd.Stderr = p.env, p.dir, logf, logf
	// Tied to the campaign: a thread the campaign ends (redistest's server
	// restarts did) would otherwise kill the daemon forked on it, an exit
	// no fault caused.
	waited, err := tiedchild.Start(cmd)
	if err != nil {
		logf.Close()
		return fmt.Errorf("chaos: start %s: %w", p.name, err)
	}
	exited := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.exited, p.httpAddr, p.killing = cmd, exited, addr, false
	p.mu.Unlock()
	go func() {
		<-waited
		logf.Close()
		p.mu.Lock()
		if !p.killing {
			p.unexpected++
		}
		p.mu.Unlock()
		close(exited)
	}()
	return p.waitReady(ctx, exited, addr)
}

func (p *process) waitReady(ctx context.Context, exited chan struct{}, addr string) error {
	deadline := time.NewTimer(60 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		rctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, "http://"+addr+"/readyz", nil)
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-exited:
			return fmt.Errorf("chaos: %s exited before it was ready (log %s)", p.name, filepath.Join(p.dir, p.name+".log"))
		case <-deadline.C:
			return fmt.Errorf("chaos: %s not ready after 60s (log %s)", p.name, filepath.Join(p.dir, p.name+".log"))
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// kill sends SIGKILL to the process group and waits for the exit.
func (p *process) kill() {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.killing = true
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
}

// pid is the process id of the running process, or 0.
func (p *process) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || p.cmd.Process == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// alive reports whether the process is running.
func (p *process) alive() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited == nil {
		return false
	}
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// unexpectedExits returns how often the process exited on its own.
func (p *process) unexpectedExits() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unexpected
}
