//go:build !linux

package tool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
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
