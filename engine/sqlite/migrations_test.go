package sqlite_test

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
)

// A fixture is data as a leashd at one schema version wrote it (raw SQL of
// that version, not today's code), and what must still be true of it after
// upgrading to the latest version.
type fixture struct {
	seed  []string
	check func(t *testing.T, s *sqlite.Store)
}

// fixtures holds one fixture per schema version, the latest included: a
// database at version v < latest is upgraded and checked, and the latest
// one is reopened and checked. Adding migration N+1 means adding
// fixtures[N+1] here (the test fails until it exists); fixtures[N] then
// checks the upgrade from N.
var fixtures = map[int]fixture{
	0: {check: func(t *testing.T, s *sqlite.Store) {
		recs, err := s.Audit(context.Background(), sqlite.AuditFilter{})
		require.NoError(t, err)
		assert.Empty(t, recs)
	}},
	1: {
		seed: []string{
			`INSERT INTO sessions (chat_id, agent_session_id, mode, workdir, last_active)
			 VALUES ('telegram:42', 'sess-v1', 'plan', '/srv/app', '2026-11-21T10:00:00.000000000Z')`,
			`INSERT INTO interactions (id, chat_id, kind, question, options, asked_at, ref, status, answer, resolved_by, resolved_at)
			 VALUES ('v1done', 'telegram:42', 'question', 'Which database?', '[{"label":"Postgres"},{"label":"SQLite"}]',
			         '2026-11-21T10:01:00.000000000Z', 'telegram:42:7', 'answered', 'SQLite', '1001', '2026-11-21T10:02:00.000000000Z')`,
			`INSERT INTO events (interaction_id, type, at, data) VALUES ('v1done', 'requested', '2026-11-21T10:01:00.000000000Z', '{}')`,
			`INSERT INTO interactions (id, chat_id, kind, options, tool_name, tool_input, tool_summary, asked_at, ref)
			 VALUES ('v1pend', 'telegram:42', 'tool_approval', '[{"label":"allow"},{"label":"allow_session"},{"label":"deny"}]',
			         'Bash', '{"command":"rm -rf build"}', 'rm -rf build', '2026-11-21T10:03:00.000000000Z', 'telegram:42:8')`,
		},
		check: func(t *testing.T, s *sqlite.Store) {
			ctx := context.Background()
			rec, found, err := s.LoadSession(ctx, "telegram:42")
			require.NoError(t, err)
			require.True(t, found)
			assert.Equal(t, "sess-v1", rec.AgentSessionID)
			assert.EqualValues(t, "plan", rec.Mode)

			done := record(t, s, "v1done")
			assert.Equal(t, "answered", done.Status())
			assert.Equal(t, "SQLite", done.Resolution.Answer)
			assert.Equal(t, "1001", done.Resolution.By)

			// A question pending when the old leashd stopped is still
			// recoverable after the upgrade.
			got, err := s.Interrupt(ctx)
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, "v1pend", got[0].Interaction.ID)
			assert.Equal(t, "telegram:42:8", got[0].Ref)
			assert.JSONEq(t, `{"command":"rm -rf build"}`, string(got[0].Interaction.ToolInput))
			first, err := s.Recovered(ctx, "v1pend", interactions.Resolution{Status: interactions.StatusAnswered, Decision: "allow", By: "1001"})
			require.NoError(t, err)
			assert.True(t, first)
			assert.Empty(t, record(t, s, "v1done").RecoveredFrom, "older records link to nothing")
		},
	},
	2: {
		seed: []string{
			`INSERT INTO interactions (id, chat_id, kind, options, tool_name, tool_input, tool_summary, asked_at, ref,
			         status, decision, resolved_by, resolved_at, interrupted_at, recovered_at)
			 VALUES ('v2orig', 'web:9', 'tool_approval', '[]', 'Bash', '{"command":"touch x"}', 'touch x',
			         '2026-11-25T10:00:00.000000000Z', 'web:9:1', 'answered', 'allow', 'ann',
			         '2026-11-25T10:05:00.000000000Z', '2026-11-25T10:01:00.000000000Z', '2026-11-25T10:05:00.000000000Z')`,
			`INSERT INTO interactions (id, chat_id, kind, options, tool_name, tool_input, tool_summary, asked_at,
			         status, decision, resolved_by, resolved_at, recovered_from)
			 VALUES ('v2orig.again', 'web:9', 'tool_approval', '[]', 'Bash', '{"command":"touch x"}', 'touch x',
			         '2026-11-25T10:05:01.000000000Z', 'answered', 'allow', 'ann', '2026-11-25T10:05:01.000000000Z', 'v2orig')`,
		},
		check: func(t *testing.T, s *sqlite.Store) {
			assert.Equal(t, "v2orig", record(t, s, "v2orig.again").RecoveredFrom)
			assert.Empty(t, record(t, s, "v2orig").RecoveredFrom)
		},
	},
	3: {
		seed: []string{
			`INSERT INTO interactions (id, chat_id, kind, question, options, multi_select, asked_at, ref, status, text, resolved_at, interrupted_at)
			 VALUES ('v2multi', 'slack:D1', 'question', 'Which checks?', '[{"label":"lint"},{"label":"test"},{"label":"vet"}]', 1,
			         '2026-11-21T10:01:00.000000000Z', 'D1:1.2', 'interrupted', 'leashd stopped', '2026-11-21T10:02:00.000000000Z', '2026-11-21T10:02:00.000000000Z')`,
			`INSERT INTO selections (interaction_id, labels, at) VALUES ('v2multi', '["lint","vet"]', '2026-11-21T10:01:30.000000000Z')`,
		},
		check: func(t *testing.T, s *sqlite.Store) {
			ctx := context.Background()
			left, err := s.Unanswered(ctx, time.Time{})
			require.NoError(t, err)
			require.Len(t, left, 1)
			assert.Equal(t, []string{"lint", "vet"}, left[0].Selected, "the selection kept")
			// Cancelled after the restart (/clear): recorded once.
			first, err := s.Recovered(ctx, "v2multi", interactions.Resolution{Status: interactions.StatusCancelled, Text: "cleared"})
			require.NoError(t, err)
			assert.True(t, first)
			assert.Equal(t, "cancelled", record(t, s, "v2multi").Status())
			left, err = s.Unanswered(ctx, time.Time{})
			require.NoError(t, err)
			assert.Empty(t, left)
		},
	},
	4: {
		seed: []string{
			`INSERT INTO notices (chat_id, kind, text, at)
			 VALUES ('telegram:42', 'permission_denied', 'Claude Code denied Bash without asking', '2026-11-25T10:00:00.000000000Z')`,
		},
		check: func(t *testing.T, s *sqlite.Store) {
			ns, err := s.Notices(context.Background(), sqlite.AuditFilter{})
			require.NoError(t, err)
			require.Len(t, ns, 1)
			assert.Equal(t, "permission_denied", ns[0].Kind)
			assert.Equal(t, "Claude Code denied Bash without asking", ns[0].Text)
		},
	},
	5: {
		seed: []string{
			`INSERT INTO interactions (id, chat_id, kind, options, plan, asked_at, ref, approval)
			 VALUES ('v5plan', 'telegram:-500', 'plan_review', '[]', '1. tests', '2026-11-25T12:00:00.000000000Z', 'telegram:-500:3', '{"quorum":2}')`,
			`INSERT INTO approvals (interaction_id, approver, decision, at)
			 VALUES ('v5plan', '11', 'edit', '2026-11-25T12:01:00.000000000Z')`,
		},
		check: func(t *testing.T, s *sqlite.Store) {
			got, err := s.Interrupt(context.Background())
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, 2, got[0].Interaction.Quorum)
			assert.Equal(t, []interactions.Approver{{By: "11", Decision: "edit", At: time.Date(2026, 11, 25, 12, 1, 0, 0, time.UTC)}}, got[0].Approvals)
			assert.Equal(t, got[0].Approvals, record(t, s, "v5plan").Approvals)
		},
	},
	6: {
		seed: []string{
			`INSERT INTO turns (chat_id, agent_session_id, at, prompt, cost_usd, input_tokens, output_tokens)
			 VALUES ('telegram:42', 'sess-v6', '2026-11-26T09:00:00.000000000Z', 'fix the login bug', 0.25, 1200, 80)`,
			`INSERT INTO turns (chat_id, agent_session_id, at, prompt, cost_usd, input_tokens, output_tokens)
			 VALUES ('telegram:42', 'sess-v6', '2026-11-26T09:05:00.000000000Z', 'and the tests', 0.5, 2000, 100)`,
		},
		check: func(t *testing.T, s *sqlite.Store) {
			ctx := context.Background()
			got, err := s.PastSessions(ctx, "telegram:42", 10)
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, "fix the login bug", got[0].Title)
			assert.Equal(t, engine.Totals{Turns: 2, CostUSD: 0.75, InputTokens: 3200, OutputTokens: 180}, got[0].Totals)
			assert.Equal(t, time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC), got[0].Started)
			tot, err := s.TotalsSince(ctx, "telegram:42", time.Date(2026, 11, 26, 9, 1, 0, 0, time.UTC))
			require.NoError(t, err)
			assert.Equal(t, engine.Totals{Turns: 1, CostUSD: 0.5, InputTokens: 2000, OutputTokens: 100}, tot)
		},
	},
	7: {
		seed: []string{
			`INSERT INTO push_subscriptions (chat_id, endpoint, p256dh, auth, created_at)
			 VALUES ('web-abc', 'https://fcm.googleapis.com/fcm/send/x', 'BPk', 'au', '2026-11-27T09:00:00.000000000Z')`,
		},
		check: func(t *testing.T, s *sqlite.Store) {
			got, err := s.PushSubscriptions(context.Background(), "web-abc")
			require.NoError(t, err)
			assert.Equal(t, []sqlite.PushSubscription{{ChatID: "web-abc", Endpoint: "https://fcm.googleapis.com/fcm/send/x", P256dh: "BPk", Auth: "au"}}, got)
		},
	},
	8: {
		seed: []string{
			`INSERT INTO sessions (chat_id, agent_session_id, mode, workdir, last_active, in_turn)
			 VALUES ('telegram:8', 'sess-v8', 'default', '/w', '2026-11-28T09:00:00.000000000Z', 1)`,
		},
		check: func(t *testing.T, s *sqlite.Store) {
			rec, found, err := s.LoadSession(context.Background(), "telegram:8")
			require.NoError(t, err)
			require.True(t, found)
			assert.True(t, rec.InTurn, "a chat saved mid-turn says so")
			assert.Equal(t, "sess-v8", rec.AgentSessionID)
		},
	},
	9: {
		seed: []string{
			`INSERT INTO sessions (chat_id, agent_session_id, mode, workdir, last_active, in_turn, let_go)
			 VALUES ('telegram:9', 'sess-v9', 'default', '/w', '2026-11-28T09:00:00.000000000Z', 0, 1)`,
		},
		check: func(t *testing.T, s *sqlite.Store) {
			rec, found, err := s.LoadSession(context.Background(), "telegram:9")
			require.NoError(t, err)
			require.True(t, found)
			assert.True(t, rec.LetGo, "a chat whose agent was let go of says so")
			assert.False(t, rec.InTurn)
		},
	},
}

