//go:build unix

package claude

import (
	"os"
	"os/exec"
	"syscall"
)

// setProcessGroup starts the CLI in its own process group, so that the
// tools it runs (a shell, a dev server) are signalled along with it.
func setProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup signals the CLI's process group.
func signalGroup(p *os.Process, sig syscall.Signal) error {
	if err := syscall.Kill(-p.Pid, sig); err != nil {
		return p.Signal(sig)
	}
	return nil
}
