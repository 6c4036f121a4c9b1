//go:build unix

package acp

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup starts the agent in its own process group, so that what
// it starts (an adapter's CLI, a shell) is signalled along with it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup signals the agent's process group.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	if err := syscall.Kill(-p.Pid, sig); err != nil {
		return p.Signal(sig)
	}
	return nil
}
