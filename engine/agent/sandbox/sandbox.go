// Package sandbox starts an agent's process so that it cannot reach the
// leashd that guards it: with a minimal environment (no LEASHD_* variable,
// no bot token), and, when the operator asks for it, inside bubblewrap or a
// container that hides leashd's state.
//
// The drivers (claude, acp) start every process through a Sandbox; cmd
// picks which one from LEASHD_SANDBOX.
package sandbox

import (
	"errors"
	"io"
	"syscall"
	"time"
)

// Spec is one agent process to start.
type Spec struct {
	Path string   // the program; resolved by the sandbox's LookPath
	Args []string // its arguments, without the program
	Dir  string   // its working directory, which it may write (the chat's worktree)
	Env  []string // variables the driver sets ("K=V"), on top of the minimal environment
	Name string   // a short name for logs and container names (the chat)
}

// Process is a started agent process.
type Process interface {
	// Stdin, Stdout and Stderr are the process's standard streams. Stdout
	// and Stderr end when nothing of the process holds them any more; the
	// caller closes them when it stops reading.
	Stdin() io.WriteCloser
	Stdout() io.ReadCloser
	Stderr() io.ReadCloser
	// Wait waits for the process itself to exit; call it once.
	Wait() error
	// Signal signals the process and everything it started.
	Signal(sig syscall.Signal) error
	// End makes sure nothing the process started still runs once it has
	// exited: SIGTERM, then after grace SIGKILL. It returns when all is gone
	// (or after twice grace).
	End(grace time.Duration)
	// ID names the process in logs: a pid, or a container's ID.
	ID() string
}

// Sandbox starts agent processes.
type Sandbox interface {
	// Name is the LEASHD_SANDBOX mode: "off", "bwrap" or "docker".
	Name() string
	// LookPath finds a program the way Start will run it.
	LookPath(file string) (string, error)
	// Start starts spec's program.
	Start(spec Spec) (Process, error)
}

// ErrUnavailable is wrapped by errors saying a sandbox cannot work here
// (bwrap cannot create namespaces, no Docker daemon answers).
var ErrUnavailable = errors.New("sandbox unavailable")
