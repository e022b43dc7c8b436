package docker

import (
	"context"
	"errors"
	"fmt"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/distribution/reference"
	"github.com/moby/moby/client"

	"github.com/settdev/sett/internal/runtime"
)

// ensureImages makes sure every image of the plan is present, pulling the
// missing ones that can be pulled, and checks that agents without a
// configured command get one from their image's CMD. It creates nothing
// else, so Up can stop here without anything to roll back. Every missing
// image is reported, not only the first.
func (r *Runtime) ensureImages(ctx context.Context, cli *client.Client, p *stackPlan, progress func(runtime.Progress)) error {
	cmds := map[string][]string{} // image → its CMD
	var errs []error
	for _, img := range p.imageNames() {
		res, err := cli.ImageInspect(ctx, img)
		if cerrdefs.IsNotFound(err) {
			err = r.pull(ctx, cli, img, p.Images[img], progress)
			if err == nil {
				res, err = cli.ImageInspect(ctx, img)
			}
		}
		if err != nil {
			if errors.Is(err, ErrMissingImage) {
				errs = append(errs, err)
				continue
			}
			return fmt.Errorf("docker: inspect image %s: %w", img, err)
		}
		if res.Config != nil {
			cmds[img] = res.Config.Cmd
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, agent := range sortedKeys(p.CmdFromImage) {
		img := p.CmdFromImage[agent]
		if len(cmds[img]) == 0 {
			return fmt.Errorf("%w: agents.%s.command is empty and image %s has no CMD: set agents.%s.command to the tool's command line",
				ErrInvalidSpec, agent, img, agent)
		}
	}
	return nil
}

// pull fetches a missing image. Images tagged "local" are built on this
// machine (make images) and never pulled. A failure wraps ErrMissingImage
// and says what to do.
func (r *Runtime) pull(ctx context.Context, cli *client.Client, img string, settings []string, progress func(runtime.Progress)) error {
	fix := settingsList(settings)
	if isLocalTag(img) {
		return fmt.Errorf("%w: image %s (%s) not found locally and cannot be pulled (images tagged :local are built, never pulled): %s, or fix %s",
			ErrMissingImage, img, fix, buildHint(img), fix)
	}
	progress(runtime.Progress{Component: "image", State: "creating", Detail: "pulling " + img})
	pctx, cancel := context.WithTimeout(ctx, r.pullTimeout())
	defer cancel()
	resp, err := cli.ImagePull(pctx, img, client.ImagePullOptions{})
	if err == nil {
		err = resp.Wait(pctx)
		_ = resp.Close()
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("%w: image %s (%s) not found locally and cannot be pulled (%s): %s, or fix %s",
			ErrMissingImage, img, fix, firstLine(err.Error()), buildHint(img), fix)
	}
	return nil
}

// buildHint says how to get img: Sett's own images come from `make
// images` in Sett's source tree; a user's image from their own build.
func buildHint(img string) string {
	if strings.HasPrefix(img, "sett-") && isLocalTag(img) {
		return "build Sett's images with `make images` in Sett's source tree"
	}
	return "build it (`docker build -t " + img + " <its directory>`) or load it (`docker load`)"
}

// isLocalTag reports whether ref is tagged "local".
func isLocalTag(ref string) bool {
	named, err := reference.ParseNormalizedNamed(ref)
	if err != nil {
		return false
	}
	tagged, ok := named.(reference.Tagged)
	return ok && tagged.Tag() == "local"
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
