package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/settdev/sett/internal/idlemem"
	"github.com/settdev/sett/internal/observability"
	"github.com/settdev/sett/internal/secretfd"
)

// Supervisor defaults.
const (
	// DefaultStopTimeout is how long a component may take to exit after
	// SIGTERM before its process group is killed.
	DefaultStopTimeout = 10 * time.Second
	// DefaultStageTimeout is how long a stage waits for the previous one
	// to be ready before it starts anyway (Up's own deadline then reports
	// whatever is not ready).
	DefaultStageTimeout = 30 * time.Second
	// stagePoll is how often a waiting stage probes the previous one.
	stagePoll = 50 * time.Millisecond
)

// Supervisor runs the components of a Plan as child processes: it starts
// them stage by stage, restarts a component that exits unexpectedly after
// a Backoff delay, keeps the status file current, and when its context
// ends stops them in reverse stage order — SIGTERM, then SIGKILL of the
// process group after StopTimeout — so that Redis (stage 0) stops last.
//
// Configure the exported fields before Run; a Supervisor runs once. The
// zero values of the tuning fields take the defaults.
type Supervisor struct {
	// Plan is what to run. Required.
	Plan *Plan
	// Log receives the supervisor's own log lines.
	Log zerolog.Logger
	// Backoff is the restart policy; zero means DefaultBackoff.
	Backoff Backoff
	// StopTimeout: zero means DefaultStopTimeout.
	StopTimeout time.Duration
	// StageTimeout: zero means DefaultStageTimeout.
	StageTimeout time.Duration
	// NowFunc is the clock for uptimes; nil means time.Now.
	NowFunc func() time.Time

	mu     sync.Mutex
	status Status
	// started is set once Run has started every stage.
	started atomic.Bool
}

// Supervise is the body of the hidden `sett supervise --plan FILE`
// command: it reads the plan and runs a Supervisor with the default
// settings until ctx ends (SIGTERM), logging JSON lines to logOut. It
// returns nil after a clean stop, or the error that kept it from
// starting.
func Supervise(ctx context.Context, planPath string, logOut io.Writer) error {
	// The supervisor holds every component's secrets: make it
	// non-dumpable, so that tools running as the same user can neither
	// read its /proc files nor attach to it.
	if err := hideProcess(); err != nil {
		return fmt.Errorf("local: make the supervisor non-dumpable: %w", err)
	}
	plan, err := ReadPlan(planPath)
	if err != nil {
		return err
	}
	log, err := observability.NewLogger(logOut, observability.LogJSON, "info", "supervisor", plan.Instance)
	if err != nil {
		return err
	}
	s := &Supervisor{Plan: plan, Log: log}
	// Once every stage started, supervising is mostly waiting: give back
	// the memory that starting took, and what idling maps again later.
	kctx, stopKeeping := context.WithCancel(ctx)
	kept := make(chan struct{})
	go func() { defer close(kept); idlemem.Keep(kctx, s.Started, nil, log) }()
	err = s.Run(ctx)
	stopKeeping()
	<-kept
	return err
}

// Started reports whether Run has started every stage (or stopped trying
// to).
func (s *Supervisor) Started() bool { return s.started.Load() }

// Run starts the plan and supervises it until ctx ends, then stops every
// component and returns nil. It returns an error only when the plan is
// unusable or the status file cannot be written at the start.
func (s *Supervisor) Run(ctx context.Context) error {
	if s.Plan == nil {
		return errors.New("local: supervisor has no plan")
	}
	if err := s.Plan.validate(); err != nil {
		return err
	}
	if s.Backoff == (Backoff{}) {
		s.Backoff = DefaultBackoff
	}
	if s.StopTimeout <= 0 {
		s.StopTimeout = DefaultStopTimeout
	}
	if s.StageTimeout <= 0 {
		s.StageTimeout = DefaultStageTimeout
	}
	if s.NowFunc == nil {
		s.NowFunc = time.Now
	}
	s.status = Status{SupervisorPID: os.Getpid(), Components: map[string]ComponentStatus{}}
	for _, c := range s.Plan.Components {
		s.status.Components[c.Name] = ComponentStatus{State: ChildWaiting, Argv0: c.Argv[0]}
	}
	if err := s.flushLocked(); err != nil {
		return err
	}
	s.Log.Info().Int("components", len(s.Plan.Components)).Msg("supervisor starting")

	stages := s.stages()
	// Each stage runs under its own context, detached from ctx, so that
	// the stop can end the stages one by one, highest first.
	cancels := make([]context.CancelFunc, 0, len(stages))
	waits := make([]*sync.WaitGroup, 0, len(stages))
	for i, stage := range stages {
		if i > 0 && !s.waitReady(ctx, stages[i-1]) {
			break
		}
		if ctx.Err() != nil {
			break
		}
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		var wg sync.WaitGroup
		for _, c := range stage {
			wg.Add(1)
			go func() { defer wg.Done(); s.supervise(sctx, c) }()
		}
		cancels, waits = append(cancels, cancel), append(waits, &wg)
	}

	s.started.Store(true)
	<-ctx.Done()
	s.Log.Info().Msg("stopping components")
	s.mu.Lock()
	s.status.Stopping = true
	_ = s.flushLocked()
	s.mu.Unlock()
	for i := len(cancels) - 1; i >= 0; i-- {
		cancels[i]()
		waits[i].Wait()
	}
	s.Log.Info().Msg("supervisor stopped")
	return nil
}

