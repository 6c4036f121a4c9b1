package sqlite_test

import (
	"context"
	"database/sql"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
)

// wait bounds every blocking step; it only turns a hang into a failure.
const wait = 10 * time.Second

func dbPath(t testing.TB) string { return filepath.Join(t.TempDir(), "state", "leashd.db") }

// open opens a store at path and closes it at the end of the test.
func open(t testing.TB, path string, opts ...sqlite.Option) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// rawDB opens the file with the driver directly, as a person with the
// sqlite3 shell would (or an older leashd).
func rawDB(t testing.TB, path string) *sql.DB {
	t.Helper()
	u := url.URL{Scheme: "file", Path: path, RawQuery: "_pragma=busy_timeout(5000)&_pragma=foreign_keys(1)"}
	db, err := sql.Open("sqlite", u.String())
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	return db
}

var t0 = time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)

func question(id, chat string, asked time.Time) interactions.Interaction {
	return interactions.Interaction{
		ID: id, ChatID: chat, Kind: interactions.KindQuestion, Header: "DB",
		Question: "Which database?",
		Options:  []interactions.Choice{{Label: "Postgres", Description: "big"}, {Label: "SQLite", Description: "small"}},
		Index:    1, Total: 2, AskedAt: asked, Deadline: asked.Add(5 * time.Minute),
	}
}

func toolApproval(id, chat string, asked time.Time) interactions.Interaction {
	return interactions.Interaction{
		ID: id, ChatID: chat, Kind: interactions.KindToolApproval,
		Options:     interactions.ToolOptions,
		ToolName:    "Bash",
		ToolInput:   []byte(`{"command":"npm test | tee out.txt"}`),
		ToolSummary: "npm test | tee out.txt",
		AskedAt:     asked,
	}
}

// record returns the audit record of id.
func record(t testing.TB, s *sqlite.Store, id string) sqlite.AuditRecord {
	t.Helper()
	recs, err := s.Audit(context.Background(), sqlite.AuditFilter{})
	require.NoError(t, err)
	for _, r := range recs {
		if r.Interaction.ID == id {
			return r
		}
	}
	t.Fatalf("interaction %s is not in the audit log", id)
	return sqlite.AuditRecord{}
}

// events returns the event types recorded for id, in order.
func events(t testing.TB, path, id string) []string {
	t.Helper()
	db := rawDB(t, path)
	rows, err := db.Query(`SELECT type FROM events WHERE interaction_id = ? ORDER BY seq`, id)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }

func dirOf(p string) string { return filepath.Dir(p) }
