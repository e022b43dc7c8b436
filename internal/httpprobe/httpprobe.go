// Package httpprobe asks a daemon's HTTP health endpoints (/readyz,
// /healthz): the one probe `sett up`, `sett list`, the container
// healthcheck and the test harness share.
package httpprobe

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// client keeps no idle connections, so a probe loop leaves no sockets
// behind.
var client = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// Get asks http://addr+path and returns nil when it answers 200, else an
// error naming path with the status and the first line of the body (the
// failing check), or the connection error without the URL it repeats.
// A positive timeout bounds the probe; ctx bounds it either way.
func Get(ctx context.Context, addr, path string, timeout time.Duration) error {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) && ue.Err != nil {
			err = ue.Err
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil
	}
	line, _ := bufio.NewReader(io.LimitReader(resp.Body, 512)).ReadString('\n')
	if line = strings.TrimSpace(line); line == "" {
		return fmt.Errorf("%s answered %s", path, resp.Status)
	}
	return fmt.Errorf("%s answered %s: %s", path, resp.Status, line)
}
