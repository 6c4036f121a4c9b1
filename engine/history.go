package engine

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine/agent"
)

// TurnUsage is one finished turn as /sessions and /cost count it: the
// agent session it ran in, its prompt, and what it cost as the agent's
// result reported it.
type TurnUsage struct {
	ChatID, SessionID string
	Prompt            string // cut to maxTitle characters
	At                time.Time
	CostUSD           float64
	InputTokens       int64
	OutputTokens      int64
}

// PastSession is one of a chat's agent sessions: when it started, its
// first prompt as its title, and its turns' totals.
type PastSession struct {
	SessionID     string
	Title         string
	Started, Last time.Time
	Totals
}

// Totals add up turns' usage.
type Totals struct {
	Turns        int
	CostUSD      float64
	InputTokens  int64
	OutputTokens int64
}

// add counts u in t.
func (t *Totals) add(u TurnUsage) {
	t.Turns++
	t.CostUSD += u.CostUSD
	t.InputTokens += u.InputTokens
	t.OutputTokens += u.OutputTokens
}

// History keeps finished turns for /sessions, /resume and /cost. A Store
// that implements it keeps them across restarts (engine/sqlite does);
// the in-memory store keeps the last maxMemTurns.
type History interface {
	RecordTurn(ctx context.Context, u TurnUsage) error
	// PastSessions are the chat's sessions, the most recently used
	// first, at most limit.
	PastSessions(ctx context.Context, chatID string, limit int) ([]PastSession, error)
	// TotalsSince adds up the chat's turns since a time.
	TotalsSince(ctx context.Context, chatID string, since time.Time) (Totals, error)
}

const (
	maxTitle     = 120  // characters of a session's title kept
	maxMemTurns  = 5000 // turns the in-memory store keeps
	listSessions = 10   // sessions /sessions lists
)

// history is the engine's History: the store's when it keeps one.
func (e *Engine) history() History {
	if h, ok := e.store.(History); ok {
		return h
	}
	return nil
}

// recordTurn keeps a finished turn's usage for /sessions and /cost.
func (e *Engine) recordTurn(c *chat, t *turn, prompt string, res agent.Result) {
	h := e.history()
	if h == nil {
		return
	}
	id := res.SessionID
	if id == "" {
		id = t.sess.ID()
	}
	if id == "" {
		return // nothing to resume
	}
	u := TurnUsage{ChatID: c.id, SessionID: id, Prompt: connectors.Truncate(strings.Join(strings.Fields(prompt), " "), maxTitle),
		At: e.clock().Now(), CostUSD: res.CostUSD, InputTokens: res.InputTokens, OutputTokens: res.OutputTokens}
	if err := h.RecordTurn(context.WithoutCancel(e.agentCtx), u); err != nil {
		e.log.Warn("recording a turn's usage", "chat", c.id, "err", err)
	}
}

// RecordTurn implements History.
func (s *memStore) RecordTurn(_ context.Context, u TurnUsage) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.turns = append(s.turns, u)
	if len(s.turns) > maxMemTurns {
		s.turns = slices.Delete(s.turns, 0, len(s.turns)-maxMemTurns)
	}
	return nil
}

// PastSessions implements History.
func (s *memStore) PastSessions(_ context.Context, chatID string, limit int) ([]PastSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []PastSession
	at := map[string]int{}
	lastTurn := map[string]int{} // the latest turn first, as the database orders them
	for n, u := range s.turns {
		if u.ChatID != chatID {
			continue
		}
		i, ok := at[u.SessionID]
		if !ok {
			i = len(out)
			at[u.SessionID] = i
			out = append(out, PastSession{SessionID: u.SessionID, Title: u.Prompt, Started: u.At})
		}
		out[i].Last = u.At
		out[i].add(u)
		lastTurn[u.SessionID] = n
	}
	slices.SortFunc(out, func(a, b PastSession) int { return lastTurn[b.SessionID] - lastTurn[a.SessionID] })
	return out[:min(len(out), limit)], nil
}

// TotalsSince implements History.
func (s *memStore) TotalsSince(_ context.Context, chatID string, since time.Time) (Totals, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var t Totals
	for _, u := range s.turns {
		if u.ChatID == chatID && !u.At.Before(since) {
			t.add(u)
		}
	}
	return t, nil
}
