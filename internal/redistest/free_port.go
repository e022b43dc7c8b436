package redistest

import (
	"fmt"
	"net"
	"sync"
)

// handedOut holds every port FreePort returned in this process.
var handedOut = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// FreePort returns a loopback port that is free now and that no earlier
// call in this process returned. Parallel tests start and stop many
// servers and daemons; the kernel readily hands a port just released by
// one of them to the next bind(":0"), and a test that then finds another
// test's process on "its" port (a readiness probe answered by a stranger,
// a sentinel that follows a stranger's master) fails in ways that have
// nothing to do with what it tests. Safe for concurrent use.
func FreePort() (int, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	for attempt := 0; attempt < 100; attempt++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("redistest: find a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("redistest: no port that was not handed out before after 100 tries")
}
