package local

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/settdev/sett/internal/blackboard"
)

// probeTimeout bounds one readiness or health probe.
const probeTimeout = time.Second

// probeClient is shared by every probe; it keeps no idle connections, so
// probing a component never holds one of its sockets open.
var probeClient = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}

// probeReady returns nil when the component is ready: its /readyz answers
// 200, or (Redis) it answers PING. A component with neither probe is ready
// whenever it runs; the caller checks that.
func probeReady(ctx context.Context, c PlanComponent, instanceName string) error {
	switch {
	case c.HTTPAddr != "":
		return probeHTTP(ctx, c.HTTPAddr, "/readyz")
	case c.RedisURL != "":
		return probeRedis(ctx, c.RedisURL, instanceName)
	}
	return nil
}

// probeHTTP GETs path on addr and returns nil on 200, else an error with
// the status and the first line of the body (the failing check).
func probeHTTP(ctx context.Context, addr, path string) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		return err
	}
	resp, err := probeClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", path, unwrapURLError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		return nil
	}
	line, _ := bufio.NewReader(io.LimitReader(resp.Body, 512)).ReadString('\n')
	line = strings.TrimSpace(line)
	if line == "" {
		return fmt.Errorf("%s answered %s", path, resp.Status)
	}
	return fmt.Errorf("%s answered %s: %s", path, resp.Status, line)
}

// unwrapURLError drops the *url.Error wrapper, which only repeats the
// method and the URL.
func unwrapURLError(err error) error {
	type unwrapper interface{ Unwrap() error }
	if u, ok := err.(unwrapper); ok && u.Unwrap() != nil {
		return u.Unwrap()
	}
	return err
}

// probeRedis connects through the blackboard (the only package that talks
// to Redis) and pings.
func probeRedis(ctx context.Context, url, instanceName string) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	bb, err := blackboard.Dial(ctx, url, blackboard.Options{Instance: instanceName, OpTimeout: probeTimeout})
	if err != nil {
		return err
	}
	defer bb.Close()
	return bb.Ping(ctx)
}
