//go:build unix && !linux

package tool

import "syscall"

// setParentDeathSignal: only Linux has a parent-death signal; elsewhere
// the Ledger alone keeps tools from outliving their cub.
func setParentDeathSignal(*syscall.SysProcAttr) {}
