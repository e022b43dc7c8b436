package blackboard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/redistest"
)

// TestWaitReplicasRefusesAnUnreplicatedWrite: with WaitReplicas a script
// write on a master without replicas reports ErrNotReplicated (the write
// itself stands), and without it the same write succeeds.
func TestWaitReplicasRefusesAnUnreplicatedWrite(t *testing.T) {
	t.Parallel()
	strict := redistest.Client(t, func(o *blackboard.Options) {
		o.WaitReplicas, o.WaitTimeout = 1, 50*time.Millisecond
	})
	ctx := context.Background()
	_, err := strict.Pause(ctx, "test", "strict write", blackboard.ControlFromCLI)
	if !errors.Is(err, blackboard.ErrNotReplicated) {
		t.Fatalf("Pause with wait_replicas 1 and no replica: %v, want ErrNotReplicated", err)
	}
	loose := redistest.Client(t)
	if _, err := loose.Pause(ctx, "test", "loose write", blackboard.ControlFromCLI); err != nil {
		t.Fatalf("Pause without wait_replicas: %v", err)
	}
}
