package cub

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
	"github.com/settdev/sett/internal/tool"
)

// A cub cut off from Redis stops its tools at once (no grace) before
// their leases can expire, so that the claim's next grant never runs
// beside them.
func TestUnrenewableLeaseStopsTheToolAtOnce(t *testing.T) {
	t.Parallel()
	srv, err := redistest.NewServer(redistest.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	bb, err := blackboard.Dial(t.Context(), srv.URL(), blackboard.Options{Instance: "fence"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bb.Close() })
	k := NewLeaseKeeper(bb, LeaseKeeperConfig{Identity: Identity{Agent: "me", Consumer: "me-1"}, LeaseTTL: 600 * time.Millisecond,
		HeartbeatTTL: 600 * time.Millisecond}, NewMetrics(nil), zerolog.Nop())
	causes := make(chan error, 1)
	k.Hold("claim-1", "1", "1-0", func(cause error) { causes <- cause })
	if err := srv.Kill(); err != nil { // Redis gone: every renewal fails
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = k.Run(ctx) }()
	select {
	case cause := <-causes:
		if !errors.Is(cause, tool.ErrStopNow) {
			t.Errorf("work cancelled with %v, want tool.ErrStopNow", cause)
		}
	case <-time.After(time.Minute):
		t.Fatal("the work of an unrenewable lease was never stopped")
	}
	if k.Holding("claim-1") {
		t.Error("the keeper still holds the lease it gave up")
	}
}

// A cub whose network goes dead — packets dropped, no reset, so no call
// fails by itself for as long as go-redis's read timeout (an hour here) —
// still stops its tools before their leases expire: each beat waits one
// period at most.
func TestDeadNetworkStopsTheToolAtOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	bh := redistest.NewBlackhole(t, srv.Addr)
	url := "redis://:" + srv.Password + "@" + bh.Addr() + "/0?read_timeout=1h&write_timeout=1h"
	bb, err := blackboard.Dial(t.Context(), url, blackboard.Options{Instance: redistest.Instance(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bb.Close() })
	k := NewLeaseKeeper(bb, LeaseKeeperConfig{Identity: Identity{Agent: "me", Consumer: "me-1"}, LeaseTTL: 600 * time.Millisecond,
		HeartbeatTTL: 600 * time.Millisecond}, NewMetrics(nil), zerolog.Nop())
	k.Beat(t.Context())
	if !k.Alive() {
		t.Fatal("the first beat, before the cut, failed")
	}
	causes := make(chan error, 1)
	k.Hold("claim-1", "1", "1-0", func(cause error) { causes <- cause })
	bh.Cut()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() { _ = k.Run(ctx) }()
	select {
	case cause := <-causes:
		if !errors.Is(cause, tool.ErrStopNow) {
			t.Errorf("work cancelled with %v, want tool.ErrStopNow", cause)
		}
	case <-time.After(time.Minute):
		t.Fatal("the work of a lease unrenewable on a dead network was never stopped")
	}
	if k.Holding("claim-1") {
		t.Error("the keeper still holds the lease it gave up")
	}
}

// Every renewal moves the fence that a sandboxed tool's watchdog holds:
// to five sixths of the TTL after the beat was sent, before Redis can let
// the lease expire.
func TestRenewalMovesTheWatchdogFence(t *testing.T) {
	t.Parallel()
	srv := redistest.Shared(t)
	bb, err := blackboard.Dial(t.Context(), srv.URL(), blackboard.Options{Instance: redistest.Instance(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = bb.Close() })
	ttl := 6 * time.Second
	k := NewLeaseKeeper(bb, LeaseKeeperConfig{Identity: Identity{Agent: "me", Consumer: "me-1"}, LeaseTTL: ttl, HeartbeatTTL: ttl}, NewMetrics(nil), zerolog.Nop())
	before := time.Now()
	fence := k.Hold("claim-1", "1", "", func(error) {}) // no inbox entry: nothing to XCLAIM
	d0 := fence.Deadline()
	if d0.Before(before.Add(ttl*5/6)) || d0.After(time.Now().Add(ttl*5/6)) {
		t.Fatalf("first deadline %v after Hold, want five sixths of the TTL (%v)", d0.Sub(before), ttl*5/6)
	}
	sent := time.Now()
	k.Beat(t.Context())
	if d1 := fence.Deadline(); !d1.After(d0) || d1.Before(sent.Add(ttl*5/6)) {
		t.Errorf("deadline after a renewal sent %v after Hold: %v, want at least %v", sent.Sub(before), d1.Sub(before), sent.Add(ttl*5/6).Sub(before))
	}
}
