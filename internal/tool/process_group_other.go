//go:build !unix

package tool

import (
	"os"
	"os/exec"
)

// Process groups are a Unix notion; elsewhere (development builds only, Sett
// runs tools on Linux) only the child itself is killed.

func setProcessGroup(cmd *exec.Cmd) {}

func killProcessGroup(p *os.Process) error {
	if err := p.Kill(); err != nil && err != os.ErrProcessDone {
		return err
	}
	return nil
}

func exitSignal(state *os.ProcessState) (string, bool) { return "", false }

func signalProcessGroup(p *os.Process, sig os.Signal) error {
	if err := p.Signal(sig); err != nil && err != os.ErrProcessDone {
		return err
	}
	return nil
}

func killGroupID(int) error                { return nil }
func groupExists(int) bool                 { return false }
func processStartTicks(int) (uint64, bool) { return 0, false }