func TestMigrationsAreNumberedInOrder(t *testing.T) {
	for i, m := range sqlite.Migrations() {
		assert.Equal(t, i+1, m.Version, "migration %d (%s)", i, m.Name)
		assert.NotEmpty(t, m.Name)
	}
	assert.Equal(t, len(sqlite.Migrations()), sqlite.SchemaVersion())
}

// TestMigrationsUpFromEveryVersion builds a database at every earlier
// schema version with that version's migrations and fixture data, opens it
// with today's store and checks that it is upgraded with nothing lost.
func TestMigrationsUpFromEveryVersion(t *testing.T) {
	all := sqlite.Migrations()
	latest := len(all)
	for v := 0; v <= latest; v++ {
		fx, ok := fixtures[v]
		require.True(t, ok, "no fixture for schema version %d: add one to fixtures when adding migration %d", v, v)
		t.Run("from v"+itoa(v), func(t *testing.T) {
			ctx := context.Background()
			path := dbPath(t)
			require.NoError(t, os.MkdirAll(dirOf(path), 0o700))
			db := rawDB(t, path)
			require.NoError(t, sqlite.Migrate(ctx, db, all[:v]))
			assert.Equal(t, v, version(t, db))
			for _, q := range fx.seed {
				_, err := db.Exec(q)
				require.NoError(t, err, q)
			}
			require.NoError(t, db.Close())

			s := open(t, path)
			assert.Equal(t, latest, version(t, rawDB(t, path)))
			fx.check(t, s)
		})
	}
	t.Run("from no file", func(t *testing.T) {
		path := dbPath(t)
		open(t, path)
		assert.Equal(t, latest, version(t, rawDB(t, path)))
	})
	t.Run("already latest", func(t *testing.T) {
		path := dbPath(t)
		s := open(t, path)
		require.NoError(t, s.Requested(context.Background(), question("q1", "web:1", t0)))
		require.NoError(t, s.Close())
		s = open(t, path)
		assert.Equal(t, latest, version(t, rawDB(t, path)))
		assert.Equal(t, "Which database?", record(t, s, "q1").Interaction.Question)
	})
}

