package daemon

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// HealthcheckArg is the argument that makes a daemon binary check a
// running daemon instead of starting one (`sett-orchestrator
// healthcheck`): a container healthcheck for images without a shell or
// wget, such as the orchestrator's scratch image.
const HealthcheckArg = "healthcheck"

// healthcheckTimeout bounds one check (the container runtime has its own
// timeout as well).
const healthcheckTimeout = 3 * time.Second

// readyzURL is the /readyz of a daemon listening on httpAddr (":8080"
// listens everywhere; it is asked on loopback).
func readyzURL(httpAddr string) (string, error) {
	host, port, err := net.SplitHostPort(httpAddr)
	if err != nil {
		return "", fmt.Errorf("SETT_HTTP_ADDR %q: %w", httpAddr, err)
	}
	switch host {
	case "", "0.0.0.0", "::":
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/readyz", nil
}

// Healthcheck asks the daemon on httpAddr for /readyz and returns nil when
// it answers 200. It is what HealthcheckArg runs.
func Healthcheck(ctx context.Context, httpAddr string) error {
	u, err := readyzURL(httpAddr)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("not ready: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("not ready: %s: %s", resp.Status, body)
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
