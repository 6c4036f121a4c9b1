package sandbox

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/leashd/leashd/engine/agent/internal/agentproc"
)

// Wrapper turns an agent's command into one that runs it confined (bwrap).
type Wrapper interface {
	// Name is the LEASHD_SANDBOX mode it implements.
	Name() string
	// Wrap returns the program and arguments that run spec's program,
	// already resolved to path, confined.
	Wrap(spec Spec, path string) (string, []string, error)
}

// Host runs agents as leashd's own child processes, each in its own
// process group, with the minimal environment; through Wrap when set.
type Host struct {
	AgentEnv []string // LEASHD_AGENT_ENV
	Wrap     Wrapper  // nil: not confined (LEASHD_SANDBOX=off)
}

// Name implements Sandbox.
func (h *Host) Name() string {
	if h == nil || h.Wrap == nil {
		return "off"
	}
	return h.Wrap.Name()
}

// LookPath implements Sandbox: the host's PATH (a bwrap sandbox sees the
// host's file system read-only, so the same program).
func (h *Host) LookPath(file string) (string, error) { return exec.LookPath(file) }

// Start implements Sandbox.
func (h *Host) Start(spec Spec) (Process, error) {
	path, err := exec.LookPath(spec.Path)
	if err != nil {
		return nil, err
	}
	var agentEnv []string
	if h != nil {
		agentEnv = h.AgentEnv
	}
	name, args := path, spec.Args
	if h != nil && h.Wrap != nil {
		if name, args, err = h.Wrap.Wrap(spec, path); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(name, args...)
	cmd.Dir = spec.Dir
	cmd.Env = hostEnviron(agentEnv, spec.Env)
	agentproc.SetGroup(cmd)
	return startLocal(cmd)
}

// local is a child process. Its stdout and stderr are pipes of our own, so
// that Wait returns when it exits even if a tool it started still holds
// them open.
type local struct {
	cmd            *exec.Cmd
	stdin          *os.File
	stdout, stderr *os.File
}

func startLocal(cmd *exec.Cmd) (*local, error) {
	var files [6]*os.File // stdin r,w; stdout r,w; stderr r,w
	closeAll := func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}
	for i := 0; i < 6; i += 2 {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll()
			return nil, err
		}
		files[i], files[i+1] = r, w
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = files[0], files[3], files[5]
	if err := cmd.Start(); err != nil {
		closeAll()
		return nil, fmt.Errorf("starting %s: %w", cmd.Path, err)
	}
	// The child holds its own copies.
	files[0].Close()
	files[3].Close()
	files[5].Close()
	return &local{cmd: cmd, stdin: files[1], stdout: files[2], stderr: files[4]}, nil
}

func (p *local) Stdin() io.WriteCloser   { return p.stdin }
func (p *local) Stdout() io.ReadCloser   { return p.stdout }
func (p *local) Stderr() io.ReadCloser   { return p.stderr }
func (p *local) Wait() error             { return p.cmd.Wait() }
func (p *local) ID() string              { return strconv.Itoa(p.cmd.Process.Pid) }
func (p *local) End(grace time.Duration) { agentproc.EndGroup(p.cmd.Process.Pid, grace) }

// Signal implements Process: the whole process group.
func (p *local) Signal(sig syscall.Signal) error { return agentproc.Signal(p.cmd.Process, sig) }
