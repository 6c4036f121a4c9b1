package sqlite

import (
	"context"
	"database/sql"
	"fmt"
)

// A migration moves the schema from version Version-1 to Version. The
// database's version is PRAGMA user_version, written in the same
// transaction as the change.
type migration struct {
	Version int
	Name    string
	Up      func(ctx context.Context, tx *sql.Tx) error
}

// execSQL is a migration step that runs SQL statements.
func execSQL(stmts ...string) func(context.Context, *sql.Tx) error {
	return func(ctx context.Context, tx *sql.Tx) error {
		for _, q := range stmts {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				return err
			}
		}
		return nil
	}
}

// migrations is the schema's history, oldest first; entry i has Version
// i+1. To change the schema, append an entry (never edit a released one)
// and a fixture for the version before it in the migration tests.
var migrations = []migration{
	{Version: 1, Name: "sessions, interactions and their events", Up: execSQL(
		`CREATE TABLE sessions (
			chat_id          TEXT PRIMARY KEY,
			agent_session_id TEXT NOT NULL DEFAULT '',
			mode             TEXT NOT NULL DEFAULT '',
			workdir          TEXT NOT NULL DEFAULT '',
			last_active      TEXT
		) STRICT`,

		// One row per interaction: the projection of its events.
		`CREATE TABLE interactions (
			seq            INTEGER PRIMARY KEY,
			id             TEXT NOT NULL UNIQUE,
			chat_id        TEXT NOT NULL,
			kind           TEXT NOT NULL,
			header         TEXT NOT NULL DEFAULT '',
			question       TEXT NOT NULL DEFAULT '',
			options        TEXT NOT NULL DEFAULT '[]',
			multi_select   INTEGER NOT NULL DEFAULT 0,
			idx            INTEGER NOT NULL DEFAULT 0,
			total          INTEGER NOT NULL DEFAULT 0,
			plan           TEXT NOT NULL DEFAULT '',
			tool_name      TEXT NOT NULL DEFAULT '',
			tool_input     TEXT,
			tool_summary   TEXT NOT NULL DEFAULT '',
			asked_at       TEXT NOT NULL,
			deadline       TEXT,
			ref            TEXT NOT NULL DEFAULT '',
			status         TEXT NOT NULL DEFAULT 'pending'
				CHECK (status IN ('pending','answered','rejected','expired','cancelled','interrupted')),
			answer         TEXT NOT NULL DEFAULT '',
			decision       TEXT NOT NULL DEFAULT '',
			text           TEXT NOT NULL DEFAULT '',
			resolved_by    TEXT NOT NULL DEFAULT '',
			resolved_at    TEXT,
			interrupted_at TEXT,
			recovered_at   TEXT
		) STRICT`,
		`CREATE INDEX interactions_asked ON interactions (asked_at)`,
		`CREATE INDEX interactions_chat ON interactions (chat_id, asked_at)`,
		`CREATE INDEX interactions_pending ON interactions (status) WHERE status = 'pending'`,

		// The history: insert-only.
		`CREATE TABLE events (
			seq            INTEGER PRIMARY KEY,
			interaction_id TEXT NOT NULL REFERENCES interactions (id),
			type           TEXT NOT NULL
				CHECK (type IN ('requested','presented','resolved','interrupted','recovered')),
			at             TEXT NOT NULL,
			data           TEXT NOT NULL DEFAULT '{}'
		) STRICT`,
		`CREATE INDEX events_interaction ON events (interaction_id, seq)`,

		`CREATE TRIGGER events_no_update BEFORE UPDATE ON events
		BEGIN SELECT RAISE(ABORT, 'the events table is append-only'); END`,
		`CREATE TRIGGER events_no_delete BEFORE DELETE ON events
		BEGIN SELECT RAISE(ABORT, 'the events table is append-only'); END`,
		`CREATE TRIGGER interactions_no_delete BEFORE DELETE ON interactions
		BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END`,
		// What was asked never changes.
		`CREATE TRIGGER interactions_question_fixed
		BEFORE UPDATE OF id, chat_id, kind, header, question, options, multi_select, idx, total,
			plan, tool_name, tool_input, tool_summary, asked_at, deadline ON interactions
		BEGIN SELECT RAISE(ABORT, 'what an interaction asked is never rewritten'); END`,
		// The outcome is set once; the one later change is the recovery of
		// an interrupted interaction.
		`CREATE TRIGGER interactions_outcome_once
		BEFORE UPDATE OF status, answer, decision, text, resolved_by, resolved_at, interrupted_at, recovered_at
		ON interactions
		WHEN NOT (OLD.status = 'pending'
			OR (OLD.status = 'interrupted' AND OLD.recovered_at IS NULL AND NEW.recovered_at IS NOT NULL
				AND NEW.status IN ('answered','rejected') AND NEW.interrupted_at IS OLD.interrupted_at))
		BEGIN SELECT RAISE(ABORT, 'a settled interaction is never rewritten'); END`,
		// The chat message reference is set once.
		`CREATE TRIGGER interactions_ref_once BEFORE UPDATE OF ref ON interactions
		WHEN OLD.ref <> '' AND NEW.ref IS NOT OLD.ref
		BEGIN SELECT RAISE(ABORT, 'an interaction''s message reference is set once'); END`,
	)},
	{Version: 2, Name: "a tool call allowed again after a restart links to the answer that allowed it", Up: execSQL(
		// The interaction whose answer, given after a restart, allowed
		// this identical call without asking ('' for all others).
		`ALTER TABLE interactions ADD COLUMN recovered_from TEXT NOT NULL DEFAULT ''`,
		`CREATE TRIGGER interactions_recovered_from_once BEFORE UPDATE OF recovered_from ON interactions
		WHEN OLD.recovered_from <> '' AND NEW.recovered_from IS NOT OLD.recovered_from
		BEGIN SELECT RAISE(ABORT, 'an interaction''s link to the answer that allowed it is set once'); END`,
	)},
	{Version: 3, Name: "multi-select selections; restored interactions may expire or be cancelled", Up: execSQL(
		// The latest selection of a multi-select question, so that a
		// restart keeps the options already ticked.
		`CREATE TABLE selections (
			interaction_id TEXT PRIMARY KEY REFERENCES interactions (id),
			labels         TEXT NOT NULL DEFAULT '[]',
			at             TEXT NOT NULL
		) STRICT`,
		// An interrupted interaction re-registered after a restart ends
		// like a live one: answered, rejected, and now also expired or
		// cancelled (/clear, /stop), recorded once.
		`DROP TRIGGER interactions_outcome_once`,
		`CREATE TRIGGER interactions_outcome_once
		BEFORE UPDATE OF status, answer, decision, text, resolved_by, resolved_at, interrupted_at, recovered_at
		ON interactions
		WHEN NOT (OLD.status = 'pending'
			OR (OLD.status = 'interrupted' AND OLD.recovered_at IS NULL AND NEW.recovered_at IS NOT NULL
				AND NEW.status IN ('answered','rejected','expired','cancelled') AND NEW.interrupted_at IS OLD.interrupted_at))
		BEGIN SELECT RAISE(ABORT, 'a settled interaction is never rewritten'); END`,
	)},
	{Version: 4, Name: "agent notices", Up: execSQL(
		// What an agent reported beside its interactions: tool calls it
		// denied without asking, writes it lost, conversations it reset.
		`CREATE TABLE notices (
			seq     INTEGER PRIMARY KEY,
			chat_id TEXT NOT NULL,
			kind    TEXT NOT NULL,
			text    TEXT NOT NULL,
			at      TEXT NOT NULL
		) STRICT`,
		`CREATE INDEX notices_chat_at ON notices (chat_id, at)`,
		`CREATE TRIGGER notices_no_update BEFORE UPDATE ON notices
		BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END`,
		`CREATE TRIGGER notices_no_delete BEFORE DELETE ON notices
		BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END`,
		// What the agent said about a tool approval (reason, MCP server,
		// Deny first, no session option, show it whole), as JSON, so a
		// request shown again after a restart looks as it did.
		`ALTER TABLE interactions ADD COLUMN approval TEXT NOT NULL DEFAULT '{}'`,
		`CREATE TRIGGER interactions_approval_fixed BEFORE UPDATE OF approval ON interactions
		BEGIN SELECT RAISE(ABORT, 'what an interaction asked is never rewritten'); END`,
	)},
	{Version: 5, Name: "approvals counted towards a quorum", Up: execSQL(
		// Every approval of an interaction that needs several approvers
		// (its quorum is in the approval column): who and when. A person
		// counts once; the log is append-only.
		`CREATE TABLE approvals (
			seq            INTEGER PRIMARY KEY,
			interaction_id TEXT NOT NULL REFERENCES interactions (id),
			approver       TEXT NOT NULL,
			decision       TEXT NOT NULL DEFAULT '',
			at             TEXT NOT NULL,
			UNIQUE (interaction_id, approver)
		) STRICT`,
		`CREATE TRIGGER approvals_no_update BEFORE UPDATE ON approvals
		BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END`,
		`CREATE TRIGGER approvals_no_delete BEFORE DELETE ON approvals
		BEGIN SELECT RAISE(ABORT, 'the audit log is append-only'); END`,
	)},
	{Version: 6, Name: "finished turns, for /sessions, /resume and /cost", Up: execSQL(
		// One row per finished turn: the agent session it ran in, its
		// prompt (the session's title when it is the first), and the
		// tokens and cost the agent reported.
		`CREATE TABLE turns (
			seq              INTEGER PRIMARY KEY,
			chat_id          TEXT NOT NULL,
			agent_session_id TEXT NOT NULL,
			at               TEXT NOT NULL,
			prompt           TEXT NOT NULL DEFAULT '',
			cost_usd         REAL NOT NULL DEFAULT 0,
			input_tokens     INTEGER NOT NULL DEFAULT 0,
			output_tokens    INTEGER NOT NULL DEFAULT 0
		) STRICT`,
		`CREATE INDEX turns_chat ON turns (chat_id, at)`,
		`CREATE INDEX turns_session ON turns (chat_id, agent_session_id, seq)`,
	)},
	{Version: 7, Name: "web push subscriptions per chat", Up: execSQL(
		// A browser's push subscription to a chat: the push service's
		// endpoint and the browser's keys. A push service that says the
		// endpoint is gone has it deleted in every chat.
		`CREATE TABLE push_subscriptions (
			chat_id    TEXT NOT NULL,
			endpoint   TEXT NOT NULL,
			p256dh     TEXT NOT NULL,
			auth       TEXT NOT NULL,
			created_at TEXT NOT NULL,
			PRIMARY KEY (chat_id, endpoint)
		) STRICT`,
		`CREATE INDEX push_subscriptions_endpoint ON push_subscriptions (endpoint)`,
	)},
	{Version: 8, Name: "whether a chat's agent was in a turn, for adopting it after a restart", Up: execSQL(
		`ALTER TABLE sessions ADD COLUMN in_turn INTEGER NOT NULL DEFAULT 0`,
	)},
	{Version: 9, Name: "whether a chat's agent was let go of at shutdown, to wait for it after a restart", Up: execSQL(
		`ALTER TABLE sessions ADD COLUMN let_go INTEGER NOT NULL DEFAULT 0`,
	)},
}

