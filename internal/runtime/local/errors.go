package local

import "errors"

// ErrAlreadyRunning is returned (wrapped, naming the instance and its
// supervisor) by Up when the instance is already running, or when another
// local instance runs on the same workspace and UpSpec.Force is not set.
var ErrAlreadyRunning = errors.New("local: instance already running")

// ErrBinaryNotFound is returned (wrapped, naming the program and where it
// was looked for) by Up when redis-server, sett-orchestrator, sett-cub or
// the sett executable itself cannot be found.
var ErrBinaryNotFound = errors.New("local: program not found")

// ErrInvalidSpec is returned (wrapped, saying what is wrong) by Up when the
// UpSpec or its configuration cannot be run by the local runtime.
var ErrInvalidSpec = errors.New("local: invalid instance specification")

// ErrNotReady is returned (wrapped, naming each component that failed and
// the tail of its log) by Up when a component did not become ready. Up has
// stopped everything it started and removed the state it created.
var ErrNotReady = errors.New("local: instance did not start")

// ErrUnknownComponent is returned (wrapped, listing the components) by Logs
// for a component the instance does not have.
var ErrUnknownComponent = errors.New("local: unknown component")

// ErrBadRecord is returned (wrapped) by Down and Logs when the instance
// record lacks what the local runtime wrote into it (a state directory
// inside the workspace).
var ErrBadRecord = errors.New("local: instance record is not usable")

// ErrUnsupported is returned by Up on platforms without Unix process
// sessions and signals.
var ErrUnsupported = errors.New("local: the local runtime needs a Unix host")

// ErrNoIsolation is returned (wrapped, with the kernel's reason) by Up when
// the host cannot build the tools' sandbox and the configuration does not
// say isolation: none.
var ErrNoIsolation = errors.New("local: cannot isolate tools on this host")
