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

// Resumable is a Process that can outlive the leashd server that started
// it: an agent on a runner (engine/agent/sandbox/remote). A server
// restart then interrupts nobody: the runner keeps the agent running and
// holds what it writes, and the next server adopts it (Adopter) and
// reads on from the last Ack.
type Resumable interface {
	// Ack says that the first n bytes read from Stdout have been handled
	// for good: a server that adopts the process later reads from byte n
	// on. n only grows; acks may be sent in batches, but never lost
	// before Detach returns.
	Ack(n int64)
	// Detach lets go of the process without ending it: the last Ack is
	// sent, nothing more is written to its stdin (which stays open), its
	// Stdout and Stderr end here, and Wait returns ErrDetached. A later
	// server may adopt it.
	Detach()
}

// Adopter is a Sandbox that can hand over a process an earlier leashd
// server started and let go (Resumable), by the Spec.Name it was started
// with (the chat).
type Adopter interface {
	// Adopt returns the held process started under name, reading its
	// Stdout from its last Ack on; ErrNotHeld when there is none.
	Adopt(name string) (Process, error)
}

// ErrNotHeld is returned by Adopt when no process is held for a name.
var ErrNotHeld = errors.New("no agent process is held for it")

// ErrDetached is what Wait returns for a process the server let go of
// (Resumable.Detach): it still runs, elsewhere.
var ErrDetached = errors.New("the agent process was let go of, still running, for the next server to adopt")
