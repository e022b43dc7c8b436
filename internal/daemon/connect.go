package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/redisconn"
	"github.com/settdev/sett/pkg/blackboard"
)

// Connect dials Redis, retrying with backoff for up to wait: in a stack the
// daemons may start before Redis accepts connections. A configuration
// Redis rejects is a *UsageError; the caller closes the client.
func Connect(ctx context.Context, cfg *config.Config, log zerolog.Logger, wait time.Duration) (*blackboard.Client, error) {
	opts := redisconn.Options(cfg)
	conn, err := redisconn.Conn(cfg.Services.Redis, "")
	if err != nil {
		return nil, &UsageError{err}
	}
	deadline := time.Now().Add(wait)
	delay := 100 * time.Millisecond
	for {
		bb, err := blackboard.DialConn(ctx, conn, opts)
		if err == nil {
			return bb, nil
		}
		if errors.Is(err, blackboard.ErrInvalid) {
			return nil, &UsageError{err}
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return nil, fmt.Errorf("redis not reachable after %s: %w", wait, err)
		}
		log.Warn().Err(err).Dur("retry_in", delay).Msg("waiting for Redis")
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		if delay < 2*time.Second {
			delay *= 2
		}
	}
}
