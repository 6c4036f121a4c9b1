package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// The statements every interaction writes, prepared once on the writer
// connection when the store opens. Preparing one (parsing the SQL and
// planning it) cost more than running it: with 1,000 chats answering at
// once, about 60% of the writer's time went into preparing the same few
// statements again for every write, and the writer is the one goroutine
// every journal write of every chat waits for.
const (
	sqlInsertInteraction = `INSERT INTO interactions
		(id, chat_id, kind, header, question, options, multi_select, idx, total,
		 plan, tool_name, tool_input, tool_summary, asked_at, deadline, approval)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	sqlInsertEvent = `INSERT INTO events (interaction_id, type, at, data) VALUES (?, ?, ?, ?)`
	sqlSetRef      = `UPDATE interactions SET ref = ? WHERE id = ? AND ref = ''`
	sqlStatus      = `SELECT status FROM interactions WHERE id = ?`
	sqlResolve     = `UPDATE interactions SET status = ?, answer = ?, decision = ?, text = ?,
				resolved_by = ?, resolved_at = ?, interrupted_at = ?
			WHERE id = ? AND status = 'pending'`
	sqlInsertApproval = `INSERT INTO approvals (interaction_id, approver, decision, at) VALUES (?, ?, ?, ?)
			ON CONFLICT (interaction_id, approver) DO NOTHING`
	sqlSaveSelection = `INSERT INTO selections (interaction_id, labels, at) VALUES (?, ?, ?)
			ON CONFLICT (interaction_id) DO UPDATE SET labels = excluded.labels, at = excluded.at`
	sqlSaveSession = `INSERT INTO sessions (chat_id, agent_session_id, mode, workdir, last_active, in_turn, let_go)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (chat_id) DO UPDATE SET agent_session_id = excluded.agent_session_id,
				mode = excluded.mode, workdir = excluded.workdir, last_active = excluded.last_active,
				in_turn = excluded.in_turn, let_go = excluded.let_go`
	sqlSavepoint  = `SAVEPOINT w`
	sqlRollbackTo = `ROLLBACK TO w`
	sqlRelease    = `RELEASE w`
)

var hotStatements = []string{
	sqlInsertInteraction, sqlInsertEvent, sqlSetRef, sqlStatus, sqlResolve,
	sqlInsertApproval, sqlSaveSelection, sqlSaveSession, sqlSavepoint, sqlRollbackTo, sqlRelease,
}

// prepare prepares hotStatements on the writer (Open, after the
// migrations: the tables exist).
func (s *Store) prepare(ctx context.Context) error {
	s.prepared = make(map[string]*sql.Stmt, len(hotStatements))
	for _, q := range hotStatements {
		st, err := s.w.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("preparing %q: %w", q, err)
		}
		s.prepared[q] = st
	}
	return nil
}

// exec runs query in tx, as the statement prepared at Open when it is one
// of hotStatements (database/sql reuses it on the writer connection and
// prepares it again by itself should that connection be replaced).
func (s *Store) exec(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	if st := s.prepared[query]; st != nil {
		return tx.StmtContext(ctx, st).ExecContext(ctx, args...)
	}
	return tx.ExecContext(ctx, query, args...)
}

// queryRow is exec for a query returning one row.
func (s *Store) queryRow(ctx context.Context, tx *sql.Tx, query string, args ...any) *sql.Row {
	if st := s.prepared[query]; st != nil {
		return tx.StmtContext(ctx, st).QueryRowContext(ctx, args...)
	}
	return tx.QueryRowContext(ctx, query, args...)
}

// closePrepared closes the statements prepared at Open.
func (s *Store) closePrepared() {
	for _, st := range s.prepared {
		_ = st.Close()
	}
}
