package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// Notice is something an agent reported beside its interactions (see
// engine.AgentNotice): a tool call it denied without asking, writes it
// lost, a conversation it reset.
type Notice struct {
	ChatID string    `json:"chat_id"`
	Kind   string    `json:"kind"`
	Text   string    `json:"text"`
	At     time.Time `json:"at"`
}

// RecordNotice implements engine.Store: it appends the notice to the
// audit log.
func (s *Store) RecordNotice(ctx context.Context, chatID, kind, text string, at time.Time) error {
	if at.IsZero() {
		at = s.now()
	}
	lost := lostAttrs("an agent's notice is missing from the audit log (the chat was told)",
		"chat", chatID, "kind", kind, "text", text)
	err := s.write(ctx, OpNotice, lost, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO notices (chat_id, kind, text, at) VALUES (?, ?, ?, ?)`,
			chatID, kind, text, fmtTime(at))
		return err
	})
	if err != nil {
		return fmt.Errorf("recording a %s notice for chat %s: %w", kind, chatID, err)
	}
	return nil
}

// Notices returns the agents' notices the filter selects by chat, time
// and limit (Kind and Status select interactions only), oldest first.
func (s *Store) Notices(ctx context.Context, f AuditFilter) ([]Notice, error) {
	if f.Limit < 0 {
		return nil, fmt.Errorf("reading the audit log: limit %d is negative", f.Limit)
	}
	q, args := filterQuery(f, "notices", "chat_id, kind, text, at", "at", false)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("reading the audit log's notices: %w", err)
	}
	defer rows.Close()
	var out []Notice
	for rows.Next() {
		var n Notice
		var at string
		if err := rows.Scan(&n.ChatID, &n.Kind, &n.Text, &at); err != nil {
			return nil, fmt.Errorf("reading the audit log's notices: %w", err)
		}
		t, err := time.Parse(timeLayout, at)
		if err != nil {
			return nil, fmt.Errorf("reading the audit log's notices: bad time %q: %w", at, err)
		}
		n.At = t
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the audit log's notices: %w", err)
	}
	return out, nil
}
