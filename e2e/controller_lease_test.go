package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/eventually"
	"github.com/settdev/sett/internal/runtime/docker"
)

// TestFrozenControllerCubsWorkerIsGoneBeforeTheReGrant: the cub of a
// controller is frozen (SIGSTOP from the host) while its claim runs in a
// worker container. Nothing renews the lease; the worker's reaper (in the
// controller container, not frozen) removes the worker at five sixths of
// the TTL, before Redis lets the lease go and the orchestrator re-grants
// the claim (the lease_lost event). Polled in that order, the test never
// sees the lease lost while the first worker still exists. Thawed, the cub
// runs the re-grant in a new worker; two never run at once.
func TestFrozenControllerCubsWorkerIsGoneBeforeTheReGrant(t *testing.T) {
	t.Parallel()
	h, image := controllerHarness(t, setup(t))
	s := newStack(t, h, fmt.Sprintf(killYAML, image))
	runs := filepath.Join(s.dir, "runs")
	if err := os.Mkdir(runs, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(runs, 0o777); err != nil {
		t.Fatal(err)
	}
	s.mustUp()
	ctx := context.Background()
	workers := func() []string {
		list, err := h.cli.ContainerList(ctx, client.ContainerListOptions{All: true, Filters: make(client.Filters).
			Add("label", docker.LabelInstance+"="+s.name).Add("label", docker.LabelComponent+"="+docker.ComponentWorker)})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range list.Items {
			ids = append(ids, c.ID[:12])
		}
		if len(ids) > 1 {
			t.Fatalf("%d workers of one claim exist at once: %v", len(ids), ids)
		}
		return ids
	}
	leaseLost := func() bool {
		evs, err := s.bb.RangeEvents(ctx, "-", "+", 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Type == blackboard.EventLeaseLost {
				return true
			}
		}
		return false
	}
	s.postGoal("sleep")
	var first string
	eventually.True(t, 2*time.Minute, "the first worker runs", func() bool {
		if ids := workers(); len(ids) == 1 {
			first = ids[0]
		}
		return first != ""
	})
	eventually.True(t, time.Minute, "the first worker's tool runs", func() bool {
		entries, err := os.ReadDir(runs)
		return err == nil && len(entries) == 1
	})

	pid1 := s.container("sleeper").Container.State.Pid
	if err := syscall.Kill(pid1, syscall.SIGSTOP); err != nil {
		t.Fatalf("freeze the controller's cub (host pid %d): %v", pid1, err)
	}
	frozen := time.Now()
	thawed := false
	thaw := func() {
		if !thawed {
			thawed = true
			_ = syscall.Kill(pid1, syscall.SIGCONT)
		}
	}
	defer thaw()

	var goneAfter time.Duration
	eventually.True(t, 2*time.Minute, "the lease is lost (the claim goes back to the orchestrator)", func() bool {
		lost := leaseLost() // first the event, then the worker: see the doc comment
		_, err := h.cli.ContainerInspect(ctx, first, client.ContainerInspectOptions{})
		exists := !cerrdefs.IsNotFound(err)
		if !exists && goneAfter == 0 {
			goneAfter = time.Since(frozen)
		}
		if lost && exists {
			t.Fatalf("the lease was lost while the frozen cub's worker %s still existed", first)
		}
		return lost
	})
	if goneAfter == 0 {
		t.Fatal("the lease was lost before the test saw the worker gone")
	}
	t.Logf("worker %s removed about %s after the cub froze (lease_ttl 5s: the reaper's deadline is ~4.2s after the last renewal)",
		first, goneAfter.Round(100*time.Millisecond))

	thaw()
	var second string
	eventually.True(t, 2*time.Minute, "the thawed cub runs the re-grant in a new worker", func() bool {
		if ids := workers(); len(ids) == 1 && ids[0] != first {
			second = ids[0]
		}
		return second != ""
	})
	eventually.True(t, 2*time.Minute, "the re-grant's run recorded", func() bool {
		entries, err := os.ReadDir(runs)
		return err == nil && len(entries) >= 2
	})
}
