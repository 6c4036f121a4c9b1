//go:build !unix

package acp

import (
	"os"
	"os/exec"
	"syscall"
)

func setProcessGroup(*exec.Cmd) {}

func signalGroup(p *os.Process, sig syscall.Signal) error {
	if sig == syscall.SIGKILL {
		return p.Kill()
	}
	return p.Signal(sig)
}
