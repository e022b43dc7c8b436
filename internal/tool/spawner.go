package tool

import (
	"os/exec"
	goruntime "runtime"
	"sync/atomic"
	"time"
)

// spawnerIdle is how long a spawner thread waits for its next tool before
// it retires: long enough to carry a busy agent from one claim to the
// next, short enough that an idle cub holds no extra threads.
const spawnerIdle = 30 * time.Second

// spawnJob is one tool start handed to a spawner thread.
type spawnJob struct {
	cmd     *exec.Cmd
	started chan error // Start's result
	waited  chan error // Wait's result, after a successful Start
}

var (
	// spawnJobs hands a job to an idle spawner thread.
	spawnJobs = make(chan spawnJob)
	// idleSpawners counts the idle spawners not yet promised a job: a
	// starter takes one off before it sends (so its send finds a receiver),
	// a spawner puts itself on before it reports its tool's exit (so the
	// next start of the same caller finds it) and takes itself off to
	// retire.
	idleSpawners atomic.Int64
	// spawnersStarted counts spawner threads started, for tests.
	spawnersStarted atomic.Int64
)

// startLocked starts cmd and waits for it on a spawner: a goroutine locked
// to its OS thread, because the child's parent-death signal fires when the
// thread that forked it exits, and a locked thread cannot be retired by
// the Go runtime while the child runs. A spawner takes the next tool once
// its child is reaped, so busy agents do not pay for a new OS thread (and
// its exit) per tool; it retires after spawnerIdle without work, taking
// its thread with it, which is harmless once its child is reaped. waited
// receives the result of Wait.
func startLocked(cmd *exec.Cmd) (waited <-chan error, err error) {
	job := spawnJob{cmd: cmd, started: make(chan error, 1), waited: make(chan error, 1)}
	if takeIdleSpawner() {
		spawnJobs <- job
	} else {
		spawnersStarted.Add(1)
		go spawner(job)
	}
	if err := <-job.started; err != nil {
		return nil, err
	}
	return job.waited, nil
}

// takeIdleSpawner takes one idle spawner off the count; false when none
// is left.
func takeIdleSpawner() bool {
	for {
		n := idleSpawners.Load()
		if n == 0 {
			return false
		}
		if idleSpawners.CompareAndSwap(n, n-1) {
			return true
		}
	}
}

// spawner runs job, then the jobs handed to it until it has been idle for
// spawnerIdle. It never unlocks its thread.
func spawner(job spawnJob) {
	goruntime.LockOSThread()
	idle := time.NewTimer(spawnerIdle)
	defer idle.Stop()
	for {
		werr, ran := runSpawnJob(job)
		idleSpawners.Add(1)
		if ran {
			job.waited <- werr
		}
		idle.Reset(spawnerIdle)
		select {
		case job = <-spawnJobs:
		case <-idle.C:
			if takeIdleSpawner() {
				return
			}
			// Every idle spawner is promised to a starter whose job is on
			// its way: take one.
			job = <-spawnJobs
		}
	}
}

// runSpawnJob starts the job's command, registered with the reaper,
// reports the start and waits for the command. ran is false when it did
// not start.
func runSpawnJob(job spawnJob) (werr error, ran bool) {
	startMu.RLock()
	err := job.cmd.Start()
	if err == nil {
		registerChild(job.cmd.Process.Pid)
	}
	startMu.RUnlock()
	job.started <- err
	if err != nil {
		return nil, false
	}
	werr = job.cmd.Wait()
	unregisterChild(job.cmd.Process.Pid)
	return werr, true
}
