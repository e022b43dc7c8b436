package local

import (
	"fmt"
	"net"
)

// freeLoopbackPorts returns n distinct TCP ports that were free on
// 127.0.0.1 a moment ago. All listeners stay open until every port is
// chosen, so the n ports differ; another program may still take one
// before the component binds it, and the component then fails to start
// (Up reports it with the component's log).
func freeLoopbackPorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	listeners := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("local: find a free port: %w", err)
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