func TestFailedMigrationChangesNothing(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s := open(t, path)
	require.NoError(t, s.Requested(ctx, question("q1", "web:1", t0)))
	require.NoError(t, s.Close())

	steps := append(append([]sqlite.Migration{}, sqlite.Migrations()...), sqlite.Migration{
		Version: len(sqlite.Migrations()) + 1, Name: "broken",
		Up: sqlite.ExecSQL(`CREATE TABLE half_done (x INTEGER)`, `ALTER TABLE no_such_table ADD COLUMN y TEXT`),
	})
	db := rawDB(t, path)
	err := sqlite.Migrate(ctx, db, steps)
	require.ErrorContains(t, err, "broken")
	assert.Equal(t, len(sqlite.Migrations()), version(t, db), "the version is not advanced")
	var n int
	require.NoError(t, db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'half_done'`).Scan(&n))
	assert.Zero(t, n, "the step's first statement was rolled back with it")

	misnumbered := []sqlite.Migration{{Version: 2, Name: "skips one", Up: sqlite.ExecSQL()}}
	require.ErrorContains(t, sqlite.Migrate(ctx, db, misnumbered), "want 1")
}

func version(t *testing.T, db *sql.DB) int {
	t.Helper()
	var v int
	require.NoError(t, db.QueryRow("PRAGMA user_version").Scan(&v))
	return v
}

// TestMigrationStepUpgradesKeepingData runs a later step (as a future
// migration would be) on a database with data: the step is applied once,
// the version advances, the data stays, and running again is a no-op.
func TestMigrationStepUpgradesKeepingData(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s := open(t, path)
	require.NoError(t, s.Requested(ctx, question("q1", "web:1", t0)))
	require.NoError(t, s.Close())

	steps := append(append([]sqlite.Migration{}, sqlite.Migrations()...), sqlite.Migration{
		Version: len(sqlite.Migrations()) + 1, Name: "answer language",
		Up: sqlite.ExecSQL(`ALTER TABLE interactions ADD COLUMN lang TEXT NOT NULL DEFAULT 'en'`),
	})
	db := rawDB(t, path)
	require.NoError(t, sqlite.Migrate(ctx, db, steps))
	require.NoError(t, sqlite.Migrate(ctx, db, steps), "already done: nothing to do")
	assert.Equal(t, len(steps), version(t, db))
	var q, lang string
	require.NoError(t, db.QueryRow(`SELECT question, lang FROM interactions WHERE id = 'q1'`).Scan(&q, &lang))
	assert.Equal(t, "Which database?", q)
	assert.Equal(t, "en", lang)

	// This leashd now refuses the newer database rather than guessing.
	_, err := sqlite.Open(ctx, path)
	require.ErrorContains(t, err, "is newer than this leashd knows")
	_, err = sqlite.Open(ctx, path, sqlite.ReadOnly())
	require.ErrorContains(t, err, "is newer than this leashd knows")
}

// TestConcurrentFirstOpens: two leashd processes (or leashd and a restart
// racing it) open a new file at once; the schema is created once and both
// work.
func TestConcurrentFirstOpens(t *testing.T) {
	path := dbPath(t)
	const n = 4
	stores := make([]*sqlite.Store, n)
	errs := make([]error, n)
	done := make(chan int)
	for i := range n {
		go func() {
			stores[i], errs[i] = sqlite.Open(context.Background(), path)
			done <- i
		}()
	}
	for range n {
		<-done
	}
	for i := range n {
		require.NoError(t, errs[i])
		t.Cleanup(func() { _ = stores[i].Close() })
		require.NoError(t, stores[i].Requested(context.Background(), question("q"+itoa(i), "web:1", t0)))
	}
	assert.Equal(t, sqlite.SchemaVersion(), version(t, rawDB(t, path)))
	recs, err := stores[0].Audit(context.Background(), sqlite.AuditFilter{})
	require.NoError(t, err)
	assert.Len(t, recs, n)
}
