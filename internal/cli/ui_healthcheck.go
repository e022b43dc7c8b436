package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// consoleURL is where `sett ui --healthcheck` asks a console listening on
// listen (an unspecified host is asked on loopback) under basePath.
func consoleURL(listen, basePath string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", usageError("--listen %q: %v", listen, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + strings.TrimRight(basePath, "/") + "/", nil
}

// uiHealthcheck succeeds when a console answers on listen: any answer but
// a server error (without the token it refuses, which proves it serves).
func uiHealthcheck(ctx context.Context, listen, basePath string) error {
	u, err := consoleURL(listen, basePath)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("no console answers at %s: %w", u, err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 500 {
		return fmt.Errorf("the console at %s answers %s", u, resp.Status)
	}
	return nil
}
