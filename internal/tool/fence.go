package tool

import (
	"sync"
	"time"
)

// watchFD is the helper's file descriptor that carries a Fence's
// deadlines.
const watchFD = 3

// EnvLeaseFD names, in an unsandboxed tool's environment, the file
// descriptor (3) on which it receives its lease's deadlines, one per
// line, as nanoseconds of CLOCK_MONOTONIC: the controller's launcher
// (internal/worker, same name) hands them to its worker's reaper.
const EnvLeaseFD = "SETT_LEASE_FD"

// Fence is the deadline by which a running tool must be gone: its lease's,
// less a margin. A sandboxed tool's helper watches it on its own (see
// Sandbox): the cub moves the deadline with Extend each time it renews the
// lease, and a cub that stops renewing — crashed, stopped by SIGSTOP,
// starved, cut off from Redis — cannot keep its tool running past it,
// because the helper does not depend on the cub being scheduled.
//
// The zero value is not usable; build one with NewFence. Safe for
// concurrent use. A Fence serves one run at a time.
type Fence struct {
	mu       sync.Mutex
	deadline time.Time
	// w is the write end of the helper's deadline pipe while a run uses
	// it, -1 otherwise.
	w int
}

// NewFence returns a fence at deadline.
func NewFence(deadline time.Time) *Fence { return &Fence{deadline: deadline, w: -1} }

// Extend moves the deadline to t (later, or earlier) and tells the watching
// helper at once.
func (f *Fence) Extend(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deadline = t
	f.sendLocked()
}

// Deadline returns the current deadline.
func (f *Fence) Deadline() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.deadline
}

// attach hands the fence the write end of a run's deadline pipe and sends
// the current deadline.
func (f *Fence) attach(w int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.w = w
	f.sendLocked()
}

// detach closes the pipe of the run that ended.
func (f *Fence) detach() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.w >= 0 {
		closeFD(f.w)
		f.w = -1
	}
}

// sendLocked writes the deadline to the helper, as an absolute reading of
// the host's monotonic clock (shared by every process of the host, and
// immune to wall-clock steps). A full pipe drops the line: the helper is
// behind, and reads the next one.
func (f *Fence) sendLocked() {
	if f.w < 0 {
		return
	}
	writeDeadline(f.w, f.deadline)
}
