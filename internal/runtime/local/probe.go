package local

import (
	"context"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/httpprobe"
)

// probeTimeout bounds one readiness or health probe.
const probeTimeout = time.Second

// probeReady returns nil when the component is ready: its /readyz answers
// 200, or (Redis) it answers PING. A component with neither probe is ready
// whenever it runs; the caller checks that.
func probeReady(ctx context.Context, c PlanComponent, instanceName string) error {
	switch {
	case c.HTTPAddr != "":
		return httpprobe.Get(ctx, c.HTTPAddr, "/readyz", probeTimeout)
	case c.RedisURL != "":
		return probeRedis(ctx, c.RedisURL, instanceName)
	}
	return nil
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
