package blackboard

import (
	"context"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"
)

// reply is a Redis error reply, as go-redis returns it.
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}

func TestStaleSlotMap(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	timeout := &net.OpError{Op: "read", Net: "tcp", Err: &timeoutErr{}}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"no error", nil, false},
		{"missing key", redis.Nil, false},
		{"connection refused (the master is dead)", fmt.Errorf("wrapped: %w", refused), true},
		{"read timeout (the node does not answer)", timeout, true},
		{"connection closed mid-reply", io.EOF, true},
		{"truncated reply", io.ErrUnexpectedEOF, true},
		{"round trip out of time", context.DeadlineExceeded, true},
		{"MOVED", reply("MOVED 3999 127.0.0.1:6381"), true},
		{"TRYAGAIN", reply("TRYAGAIN Multiple keys request during rehashing of slot"), true},
		{"CLUSTERDOWN", reply("CLUSTERDOWN The cluster is down"), true},
		{"a script's refusal", reply("ERR stale grant"), false},
		{"wrong password", reply("WRONGPASS invalid username-password pair"), false},
		{"client closed", redis.ErrClosed, false},
		{"cancelled", context.Canceled, false},
		{"a refusal of this package", ErrStaleGrant, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := staleSlotMap(tc.err); got != tc.want {
				t.Errorf("staleSlotMap(%v) = %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestSlotRefreshAsksForAReloadOnStaleAnswers(t *testing.T) {
	ctx := context.Background()
	reloads := 0
	h := slotRefresh{reload: func(context.Context) { reloads++ }}
	failWith := func(err error) redis.ProcessHook {
		return h.ProcessHook(func(context.Context, redis.Cmder) error { return err })
	}
	_ = failWith(redis.Nil)(ctx, redis.NewCmd(ctx, "get", "k"))
	_ = failWith(nil)(ctx, redis.NewCmd(ctx, "get", "k"))
	if reloads != 0 {
		t.Fatalf("%d reloads after a missing key and a success, want none", reloads)
	}
	_ = failWith(io.EOF)(ctx, redis.NewCmd(ctx, "get", "k"))
	if reloads != 1 {
		t.Fatalf("%d reloads after a lost connection, want 1", reloads)
	}
	// A pipeline reports only its first error; a stale answer further
	// down counts too.
	moved := redis.NewCmd(ctx, "get", "k2")
	moved.SetErr(reply("MOVED 1 127.0.0.1:1"))
	pipe := h.ProcessPipelineHook(func(context.Context, []redis.Cmder) error { return nil })
	if err := pipe(ctx, []redis.Cmder{redis.NewCmd(ctx, "get", "k1"), moved}); err != nil {
		t.Fatal(err)
	}
	if reloads != 2 {
		t.Fatalf("%d reloads after a pipeline with a MOVED answer, want 2", reloads)
	}
}
