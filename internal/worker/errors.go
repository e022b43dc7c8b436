package worker

import "errors"

// ErrUsage is returned (wrapped, naming the flag) by ParseArgs when the
// command line cannot describe a worker container.
var ErrUsage = errors.New("worker: invalid arguments")

// ErrDocker is returned (wrapped) by Launcher.Run when the Docker daemon
// refuses or fails a step: create, attach, start or wait.
var ErrDocker = errors.New("worker: docker")

// ErrImageMissing is returned (wrapped, naming the image) by Launcher.Run
// when the worker image is not on the Docker host. Nothing is pulled: the
// image must be built or loaded there.
var ErrImageMissing = errors.New("worker: worker image not found")
