//go:build unix

// Package agentproc starts an agent's process (the Claude CLI, an ACP
// agent) in its own process group and signals that group, so that what the
// agent starts (a shell, a dev server, an adapter's CLI) is signalled along
// with it.
package agentproc

import (
	"os"
	"os/exec"
	"syscall"
)

// SetGroup makes cmd start in its own process group, in a session of its
// own: without a controlling terminal, nothing the agent runs can open
// /dev/tty and type into the terminal leashd was started from (TIOCSTI).
func SetGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// Signal signals p's process group, or p alone when that fails.
func Signal(p *os.Process, sig syscall.Signal) error {
	if err := syscall.Kill(-p.Pid, sig); err != nil {
		return p.Signal(sig)
	}
	return nil
}
