//go:build !unix

// Package agentproc starts an agent's process (the Claude CLI, an ACP
// agent) and signals it; without process groups, the process alone.
package agentproc

import (
	"os"
	"os/exec"
	"syscall"
)

// SetGroup does nothing where there are no process groups.
func SetGroup(*exec.Cmd) {}

// Signal signals p (SIGKILL kills it).
func Signal(p *os.Process, sig syscall.Signal) error {
	if sig == syscall.SIGKILL {
		return p.Kill()
	}
	return p.Signal(sig)
}