// migrate brings db to the last of steps, each step in its own IMMEDIATE
// transaction (so two processes starting at once do not both migrate). A
// database newer than steps is refused.
func migrate(ctx context.Context, db *sql.DB, steps []migration) error {
	for i, m := range steps {
		if m.Version != i+1 {
			return fmt.Errorf("migration %q has version %d, want %d", m.Name, m.Version, i+1)
		}
	}
	for {
		done, err := migrateOne(ctx, db, steps)
		if err != nil || done {
			return err
		}
	}
}

// migrateOne applies the next step, or reports done when there is none.
func migrateOne(ctx context.Context, db *sql.DB, steps []migration) (done bool, err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("starting a migration: %w", err)
	}
	defer func() {
		if err != nil || done {
			_ = tx.Rollback()
		}
	}()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return false, fmt.Errorf("reading the schema version (is it a SQLite database?): %w", err)
	}
	switch {
	case v > len(steps):
		return false, fmt.Errorf("its schema version %d is newer than this leashd knows (%d); use the leashd that wrote it", v, len(steps))
	case v == len(steps):
		return true, nil
	}
	if v == 0 {
		var n int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
			return false, fmt.Errorf("reading the schema: %w", err)
		}
		if n > 0 {
			return false, fmt.Errorf("it holds %d tables or indexes but no leashd schema version: it is not a leashd database", n)
		}
	}
	m := steps[v]
	if err := m.Up(ctx, tx); err != nil {
		return false, fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
	}
	// PRAGMA takes no bound parameters; m.Version is an int.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", m.Version)); err != nil {
		return false, fmt.Errorf("migration %d (%s): recording the version: %w", m.Version, m.Name, err)
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("migration %d (%s): %w", m.Version, m.Name, err)
	}
	return false, nil
}

// userVersion reads PRAGMA user_version.
func userVersion(ctx context.Context, db *sql.DB) (int, error) {
	var v int
	err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v)
	return v, err
}

// SchemaVersion is the schema version this leashd writes.
func SchemaVersion() int { return len(migrations) }
