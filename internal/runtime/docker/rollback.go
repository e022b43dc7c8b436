package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/client"
)

// rollbackBound bounds undoing a failed Up, which runs even when Up's
// context was cancelled (Ctrl-C must not leave half an instance behind).
const rollbackBound = 60 * time.Second

// rollback remembers what one Up created so that a failed Up removes
// exactly that: its containers, its network, and the volume and state
// directory only when this Up created them (kept data stays kept). Safe
// for concurrent use: agents are created in parallel.
type rollback struct {
	cli *client.Client

	mu         sync.Mutex
	containers []string
	network    string
	volume     string
	stateDir   string
}

func (rb *rollback) addContainer(id string) {
	rb.mu.Lock()
	defer rb.mu.Unlock()
	rb.containers = append(rb.containers, id)
}

// run removes everything recorded, reporting what it could not remove.
func (rb *rollback) run(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackBound)
	defer cancel()
	rb.mu.Lock()
	defer rb.mu.Unlock()
	var errs []error
	var wg sync.WaitGroup
	var emu sync.Mutex
	for _, id := range rb.containers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := removeContainer(ctx, rb.cli, id); err != nil {
				emu.Lock()
				errs = append(errs, err)
				emu.Unlock()
			}
		}()
	}
	wg.Wait()
	if rb.network != "" {
		if _, err := rb.cli.NetworkRemove(ctx, rb.network, client.NetworkRemoveOptions{}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove network %s: %w", rb.network, err))
		}
	}
	if rb.volume != "" {
		if _, err := rb.cli.VolumeRemove(ctx, rb.volume, client.VolumeRemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove volume %s: %w", rb.volume, err))
		}
	}
	if rb.stateDir != "" {
		if err := os.RemoveAll(rb.stateDir); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// removeContainer kills and removes a container with its anonymous
// volumes; a container that is already gone is fine.
func removeContainer(ctx context.Context, cli *client.Client, id string) error {
	_, err := cli.ContainerRemove(ctx, id, client.ContainerRemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("remove container %s: %w", id, err)
	}
	return nil
}
