package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/leashd/leashd/engine/agent"

	"github.com/leashd/leashd/engine"
)

// Store is all the engine keeps across restarts.
var _ engine.Store = (*Store)(nil)

// LoadSession implements engine.Store.
func (s *Store) LoadSession(ctx context.Context, chatID string) (engine.SessionRecord, bool, error) {
	var rec engine.SessionRecord
	var mode string
	var last sql.NullString
	err := s.r.QueryRowContext(ctx, `SELECT chat_id, agent_session_id, mode, workdir, last_active, in_turn, let_go
		FROM sessions WHERE chat_id = ?`, chatID).Scan(&rec.ChatID, &rec.AgentSessionID, &mode, &rec.WorkDir, &last, &rec.InTurn, &rec.LetGo)
	if errors.Is(err, sql.ErrNoRows) {
		return engine.SessionRecord{}, false, nil
	}
	if err != nil {
		return engine.SessionRecord{}, false, fmt.Errorf("loading the session of chat %s: %w", chatID, err)
	}
	rec.Mode = agent.Mode(mode)
	if rec.LastActive, err = parseTime(last); err != nil {
		return engine.SessionRecord{}, false, fmt.Errorf("loading the session of chat %s: %w", chatID, err)
	}
	return rec, true, nil
}

// SaveSession implements engine.Store: it inserts or replaces the
// chat's session (sessions are current state, not history).
func (s *Store) SaveSession(ctx context.Context, rec engine.SessionRecord) error {
	if rec.ChatID == "" {
		return errors.New("saving a session without a chat ID")
	}
	ctx = context.WithoutCancel(ctx) // a failed write is retried later
	lost := lostAttrs("the chat's agent session, mode and workdir: after a restart the chat may start a new agent session",
		"chat", rec.ChatID, "agent_session", rec.AgentSessionID, "mode", string(rec.Mode), "workdir", rec.WorkDir)
	err := s.write(ctx, OpSession, lost, func(tx *sql.Tx) error {
		_, err := s.exec(ctx, tx, sqlSaveSession,
			rec.ChatID, rec.AgentSessionID, string(rec.Mode), rec.WorkDir, fmtTime(rec.LastActive), rec.InTurn, rec.LetGo)
		return err
	})
	if err != nil {
		return fmt.Errorf("saving the session of chat %s: %w", rec.ChatID, err)
	}
	return nil
}

// Sessions returns every chat's session record, by chat ID (`leashd
// worktrees` asks which chats still work in which directory).
func (s *Store) Sessions(ctx context.Context) ([]engine.SessionRecord, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT chat_id, agent_session_id, mode, workdir, last_active
		FROM sessions ORDER BY chat_id`)
	if err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	defer rows.Close()
	var out []engine.SessionRecord
	for rows.Next() {
		var rec engine.SessionRecord
		var mode string
		var last sql.NullString
		if err := rows.Scan(&rec.ChatID, &rec.AgentSessionID, &mode, &rec.WorkDir, &last); err != nil {
			return nil, fmt.Errorf("listing sessions: %w", err)
		}
		rec.Mode = agent.Mode(mode)
		if rec.LastActive, err = parseTime(last); err != nil {
			return nil, fmt.Errorf("listing sessions: chat %s: %w", rec.ChatID, err)
		}
		out = append(out, rec)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing sessions: %w", err)
	}
	return out, nil
}
