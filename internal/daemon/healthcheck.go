package daemon

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/settdev/sett/internal/httpprobe"
)

// HealthcheckArg is the argument that makes a daemon binary check a
// running daemon instead of starting one (`sett-orchestrator
// healthcheck`): a container healthcheck for images without a shell or
// wget, such as the orchestrator's scratch image.
const HealthcheckArg = "healthcheck"

// healthcheckTimeout bounds one check (the container runtime has its own
// timeout as well).
const healthcheckTimeout = 3 * time.Second

// loopbackAddr is the address a daemon listening on httpAddr answers on
// (":8080" listens everywhere; it is asked on loopback).
func loopbackAddr(httpAddr string) (string, error) {
	host, port, err := net.SplitHostPort(httpAddr)
	if err != nil {
		return "", fmt.Errorf("SETT_HTTP_ADDR %q: %w", httpAddr, err)
	}
	switch host {
	case "", "0.0.0.0", "::":
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Healthcheck asks the daemon on httpAddr for /readyz and returns nil when
// it answers 200. It is what HealthcheckArg runs.
func Healthcheck(ctx context.Context, httpAddr string) error {
	addr, err := loopbackAddr(httpAddr)
	if err != nil {
		return err
	}
	if err := httpprobe.Get(ctx, addr, "/readyz", healthcheckTimeout); err != nil {
		return fmt.Errorf("not ready: %w", err)
	}
	return nil
}

// HealthcheckMain runs Healthcheck against SETT_HTTP_ADDR (defaultHTTP when
// unset) and returns the exit code: 0 when ready, 1 otherwise (the reason
// on errOut).
func HealthcheckMain(errOut io.Writer, defaultHTTP string) int {
	if err := Healthcheck(context.Background(), EnvOr("SETT_HTTP_ADDR", defaultHTTP)); err != nil {
		fmt.Fprintln(errOut, "healthcheck:", err)
		return 1
	}
	return 0
}
