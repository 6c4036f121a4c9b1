package claude

import (
	"context"
	"errors"
	"fmt"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/agent/sandbox"
)

// A CLI on a runner outlives a restart of leashd (sandbox.Resumable): at
// shutdown the session is let go of (Detach) instead of closed, the runner
// holds what the CLI writes, and the next run adopts the same process
// (Adopt) and reads on from the last ack — without the initialize
// handshake, which a CLI answers once. Acks never pass the line of a
// request not answered yet: the next run reads that request again, asks
// it with the same Ref, and the engine matches it to the interaction the
// journal restored, so a tap after the restart reaches this process.

// resumable is the process as a sandbox.Resumable, or nil.
func (s *session) resumable() sandbox.Resumable {
	r, _ := s.proc.(sandbox.Resumable)
	return r
}

// handled notes that the reader handled n more bytes of stdout.
func (s *session) handled(n int) {
	s.mu.Lock()
	s.outHandled += int64(n)
	s.lineAt = s.outHandled
	s.ackLocked()
	s.mu.Unlock()
}

// forgetPerm drops a decided request; acks may pass its line now.
func (s *session) forgetPerm(reqID string) {
	s.mu.Lock()
	delete(s.perms, reqID)
	s.ackLocked()
	s.mu.Unlock()
}

// ackLocked acks what was handled, up to the first request still being
// decided. Called with s.mu held, so acks go out in order.
func (s *session) ackLocked() {
	r := s.resumable()
	if r == nil || s.letGoOf {
		return
	}
	n := s.outHandled
	for _, p := range s.perms {
		n = min(n, p.at)
	}
	if n > s.outAcked {
		s.outAcked = n
		r.Ack(n)
	}
}

// startReading starts the stdout reader once: at start, or for an adopted
// session at its first turn (what it reads first may need that turn).
func (s *session) startReading() { s.readOnce.Do(func() { go s.read() }) }

// Detach implements agent.Detacher: from now on nothing is written to
// the CLI — not the denials that interrupting its pending requests at
// shutdown would send — and the last ack goes out; Close then lets go of
// the process, which runs on, on its runner, for the next leashd.
func (s *session) Detach() bool {
	if s.resumable() == nil {
		return false
	}
	s.writeMu.Lock()
	s.stdinClosed = true // to this run; its stdin stays open for the next
	s.writeMu.Unlock()
	s.markClosed("let go of at shutdown, running on for the next leashd")
	s.mu.Lock()
	s.ackLocked()
	s.letGoOf = true
	s.mu.Unlock()
	return true
}

// isLetGo reports whether Detach was called.
func (s *session) isLetGo() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.letGoOf
}

// letGoNow ends the session of a process Detach let go of: its streams
// stop here, it runs on.
func (s *session) letGoNow(ctx context.Context) error {
	s.detachOnce.Do(func() {
		s.resumable().Detach()
		s.mu.Lock()
		acked := s.outAcked
		s.mu.Unlock()
		s.log.Info("claude let go of at shutdown; it runs on for the next leashd", "acked", acked)
	})
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("letting go of claude (%s): %w", s.proc.ID(), ctx.Err())
	}
}

// Adopt implements agent.Adopter.
func (a *Agent) Adopt(_ context.Context, o agent.SessionOptions) (agent.Session, error) {
	ad, ok := a.sandbox.(sandbox.Adopter)
	if !ok {
		return nil, fmt.Errorf("%w: agents run on this server only", sandbox.ErrNotHeld)
	}
	proc, err := ad.Adopt(o.ChatID)
	if err != nil {
		return nil, err
	}
	s := newSession(a, o, proc)
	s.log.Info("claude adopted from the last run of leashd")
	go s.wait()
	return s, nil
}

// Continue implements agent.Continuer: the turn the CLI was in when the
// last run let it go, sending no prompt.
func (s *session) Continue(ctx context.Context, h agent.TurnHandler) (agent.Result, error) {
	return s.runTurn(ctx, nil, h)
}

// detached reports whether the process was let go of, not ended.
func detached(exitErr error) bool { return errors.Is(exitErr, sandbox.ErrDetached) }
