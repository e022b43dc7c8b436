package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/settdev/sett/internal/blackboard"
	"github.com/settdev/sett/internal/connect"
	"github.com/settdev/sett/internal/instance"
	"github.com/settdev/sett/internal/runtime"
)

// Exit codes of `sett` (documented in docs/guide.md).
const (
	ExitOK       = 0
	ExitFailure  = 1  // an error, or `forage --wait` on a failed workflow
	ExitPending  = 2  // `forage --wait`: the workflow was cancelled or the wait timed out
	ExitRejected = 3  // `forage --wait`: a human rejected the workflow's work (approvals.on_reject: end)
	ExitUsage    = 64 // bad flags or arguments
)

// ExitError carries a specific exit code with its error.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}
func (e *ExitError) Unwrap() error { return e.Err }

// ExitCode maps an error returned by the root command to the process exit
// code.
func ExitCode(err error) int {
	var e *ExitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &e):
		return e.Code
	}
	return ExitFailure
}

// usageError marks bad flags or arguments.
func usageError(format string, args ...any) error {
	return &ExitError{Code: ExitUsage, Err: fmt.Errorf(format, args...)}
}

// App is everything the commands depend on.
type App struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// LookupEnv reads the environment (os.LookupEnv in production).
	LookupEnv func(string) (string, bool)
	// Dir is the directory the command runs in.
	Dir string
	// Runtimes by name ("docker", "local").
	Runtimes map[string]runtime.Runtime
	// Now is the clock for relative times.
	Now func() time.Time
	// IsTTY reports whether Out is a terminal (colour, live progress).
	IsTTY bool

	// Global flags.
	name     string
	redisURL string
	// dialled describes the external Redis Connect dialled ("" for a URL).
	dialled   string
	noColor   bool
	fullIDs   bool
	opTimeout time.Duration
}

// NewApp returns an App for the real process.
func NewApp(runtimes map[string]runtime.Runtime) *App {
	wd, _ := os.Getwd()
	return &App{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, LookupEnv: os.LookupEnv, Dir: wd,
		Runtimes: runtimes, Now: time.Now, IsTTY: isTerminal(os.Stdout)}
}

func (a *App) env(name string) string {
	if a.LookupEnv == nil {
		return ""
	}
	v, _ := a.LookupEnv(name)
	return v
}

// Workspace is the workspace the command acts on: the nearest directory
// above Dir holding sett.yml or .sett.
func (a *App) Workspace() string { return instance.FindWorkspace(a.Dir) }

// InstanceName is --name, else SETT_INSTANCE, else "".
func (a *App) InstanceName() string {
	if a.name != "" {
		return a.name
	}
	return a.env("SETT_INSTANCE")
}

// Connect opens the blackboard of the instance the command means: with
// --redis-url (or SETT_REDIS_URL) and an instance name it connects
// directly; when the instance's sett.yml names an external Redis
// (services.redis: url, sentinel or cluster) it connects as the daemons
// do, with those settings; otherwise it uses the instance record's URL.
//
// With a Redis the runtime started, it connects as the instance's
// people's ACL user (instance.AccessHuman): see ConnectAs.
func (a *App) Connect(ctx context.Context) (*blackboard.Client, *instance.Record, error) {
	return a.ConnectAs(ctx, instance.AccessHuman)
}

// withBlackboard connects to the instance's blackboard as Connect does,
// runs fn with the client and closes the client when fn returns: the
// frame of the commands that read or write the blackboard. It returns
// the connection's error or fn's.
func (a *App) withBlackboard(ctx context.Context, fn func(*blackboard.Client) error) error {
	return a.withBlackboardAs(ctx, instance.AccessHuman, fn)
}

// withBlackboardAs is withBlackboard connected as access (ConnectAs).
func (a *App) withBlackboardAs(ctx context.Context, access instance.Access, fn func(*blackboard.Client) error) error {
	bb, _, err := a.ConnectAs(ctx, access)
	if err != nil {
		return err
	}
	defer bb.Close()
	return fn(bb)
}

// ConnectAs is Connect with the Redis user a command needs, when the
// runtime created the instance's ACL users (the record names them): the
// people's user by default, the read-only user for commands that only
// read, the admin for maintenance. --redis-url, SETT_REDIS_URL and an
// external Redis's settings are used as given. connect.Resolve decides
// (the client API's DialEnv shares it); a missing instance is explained
// with what the runtimes know (explainNoInstance).
func (a *App) ConnectAs(ctx context.Context, access instance.Access) (*blackboard.Client, *instance.Record, error) {
	t, err := connect.Resolve(connect.Request{Dir: a.Dir, URL: a.redisURL, Instance: a.name, LookupEnv: a.LookupEnv,
		Access: access, NameHint: "pass --name",
		ExplainNoInstance: func(err error) error { return explainNoInstance(ctx, a, err) }})
	var noName *connect.NoNameError
	if errors.As(err, &noName) {
		return nil, nil, usageError("%v", err)
	}
	if err != nil {
		return nil, nil, err
	}
	a.dialled = t.Where
	bb, err := t.Dial(ctx, blackboard.Options{OpTimeout: a.opTimeout})
	if err != nil {
		return nil, nil, err
	}
	return bb, t.Record, nil
}
