//go:build !linux

package tool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// errNoSandbox: namespaces are Linux-only.
var errNoSandbox = errors.New("tool: sandboxes need Linux namespaces")

func setNamespaces(*syscall.SysProcAttr) {}

func needsRelay() bool { return false }

// ProbeSandbox always fails off Linux.
func ProbeSandbox(context.Context, string, []string) error { return errNoSandbox }

// SandboxMain refuses off Linux.
func SandboxMain([]string) int {
	fmt.Fprintln(os.Stderr, errNoSandbox)
	return 125
}

func fencePipe() (*os.File, int, error) { return nil, -1, errNoSandbox }

func closeFD(int) {}

func writeDeadline(int, time.Time) {}

// Probe always fails off Linux.
func (s *Sandbox) Probe(context.Context, string) error { return errNoSandbox }
