package worker

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/moby/moby/api/types/events"
	"github.com/moby/moby/client"
)

// flakyDockerSocket is a Unix socket in front of the real Docker socket
// that drops the connection of the first drops requests to stop a
// container, without an answer: what a busy or restarting daemon, or a
// connection closed under the client, looks like. Everything else passes
// through unchanged (attach streams included).
type flakyDockerSocket struct {
	path    string
	drops   atomic.Int32
	dropped atomic.Int32
}

func startFlakyDockerSocket(t *testing.T, drops int32) *flakyDockerSocket {
	t.Helper()
	upstream := strings.TrimPrefix(hostOf(t), "unix://")
	dir, err := os.MkdirTemp("", "dkr") // short: a socket path has ~100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	f := &flakyDockerSocket{path: filepath.Join(dir, "docker.sock")}
	f.drops.Store(drops)
	ln, err := net.Listen("unix", f.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go f.relay(c, upstream)
		}
	}()
	return f
}

func (f *flakyDockerSocket) relay(c net.Conn, upstream string) {
	defer c.Close()
	u, err := net.Dial("unix", upstream)
	if err != nil {
		return
	}
	defer u.Close()
	go func() { _, _ = io.Copy(c, u); _ = c.Close() }()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			// A read may start with the tail of the previous request on the
			// same kept-alive connection: look for the stop's request line
			// anywhere at a line start, and pass on what comes before it.
			if at := stopRequestAt(buf[:n]); at >= 0 && f.drops.Add(-1) >= 0 {
				_, _ = u.Write(buf[:at])
				f.dropped.Add(1)
				return
			}
			if _, err := u.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// stopRequestAt is the offset of a "POST …/stop" request line starting a
// line in b, or -1.
func stopRequestAt(b []byte) int {
	for off := 0; off < len(b); {
		i := bytes.Index(b[off:], []byte("POST "))
		if i < 0 {
			return -1
		}
		at := off + i
		if (at == 0 || b[at-1] == '\n') && bytes.Contains(firstLine(b[at:]), []byte("/stop")) {
			return at
		}
		off = at + 1
	}
	return -1
}

func firstLine(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		return b[:i]
	}
	return b
}

// TestStopIsRetriedWhenDockerDropsTheRequest: a stop request lost on its
// way must not turn into the forced removal's SIGKILL; the launcher asks
// again and the worker gets SIGTERM (its trap exits 143, not 137).
func TestStopIsRetriedWhenDockerDropsTheRequest(t *testing.T) {
	cli := dockerClient(t)
	proxy := startFlakyDockerSocket(t, 1)
	s := testSpec(t, "trap 'exit 143' TERM; sleep 300 & wait")
	s.StopTimeout = 10 * time.Second
	s.DockerHost = "unix://" + proxy.path

	evctx, stopEvents := context.WithCancel(context.Background())
	defer stopEvents()
	f := make(client.Filters).Add("type", "container").Add("event", "die")
	for k, v := range s.Labels {
		f = f.Add("label", k+"="+v)
	}
	ev := cli.Events(evctx, client.EventsListOptions{Filters: f})

	var stderr bytes.Buffer
	l, err := NewLauncher(s, nil, strings.NewReader("{}"), io.Discard, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		code, _ := l.Run(ctx)
		done <- code
	}()
	runningContainerOf(t, cli, s)
	cancel()
	if code := <-done; code != ExitSignalled {
		t.Errorf("Run = %d, want %d (stopped)", code, ExitSignalled)
	}
	if proxy.dropped.Load() != 1 {
		t.Fatalf("stop requests dropped = %d, want 1 (the test's fault did not happen)", proxy.dropped.Load())
	}
	var die events.Message
	select {
	case die = <-ev.Messages:
	case err := <-ev.Err:
		t.Fatalf("docker events: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("no die event for the worker within a minute")
	}
	if code := die.Actor.Attributes["exitCode"]; code != "143" {
		t.Errorf("worker exit code %s, want 143 (its SIGTERM trap); stderr %q", code, stderr.String())
	}
	if ids := containersOf(t, cli, s); len(ids) != 0 {
		t.Errorf("the worker was not removed: %v", ids)
	}
}
