package worker

import (
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// SweepCommand is the first argument that selects the launcher's sweep
// mode: `sett-worker sweep [--label k=v ...] [--docker-host H] -- PROGRAM
// ARGS...` removes the workers with those labels whose launcher is gone,
// then replaces itself with PROGRAM (execve: same pid, same environment).
//
// The Docker runtime starts every controller container this way, with
// the cub as PROGRAM: a controller whose cub was killed (and so every
// launcher with it) comes back with its restart policy, and its
// predecessor's workers are removed before the new cub can take a grant,
// so a claim never runs in two workers at once.
const SweepCommand = "sweep"

// Sweep is the command line of the sweep mode.
type Sweep struct {
	// Labels select the agent's workers, as Spec.Labels do.
	Labels map[string]string
	// DockerHost is the daemon; empty means DefaultDockerHost.
	DockerHost string
	// Exec is the program (absolute path) and arguments that replace the
	// launcher once the sweep is done.
	Exec []string
}

// Args renders s as a command line, SweepCommand first; ParseSweepArgs
// reads it back (after SweepCommand).
func (s Sweep) Args() []string {
	a := []string{SweepCommand}
	keys := make([]string, 0, len(s.Labels))
	for k := range s.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a = append(a, "--label="+k+"="+s.Labels[k])
	}
	if s.DockerHost != "" {
		a = append(a, "--docker-host="+s.DockerHost)
	}
	return append(append(a, "--"), s.Exec...)
}

// ParseSweepArgs reads a Sweep from the arguments after SweepCommand.
// Errors wrap ErrUsage.
func ParseSweepArgs(args []string, usage io.Writer) (Sweep, error) {
	var s Sweep
	var labels listFlag
	fs := flag.NewFlagSet("sett-worker sweep", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.Var(&labels, "label", "key=value label of the agent's workers (repeatable, at least one)")
	fs.StringVar(&s.DockerHost, "docker-host", DefaultDockerHost, "the Docker daemon")
	if err := fs.Parse(args); err != nil {
		return Sweep{}, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	s.Exec = fs.Args()
	if len(s.Exec) == 0 || !strings.HasPrefix(s.Exec[0], "/") {
		return Sweep{}, fmt.Errorf("%w: sweep needs the absolute path of the program to run after it (write `sett-worker sweep --label k=v -- /path/to/program ARGS...`)", ErrUsage)
	}
	if len(labels) == 0 {
		return Sweep{}, fmt.Errorf("%w: sweep needs at least one --label (without one it cannot tell the agent's workers from anyone else's)", ErrUsage)
	}
	var err error
	if s.Labels, err = parseLabels(labels); err != nil {
		return Sweep{}, err
	}
	return s, nil
}
