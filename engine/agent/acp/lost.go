package acp

import (
	"context"
	"log/slog"
	"time"

	"github.com/leashd/leashd/engine/agent"
)

// loseConnection records why leashd gives up the connection to the agent;
// the session then ends (watchConnection).
func (s *session) loseConnection(why string) {
	s.mu.Lock()
	if s.lostWhy == "" {
		s.lostWhy = why
	}
	s.mu.Unlock()
}

func (s *session) lostReason() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lostWhy == "" {
		return "the connection to the agent closed"
	}
	return s.lostWhy
}

// watchConnection ends the session when its connection closes while the
// agent's process lives on (it closed its output, wrote what leashd could
// not read, or overflowed the SDK): without a connection nothing it does
// reaches anyone, and the chat would keep its agent slot for good. The
// process gets the close timeout to exit by itself, then Close ends it
// and everything it started; the turn, if any, ends saying why.
func (s *session) watchConnection() {
	select {
	case <-s.done:
		return
	case <-s.conn.Done():
	}
	s.mu.Lock()
	given := s.lostWhy != ""
	s.mu.Unlock()
	if !given { // perhaps the agent exited: then its own reason stands
		t := time.NewTimer(s.a.closeTimeout)
		defer t.Stop()
		select {
		case <-s.done:
			return
		case <-t.C:
		}
	}
	why := s.lostReason()
	s.mu.Lock()
	if s.closing == "" {
		s.closing = why
	}
	s.mu.Unlock()
	s.log.Warn("the connection to the agent closed while it runs; ending it", "why", why)
	_ = s.Close(context.Background())
	if s.handler() == nil && s.notice != nil { // a turn says it itself
		s.notice(agent.Notice{Kind: agent.NoticeLost, Text: "The agent's session ended: " + why + ". Your next message starts it again."})
	}
}

// cappedHandler quotes at most maxLogged bytes of any string or error in a
// log record: the SDK logs what the agent sent whole, at ERROR.
type cappedHandler struct{ slog.Handler }

// Handle implements slog.Handler.
func (h cappedHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, capText(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(capAttr(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

// WithAttrs implements slog.Handler.
func (h cappedHandler) WithAttrs(as []slog.Attr) slog.Handler {
	for i := range as {
		as[i] = capAttr(as[i])
	}
	return cappedHandler{h.Handler.WithAttrs(as)}
}

// WithGroup implements slog.Handler.
func (h cappedHandler) WithGroup(name string) slog.Handler {
	return cappedHandler{h.Handler.WithGroup(name)}
}

func capAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, capText(v.String()))
	case slog.KindGroup:
		g := v.Group()
		out := make([]any, len(g))
		for i, x := range g {
			out[i] = capAttr(x)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok && len(err.Error()) > maxLogged {
			return slog.String(a.Key, capText(err.Error()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

func capText(s string) string {
	if len(s) <= maxLogged {
		return s
	}
	return excerpt([]byte(s))
}
