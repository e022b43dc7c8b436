package docker

import "errors"

// ErrDockerUnavailable is returned (wrapped, with the daemon address and
// the cause) by every method when the Docker daemon cannot be reached.
var ErrDockerUnavailable = errors.New("docker: the Docker daemon is not reachable")

// ErrInvalidSpec is returned (wrapped, saying what is wrong and which
// setting to fix) by Up when the UpSpec or its configuration cannot run on
// Docker: no name or workspace, an agent without an image, an agent with
// neither a command nor an image CMD, an agent named like a component.
var ErrInvalidSpec = errors.New("docker: invalid instance specification")

// ErrMissingImage is returned (wrapped, naming the image, the settings
// that use it and what to do) by Up when an image is neither present
// locally nor pullable. Up has created nothing.
var ErrMissingImage = errors.New("docker: missing image")

// ErrAlreadyRunning is returned (wrapped, naming the instance and its
// containers) by Up when containers of the instance exist already, or when
// another instance runs on the same workspace and UpSpec.Force is not set.
// Up has created nothing.
var ErrAlreadyRunning = errors.New("docker: instance already running")

// ErrNotReady is returned (wrapped, naming the component, why it is not
// ready and the tail of its log) by Up when a component exits, restarts or
// does not become ready in time. Up has removed what it created.
var ErrNotReady = errors.New("docker: instance did not start")

// ErrUnknownComponent is returned (wrapped, listing the components) by
// Logs for a component the instance does not have.
var ErrUnknownComponent = errors.New("docker: unknown component")

// ErrComposeManaged is returned (wrapped, naming the compose projects and
// the `docker-compose down` that stops each in its directory) by Down and
// DownByName when what carries the instance's name was started by Docker
// Compose (the labels of docker-compose.yml): they stop nothing of it.
var ErrComposeManaged = errors.New("docker: managed by Docker Compose")
