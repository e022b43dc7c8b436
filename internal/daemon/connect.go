package daemon

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/config"
	"github.com/settdev/sett/internal/redisconn"
	"github.com/settdev/sett/internal/writeretry"
)

// Connect dials Redis, retrying with the project's backoff
// (writeretry) for up to wait: in a stack the daemons may start before
// Redis accepts connections, or while it loads its data. A refusal that
// waiting cannot change (a wrong password, a configuration Redis
// rejects) ends the wait at once; a configuration error is a
// *UsageError. The caller closes the client.
func Connect(ctx context.Context, cfg *config.Config, log zerolog.Logger, wait time.Duration) (*blackboard.Client, error) {
	opts := redisconn.Options(cfg)
	conn, err := redisconn.Conn(cfg.Services.Redis, "")
	if err != nil {
		return nil, &UsageError{err}
	}
	var bb *blackboard.Client
	err = writeretry.Until(ctx, time.Now().Add(wait), func(ctx context.Context) error {
		var err error
		bb, err = blackboard.DialConn(ctx, conn, opts)
		return err
	}, func(err error, retryIn time.Duration) {
		log.Warn().Err(err).Dur("retry_in", retryIn).Msg("waiting for Redis")
	})
	switch {
	case err == nil:
		return bb, nil
	case errors.Is(err, blackboard.ErrInvalid):
		return nil, &UsageError{err}
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case !blackboard.IsTransient(err):
		return nil, fmt.Errorf("redis refused the connection (check the password or ACL user): %w", err)
	}
	return nil, fmt.Errorf("redis not reachable after %s: %w", wait, err)
}
