package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/leashd/leashd/engine"
)

var _ engine.History = (*Store)(nil)

// RecordTurn implements engine.History: it appends a finished turn.
func (s *Store) RecordTurn(ctx context.Context, u engine.TurnUsage) error {
	if u.At.IsZero() {
		u.At = s.now()
	}
	lost := lostAttrs("a turn's usage is missing from /sessions and /cost",
		"chat", u.ChatID, "agent_session", u.SessionID, "cost_usd", u.CostUSD)
	err := s.write(context.WithoutCancel(ctx), OpTurn, lost, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO turns (chat_id, agent_session_id, at, prompt, cost_usd, input_tokens, output_tokens)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, u.ChatID, u.SessionID, fmtTime(u.At), u.Prompt, u.CostUSD, u.InputTokens, u.OutputTokens)
		return err
	})
	if err != nil {
		return fmt.Errorf("recording a turn of chat %s: %w", u.ChatID, err)
	}
	return nil
}

// PastSessions implements engine.History: each session's first prompt is
// its title.
func (s *Store) PastSessions(ctx context.Context, chatID string, limit int) ([]engine.PastSession, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT agent_session_id,
			(SELECT prompt FROM turns f WHERE f.chat_id = t.chat_id AND f.agent_session_id = t.agent_session_id ORDER BY seq LIMIT 1),
			MIN(at), MAX(at), COUNT(*), SUM(cost_usd), SUM(input_tokens), SUM(output_tokens)
		FROM turns t WHERE chat_id = ? GROUP BY agent_session_id ORDER BY MAX(seq) DESC LIMIT ?`, chatID, limit)
	if err != nil {
		return nil, fmt.Errorf("listing the sessions of chat %s: %w", chatID, err)
	}
	defer rows.Close()
	var out []engine.PastSession
	for rows.Next() {
		var p engine.PastSession
		var first, last sql.NullString
		if err := rows.Scan(&p.SessionID, &p.Title, &first, &last, &p.Turns, &p.CostUSD, &p.InputTokens, &p.OutputTokens); err != nil {
			return nil, fmt.Errorf("listing the sessions of chat %s: %w", chatID, err)
		}
		if p.Started, err = parseTime(first); err != nil {
			return nil, err
		}
		if p.Last, err = parseTime(last); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// TotalsSince implements engine.History.
func (s *Store) TotalsSince(ctx context.Context, chatID string, since time.Time) (engine.Totals, error) {
	var t engine.Totals
	err := s.r.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(cost_usd), 0), COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0)
		FROM turns WHERE chat_id = ? AND at >= ?`, chatID, fmtTime(since)).Scan(&t.Turns, &t.CostUSD, &t.InputTokens, &t.OutputTokens)
	if err != nil {
		return engine.Totals{}, fmt.Errorf("adding up the usage of chat %s: %w", chatID, err)
	}
	return t, nil
}