// stages groups the plan's components by stage, lowest first.
func (s *Supervisor) stages() [][]PlanComponent {
	var numbers []int
	for _, c := range s.Plan.Components {
		if !slices.Contains(numbers, c.Stage) {
			numbers = append(numbers, c.Stage)
		}
	}
	slices.Sort(numbers)
	out := make([][]PlanComponent, len(numbers))
	for _, c := range s.Plan.Components {
		i := slices.Index(numbers, c.Stage)
		out[i] = append(out[i], c)
	}
	return out
}

// waitReady polls the components of a stage until all are running and
// pass their probe, StageTimeout passes (then the next stage starts
// anyway), or ctx ends (false).
func (s *Supervisor) waitReady(ctx context.Context, stage []PlanComponent) bool {
	deadline := time.NewTimer(s.StageTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(stagePoll)
	defer tick.Stop()
	for {
		ready := true
		for _, c := range stage {
			if s.state(c.Name) != ChildRunning || probeReady(ctx, c, s.Plan.Instance) != nil {
				ready = false
				break
			}
		}
		if ready {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-deadline.C:
			names := make([]string, len(stage))
			for i, c := range stage {
				names[i] = c.Name
			}
			s.Log.Warn().Strs("waiting_for", names).Dur("stage_timeout", s.StageTimeout).
				Msg("components not ready; starting the next stage anyway")
			return true
		case <-tick.C:
		}
	}
}

// supervise runs one component until ctx ends, restarting it after each
// unexpected exit.
func (s *Supervisor) supervise(ctx context.Context, c PlanComponent) {
	log := s.Log.With().Str("child", c.Name).Logger()
	streak := 0
	for {
		pid, exited, err := s.start(c)
		if err != nil {
			log.Error().Err(err).Msg("cannot start component")
			streak = s.Backoff.Streak(streak, 0)
			s.update(c.Name, func(cs *ComponentStatus) { cs.State, cs.PID, cs.LastExit = ChildBackoff, 0, err.Error() })
		} else {
			startedAt := s.NowFunc()
			log.Info().Int("pid", pid).Msg("component started")
			select {
			case <-ctx.Done():
				s.stop(log, c, pid, exited)
				return
			case werr := <-exited:
				uptime := s.NowFunc().Sub(startedAt)
				// Whatever the component left in its group goes with it.
				_ = killGroup(pid)
				streak = s.Backoff.Streak(streak, uptime)
				desc := exitDescription(werr)
				s.update(c.Name, func(cs *ComponentStatus) { cs.State, cs.PID, cs.LastExit = ChildBackoff, 0, desc })
				log.Warn().Str("exit", desc).Dur("uptime", uptime).Int("streak", streak).Msg("component exited unexpectedly")
			}
		}
		delay := s.Backoff.Delay(streak)
		log.Info().Dur("delay", delay).Msg("restarting component after backoff")
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			s.update(c.Name, func(cs *ComponentStatus) { cs.State = ChildStopped })
			return
		case <-timer.C:
		}
	}
}

// start starts the component's process with its log file as stdout and
// stderr; exited receives the result of Wait.
func (s *Supervisor) start(c PlanComponent) (pid int, exited <-chan error, err error) {
	logf, err := os.OpenFile(c.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return 0, nil, fmt.Errorf("open log: %w", err)
	}
	defer logf.Close() // the child holds its own descriptor
	cmd := exec.Command(c.Argv[0], c.Argv[1:]...)
	cmd.Env = c.Env
	if cmd.Env == nil {
		cmd.Env = []string{}
	}
	cmd.Dir = c.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = groupAttr()
	if len(c.Secrets) > 0 {
		closeSecrets, err := secretfd.Attach(cmd, c.Secrets)
		if err != nil {
			return 0, nil, err
		}
		defer closeSecrets()
	}
	if err := cmd.Start(); err != nil {
		return 0, nil, err
	}
	ch := make(chan error, 1)
	go func() { ch <- cmd.Wait() }()
	now := s.NowFunc()
	s.update(c.Name, func(cs *ComponentStatus) {
		cs.State, cs.PID, cs.StartedAt = ChildRunning, cmd.Process.Pid, now
		cs.Starts++
	})
	return cmd.Process.Pid, ch, nil
}

// stop ends a running component: SIGTERM, then SIGKILL of its process
// group after StopTimeout.
func (s *Supervisor) stop(log zerolog.Logger, c PlanComponent, pid int, exited <-chan error) {
	s.update(c.Name, func(cs *ComponentStatus) { cs.State = ChildStopping })
	if err := terminate(pid); err != nil {
		log.Warn().Err(err).Msg("SIGTERM failed")
	}
	timer := time.NewTimer(s.StopTimeout)
	defer timer.Stop()
	var werr error
	select {
	case werr = <-exited:
	case <-timer.C:
		log.Warn().Dur("stop_timeout", s.StopTimeout).Msg("component ignored SIGTERM; killing its process group")
		_ = killGroup(pid)
		werr = <-exited
	}
	_ = killGroup(pid)
	desc := exitDescription(werr)
	s.update(c.Name, func(cs *ComponentStatus) { cs.State, cs.PID, cs.LastExit = ChildStopped, 0, desc })
	log.Info().Str("exit", desc).Msg("component stopped")
}

func (s *Supervisor) state(name string) ChildState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status.Components[name].State
}

// update changes one component's status and rewrites the status file. A failed write is logged: the file is a
// report, and the components keep running without it.
func (s *Supervisor) update(name string, f func(*ComponentStatus)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.status.Components[name]
	f(&cs)
	s.status.Components[name] = cs
	if err := s.flushLocked(); err != nil {
		s.Log.Warn().Err(err).Msg("cannot write the status file")
	}
}

func (s *Supervisor) flushLocked() error { return writeStatus(s.Plan.StatusPath, &s.status) }

// exitDescription renders a Wait result ("exit status 2", "signal:
// killed").
func exitDescription(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}
