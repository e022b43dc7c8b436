package local

import (
	"strings"
	"testing"
)

// The daemons' URL names the Unix socket when its path fits in a socket
// address, and the loopback port when it does not.
func TestComponentLink(t *testing.T) {
	short := "/home/u/.local/state/sett/local/demo-1a2b3c/redis.sock"
	if got := componentLink(6390, short)("sett-demo-orchestrator", "pw"); got != "unix://sett-demo-orchestrator:pw@"+short+"?db=0" {
		t.Errorf("short socket path: %s", got)
	}
	long := "/" + strings.Repeat("d", maxSocketPath) + "/redis.sock"
	if got := componentLink(6390, long)("sett-demo-orchestrator", "pw"); got != "redis://sett-demo-orchestrator:pw@127.0.0.1:6390/0" {
		t.Errorf("socket path too long: %s", got)
	}
	if got := componentLink(6390, "")("u", "pw"); got != "redis://u:pw@127.0.0.1:6390/0" {
		t.Errorf("no socket: %s", got)
	}
}
