package daemon

import (
	"context"
	"sync"

	"github.com/settdev/sett/internal/observability"
)

// Serve runs the daemon's observability server and its background tasks
// (the start-up memory release, an orphan reaper...) beside run. When run
// returns they are stopped and waited for, and run's error is returned.
func Serve(ctx context.Context, srv *observability.Server, run func(context.Context) error, background ...func(context.Context)) error {
	bg, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	wg.Add(1 + len(background))
	go func() { defer wg.Done(); _ = srv.Run(bg) }()
	for _, task := range background {
		go func() { defer wg.Done(); task(bg) }()
	}
	err := run(ctx)
	stop()
	wg.Wait()
	return err
}
