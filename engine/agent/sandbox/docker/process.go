package docker

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/pkg/stdcopy"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
)

// proc is a running container, seen as a process: its stdio, its exit, its
// signals. Stdout and stderr are pipes of our own, fed from the attach
// stream, so they behave as a local process's: they end when the
// container's output does, and a reader that stops reading blocks only
// itself.
type proc struct {
	cli  *client.Client
	id   string
	conn client.HijackedResponse

	stdin          *stdin
	stdout, stderr *os.File
	copied         chan struct{} // the attach stream ended and both pipes are closed

	exited  chan struct{} // the container exited (or waiting for it failed)
	exitErr error
	cancel  context.CancelFunc // ends the wait request
	endOnce sync.Once
}

// run attaches to the created container id, starts waiting for its exit
// (before it starts, so a quick exit is not missed) and starts it.
func (s *Sandbox) run(ctx context.Context, id string) (*proc, error) {
	att, err := s.cli.ContainerAttach(ctx, id, client.ContainerAttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		return nil, fmt.Errorf("attaching: %w", err)
	}
	p := &proc{cli: s.cli, id: id, conn: att.HijackedResponse, copied: make(chan struct{}), exited: make(chan struct{})}
	p.stdin = &stdin{conn: &p.conn}
	outR, outW, err := os.Pipe()
	if err != nil {
		att.Close()
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		att.Close()
		outR.Close()
		outW.Close()
		return nil, err
	}
	p.stdout, p.stderr = outR, errR
	go p.copy(outW, errW)
	wctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	wait := s.cli.ContainerWait(wctx, id, client.ContainerWaitOptions{Condition: container.WaitConditionNextExit})
	go p.wait(wait)
	if _, err := s.cli.ContainerStart(ctx, id, client.ContainerStartOptions{}); err != nil {
		cancel()
		att.Close()
		<-p.copied
		outR.Close()
		errR.Close()
		return nil, err
	}
	return p, nil
}

// copy splits the attach stream into the two pipes until the container's
// output ends. When a reader closed its end, the rest is read and dropped,
// so the container never blocks on output nobody reads.
func (p *proc) copy(outW, errW *os.File) {
	defer close(p.copied)
	_, err := stdcopy.StdCopy(outW, errW, p.conn.Reader)
	outW.Close()
	errW.Close()
	if err != nil {
		_, _ = io.Copy(io.Discard, p.conn.Reader)
	}
}

// wait records the container's exit.
func (p *proc) wait(w client.ContainerWaitResult) {
	defer close(p.exited)
	select {
	case res := <-w.Result:
		switch {
		case res.Error != nil && res.Error.Message != "":
			p.exitErr = fmt.Errorf("container %s: %s", p.ID(), res.Error.Message)
		case res.StatusCode != 0:
			p.exitErr = &ExitError{Code: int(res.StatusCode)}
		}
	case err := <-w.Error:
		p.exitErr = fmt.Errorf("waiting for container %s: %w", p.ID(), err)
	}
}

// ExitError is Wait's error when the agent exited with a status other
// than 0. Killed by a signal, the status is 128 + the signal's number.
type ExitError struct{ Code int }

func (e *ExitError) Error() string {
	if e.Code > 128 && e.Code < 128+65 {
		return fmt.Sprintf("exit status %d (signal: %s)", e.Code, syscall.Signal(e.Code-128))
	}
	return "exit status " + strconv.Itoa(e.Code)
}

func (p *proc) Stdin() io.WriteCloser { return p.stdin }
func (p *proc) Stdout() io.ReadCloser { return p.stdout }
func (p *proc) Stderr() io.ReadCloser { return p.stderr }

// ID implements sandbox.Process: the container's short ID.
func (p *proc) ID() string {
	if len(p.id) > 12 {
		return p.id[:12]
	}
	return p.id
}

// Wait implements sandbox.Process: it returns when the container exited.
func (p *proc) Wait() error {
	<-p.exited
	return p.exitErr
}

// Signal implements sandbox.Process: the signal goes to the container's
// init, which passes it on to the agent; SIGKILL ends the container and
// everything in it at once. After the exit it is os.ErrProcessDone.
func (p *proc) Signal(sig syscall.Signal) error {
	select {
	case <-p.exited:
		return os.ErrProcessDone
	default:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := p.cli.ContainerKill(ctx, p.id, client.ContainerKillOptions{Signal: strconv.Itoa(int(sig))})
	return err
}

// End implements sandbox.Process: it removes the container. One still
// running gets SIGTERM and grace to exit first; removing it kills the
// rest. The output the container printed last is read before the
// connection closes (at most grace more).
func (p *proc) End(grace time.Duration) {
	p.endOnce.Do(func() {
		select {
		case <-p.exited:
		default:
			_ = p.Signal(syscall.SIGTERM)
			t := time.NewTimer(grace)
			select {
			case <-p.exited:
			case <-t.C:
			}
			t.Stop()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := p.cli.ContainerRemove(ctx, p.id, client.ContainerRemoveOptions{Force: true})
		if err != nil && !cerrdefs.IsNotFound(err) {
			// Try once more: a container left behind is reaped at the next start.
			_, _ = p.cli.ContainerRemove(ctx, p.id, client.ContainerRemoveOptions{Force: true})
		}
		t := time.NewTimer(grace)
		select {
		case <-p.copied:
		case <-t.C:
		}
		t.Stop()
		p.conn.Close()
		p.cancel()
	})
}

// stdin is the container's standard input: the attach connection's
// writing half. Close half-closes it, and the daemon closes the agent's
// stdin (StdinOnce), as closing a pipe would.
type stdin struct {
	conn   *client.HijackedResponse
	mu     sync.Mutex
	closed bool
}

func (w *stdin) Write(b []byte) (int, error) {
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		return 0, os.ErrClosed
	}
	return w.conn.Conn.Write(b)
}

func (w *stdin) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	return w.conn.CloseWrite()
}
