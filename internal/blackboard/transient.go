package blackboard

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// sentinels are the outcomes a retry cannot change: the write was refused
// on its merits, so sending it again gives the same answer.
var sentinels = []error{
	ErrNotFound, ErrExists, ErrVersionConflict, ErrStaleStatus, ErrStaleGrant, ErrFenced, ErrNoEpoch, ErrNotInvited,
	ErrWorkflowEnded, ErrBudgetExceeded, ErrInvalid, ErrCorrupt, ErrAmbiguous, ErrLeaseHeld, ErrStaleMemory,
	ErrWaiting, ErrSuperseded, ErrAlreadyDecided, ErrApprovalExpired,
}

// transientReplies are the Redis error replies that mean "not now" rather
// than "no": a server loading its AOF, a busy script, a failover.
var transientReplies = []string{"LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN", "READONLY", "CLUSTERDOWN"}

// IsTransient reports whether err is worth retrying: a lost connection, a
// timed-out round trip or a server that is not ready yet, as opposed to a
// refusal (any sentinel error of this package) or a cancelled context.
// IsTransient(nil) is false.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return false
		}
	}
	var reply redis.Error
	if errors.As(err, &reply) {
		msg := reply.Error()
		for _, p := range transientReplies {
			if strings.HasPrefix(msg, p) {
				return true
			}
		}
		return false
	}
	return true
}

// StreamIDTime is the server time a stream entry was added at (the
// millisecond part of its id); false when id is not a stream id.
func StreamIDTime(id string) (time.Time, bool) {
	ms, _, ok := strings.Cut(id, "-")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || n <= 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(n), true
}
