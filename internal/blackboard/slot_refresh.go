package blackboard

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"
)

// slotRefresh is a go-redis hook on a cluster client that asks for a fresh
// slot map as soon as an answer says the one it routes by may be out of
// date: a lost or refused connection, a node that did not answer in time,
// MOVED, TRYAGAIN or CLUSTERDOWN. Without it go-redis reloads the map
// only on MOVED/ASK/READONLY and every 60 s: after a master dies (no
// answer at all, so no MOVED), a client kept sending to it until the
// periodic reload, a stall of up to a minute after the promotion.
//
// The rate is bounded by go-redis itself (ClusterClient.ReloadState):
// at most one reload runs at a time, the next at least 200 ms after it
// ends, and requests that arrive meanwhile collapse into that one. While
// the dead master's slots wait for a replica's promotion, every failed
// command asks again, so the first reload after the promotion comes at
// most ≈200 ms plus one CLUSTER SLOTS round trip after it; the command
// that failed is retried by the caller (the engine's loops already retry
// transient errors within their deadlines).
//
// Safe for concurrent use.
type slotRefresh struct {
	reload func(context.Context)
}

func (h slotRefresh) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h slotRefresh) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if staleSlotMap(err) {
			h.reload(ctx)
		}
		return err
	}
}

func (h slotRefresh) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if staleSlotMap(err) {
			h.reload(ctx)
			return err
		}
		for _, c := range cmds {
			if staleSlotMap(c.Err()) {
				h.reload(ctx)
				break
			}
		}
		return err
	}
}

// clusterReplies are the error replies that mean the slot map a cluster
// client routes by is out of date (MOVED: the slot has a new owner) or
// that the cluster is reconfiguring (TRYAGAIN, CLUSTERDOWN).
var clusterReplies = []string{"MOVED ", "TRYAGAIN", "CLUSTERDOWN"}

// staleSlotMap reports whether err calls for a fresh slot map: a network
// error (refused, reset, closed, timed out), a round trip that ran out of
// time, or one of clusterReplies. A missing key (redis.Nil), a refusal on
// the merits, a closed client and a cancelled context do not.
func staleSlotMap(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, redis.ErrClosed) || errors.Is(err, context.Canceled) {
		return false
	}
	var reply redis.Error
	if errors.As(err, &reply) {
		msg := reply.Error()
		for _, p := range clusterReplies {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
		return false
	}
	var netErr net.Error
	return errors.As(err, &netErr) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, context.DeadlineExceeded)
}
