package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// sessionsCommand answers /sessions: the chat's agent sessions, the most
// recently used first, numbered for /resume.
func (e *Engine) sessionsCommand(ctx context.Context, chatID string) string {
	list, current, err := e.pastSessions(ctx, chatID, listSessions)
	if err != nil {
		return "Could not read this chat's sessions: " + err.Error()
	}
	if len(list) == 0 {
		return "No sessions in this chat yet: send a message to start one."
	}
	var b strings.Builder
	b.WriteString("Sessions in this chat, most recent first:\n")
	for i, s := range list {
		title := s.Title
		if title == "" {
			title = "(no prompt)"
		}
		fmt.Fprintf(&b, "%d. %s · %q · %s · %s", i+1, e.when(s.Started), title, money(s.CostUSD), plural(s.Turns, "turn"))
		if s.SessionID == current {
			b.WriteString(" ← current")
		}
		b.WriteString("\n")
	}
	b.WriteString("/resume N goes back to one.")
	return b.String()
}

// resumeCommand answers /resume N: the chat's next prompt continues the
// N-th session /sessions lists, in a fresh agent process.
func (e *Engine) resumeCommand(ctx context.Context, chatID, args string) string {
	list, current, err := e.pastSessions(ctx, chatID, listSessions)
	if err != nil {
		return "Could not read this chat's sessions: " + err.Error()
	}
	if len(list) == 0 {
		return "No sessions in this chat yet: send a message to start one."
	}
	n, err := strconv.Atoi(strings.TrimSpace(args))
	if err != nil || n < 1 || n > len(list) {
		return fmt.Sprintf("Usage: /resume N, where N is a session's number from /sessions (1 to %d).", len(list))
	}
	s := list[n-1]
	if s.SessionID == current {
		return fmt.Sprintf("Session %d is this chat's current session already.", n)
	}
	c := e.chatFor(ctx, chatID)
	e.mu.Lock()
	if c.current != nil || len(c.queue) > 0 {
		e.mu.Unlock()
		return "A turn is running: /stop it first, then /resume."
	}
	c.gen++
	c.allowed = nil // "allow for this session" rules belong to the session left
	sess := c.sess
	e.dropSessionLocked(c)
	c.agentID = s.SessionID
	e.mu.Unlock()
	e.save(c)
	if sess != nil {
		go e.closeSession(sess)
	}
	return fmt.Sprintf("Back to session %d (%q, started %s): your next message continues it.", n, s.Title, e.when(s.Started))
}

// costCommand answers /cost: the tokens and cost of the chat's current
// session and of its turns today, as the agent reported them.
func (e *Engine) costCommand(ctx context.Context, chatID string) string {
	h := e.history()
	if h == nil {
		return "This store keeps no usage."
	}
	list, current, err := e.pastSessions(ctx, chatID, maxMemTurns)
	if err != nil {
		return "Could not read this chat's usage: " + err.Error()
	}
	var b strings.Builder
	b.WriteString("This session: ")
	var this Totals
	for _, s := range list {
		if s.SessionID == current && current != "" {
			this = s.Totals
		}
	}
	b.WriteString(usageLine(this))
	now := e.clock().Now()
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	today, err := h.TotalsSince(ctx, chatID, midnight)
	if err != nil {
		return "Could not read this chat's usage: " + err.Error()
	}
	b.WriteString("\nToday in this chat: " + usageLine(today))
	b.WriteString("\nCosts are the agent's own estimates.")
	return b.String()
}

// pastSessions are the chat's sessions (History.PastSessions) and the
// agent session ID it is in now ("" for none).
func (e *Engine) pastSessions(ctx context.Context, chatID string, limit int) ([]PastSession, string, error) {
	h := e.history()
	if h == nil {
		return nil, "", nil
	}
	c := e.chatFor(ctx, chatID)
	e.mu.Lock()
	current := c.agentID
	e.mu.Unlock()
	list, err := h.PastSessions(ctx, chatID, limit)
	return list, current, err
}

func usageLine(t Totals) string {
	if t.Turns == 0 {
		return "no turns yet"
	}
	return fmt.Sprintf("%s · %s tokens in, %s out · %s", plural(t.Turns, "turn"), thousands(t.InputTokens), thousands(t.OutputTokens), money(t.CostUSD))
}

// when is a time as sessions show it, in the server's time zone.
func (e *Engine) when(t time.Time) string {
	t = t.In(e.clock().Now().Location())
	return t.Format("2 Jan 15:04")
}

func money(usd float64) string {
	if usd > 0 && usd < 0.01 {
		return fmt.Sprintf("$%.4f", usd)
	}
	return fmt.Sprintf("$%.2f", usd)
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// thousands writes n with commas between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
