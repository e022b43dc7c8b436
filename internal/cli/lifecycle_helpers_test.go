package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
)

// stubRuntime is a runtime.Runtime that records what the lifecycle
// commands ask of it and answers from its fields.
type stubRuntime struct {
	name     string
	upRec    func(spec runtime.UpSpec) *instance.Record
	upErr    error
	listing  []runtime.Listing
	listErr  error
	logsText string

	mu       sync.Mutex
	upSpecs  []runtime.UpSpec
	downs    []bool // purge flag of each Down
	logsArgs []string
}

func (s *stubRuntime) Name() string { return s.name }

func (s *stubRuntime) Up(_ context.Context, spec runtime.UpSpec) (*instance.Record, error) {
	s.mu.Lock()
	s.upSpecs = append(s.upSpecs, spec)
	s.mu.Unlock()
	if spec.ProgressFunc != nil {
		spec.ProgressFunc(runtime.Progress{Component: "redis", State: "starting"})
		spec.ProgressFunc(runtime.Progress{Component: "redis", State: "ready", Detail: "127.0.0.1:1"})
	}
	if s.upErr != nil {
		return nil, s.upErr
	}
	return s.upRec(spec), nil
}

func (s *stubRuntime) Down(_ context.Context, _ *instance.Record, purge bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.downs = append(s.downs, purge)
	return nil
}

func (s *stubRuntime) List(context.Context) ([]runtime.Listing, error) { return s.listing, s.listErr }

func (s *stubRuntime) Logs(_ context.Context, _ *instance.Record, component string, follow bool, w io.Writer) error {
	s.mu.Lock()
	s.logsArgs = append(s.logsArgs, component)
	s.mu.Unlock()
	_, err := io.WriteString(w, s.logsText)
	return err
}

// recordFor is the record a stub Up returns.
func recordFor(rt string) func(runtime.UpSpec) *instance.Record {
	return func(spec runtime.UpSpec) *instance.Record {
		return &instance.Record{Name: spec.Name, Runtime: rt, Workspace: spec.Workspace,
			RedisURL: "redis://:secret@127.0.0.1:1/0", CreatedAt: time.Unix(0, 0).UTC(),
			Components: map[string]instance.Component{"redis": {}, "orchestrator": {}}}
	}
}

// runLifecycle runs one sett command line in dir against buffers, with
// env as the whole environment.
func runLifecycle(t *testing.T, dir string, runtimes map[string]runtime.Runtime, env map[string]string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	app := &App{In: strings.NewReader(""), Out: &out, Err: &errOut, Dir: dir, Runtimes: runtimes, Now: time.Now,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }}
	root := NewRoot(app)
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// isUsage reports whether err carries the usage exit code.
func isUsage(err error) bool {
	var e *ExitError
	return errors.As(err, &e) && e.Code == ExitUsage
}
