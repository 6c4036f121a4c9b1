package sqlite_test

import (
	"context"
	"github.com/leashd/leashd/engine/agent"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/sqlite"
)

func TestOpenCreatesPrivateDirectoryAndFile(t *testing.T) {
	base := t.TempDir()
	path := filepath.Join(base, "state", "leashd", "leashd.db")
	s := open(t, path)
	assert.Equal(t, path, s.Path())

	fi, err := os.Stat(filepath.Dir(path))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "the new directory")
	fi, err = os.Stat(filepath.Join(base, "state"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), fi.Mode().Perm(), "every created parent")

	// A write makes SQLite create the -wal and -shm files.
	require.NoError(t, s.SaveSession(context.Background(), engine.SessionRecord{ChatID: "web:1", AgentSessionID: "s1"}))
	for _, name := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(name)
		require.NoError(t, err, name)
		assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), name)
	}

	var mode string
	require.NoError(t, rawDB(t, path).QueryRow("PRAGMA journal_mode").Scan(&mode))
	assert.Equal(t, "wal", mode)
}

func TestOpenTightensAReadableFileAndKeepsAnExistingDirectory(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o755))
	path := filepath.Join(dir, "leashd.db")
	require.NoError(t, os.WriteFile(path, nil, 0o644))
	require.NoError(t, os.Chmod(path, 0o644))
	open(t, path)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	fi, err = os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), fi.Mode().Perm(), "a directory that existed is not changed")
}

func TestOpenRefusesWhatIsNotALeashdDatabase(t *testing.T) {
	ctx := context.Background()
	t.Run("not SQLite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "notes.txt")
		require.NoError(t, os.WriteFile(path, []byte("these are my notes, not a database, and they are long enough to look like a header"), 0o600))
		_, err := sqlite.Open(ctx, path)
		require.Error(t, err)
		assert.Contains(t, err.Error(), path)
		b, _ := os.ReadFile(path)
		assert.Contains(t, string(b), "these are my notes", "the file is left alone")
	})
	t.Run("another application's database", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "other.db")
		_, err := rawDB(t, path).Exec(`CREATE TABLE photos (id INTEGER)`)
		require.NoError(t, err)
		_, err = sqlite.Open(ctx, path)
		require.ErrorContains(t, err, "not a leashd database")
	})
	t.Run("a newer leashd's database", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "new.db")
		_, err := rawDB(t, path).Exec(`PRAGMA user_version = 99`)
		require.NoError(t, err)
		_, err = sqlite.Open(ctx, path)
		require.ErrorContains(t, err, "schema version 99 is newer than this leashd knows")
	})
	t.Run("a directory", func(t *testing.T) {
		dir := t.TempDir()
		_, err := sqlite.Open(ctx, dir)
		require.ErrorContains(t, err, dir)
	})
	t.Run("a directory that cannot be created", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "file")
		require.NoError(t, os.WriteFile(file, []byte("x"), 0o600))
		path := filepath.Join(file, "leashd.db")
		_, err := sqlite.Open(ctx, path)
		require.ErrorContains(t, err, "database "+path)
		assert.ErrorContains(t, err, "not a directory")
	})
	t.Run("a damaged database", func(t *testing.T) {
		path := damaged(t)
		_, err := sqlite.Open(ctx, path)
		require.ErrorContains(t, err, path)
		assert.ErrorContains(t, err, "malformed")
		assert.ErrorContains(t, err, "move it aside")
		_, err = sqlite.Open(ctx, path, sqlite.ReadOnly())
		require.ErrorContains(t, err, path, "read-only (leashd audit) says so too")
		assert.ErrorContains(t, err, "malformed")
	})
	t.Run("no path", func(t *testing.T) {
		_, err := sqlite.Open(ctx, "")
		require.ErrorContains(t, err, "LEASHD_DB_PATH")
	})
}

// damaged writes a leashd database and overwrites everything after its
// 100-byte header with garbage.
func damaged(t *testing.T) string {
	t.Helper()
	path := dbPath(t)
	s := open(t, path)
	for i := range 50 {
		require.NoError(t, s.SaveSession(context.Background(), engine.SessionRecord{ChatID: "web:" + itoa(i), AgentSessionID: "s"}))
	}
	require.NoError(t, s.Close())
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Greater(t, len(b), 4096)
	for i := 100; i < len(b); i++ {
		b[i] = 0xAB
	}
	require.NoError(t, os.WriteFile(path, b, 0o600))
	for _, suffix := range []string{"-wal", "-shm"} {
		_ = os.Remove(path + suffix)
	}
	return path
}

func TestReadOnlyOpenCreatesNothing(t *testing.T) {
	path := dbPath(t)
	_, err := sqlite.Open(context.Background(), path, sqlite.ReadOnly())
	require.Error(t, err)
	assert.True(t, sqlite.IsNotExist(err), "a missing database is reported as such: %v", err)
	_, statErr := os.Stat(filepath.Dir(path))
	assert.True(t, os.IsNotExist(statErr), "not even the directory was created")
}

func TestReadOnlyStoreRefusesWrites(t *testing.T) {
	path := dbPath(t)
	require.NoError(t, open(t, path).Close())
	ro := open(t, path, sqlite.ReadOnly())
	err := ro.SaveSession(context.Background(), engine.SessionRecord{ChatID: "web:1"})
	require.ErrorIs(t, err, sqlite.ErrReadOnly)
	err = ro.Requested(context.Background(), question("q1", "web:1", t0))
	require.ErrorIs(t, err, sqlite.ErrReadOnly)
	_, err = ro.Interrupt(context.Background())
	require.ErrorIs(t, err, sqlite.ErrReadOnly)
}

func TestSessions(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s := open(t, path)

	_, found, err := s.LoadSession(ctx, "telegram:42")
	require.NoError(t, err)
	assert.False(t, found)

	rec := engine.SessionRecord{ChatID: "telegram:42", AgentSessionID: "sess-1", Mode: agent.ModePlan, WorkDir: "/srv/app", LastActive: t0}
	require.NoError(t, s.SaveSession(ctx, rec))
	rec.AgentSessionID, rec.Mode, rec.LastActive = "sess-2", agent.ModeAcceptEdits, t0.Add(time.Minute)
	require.NoError(t, s.SaveSession(ctx, rec))
	require.NoError(t, s.SaveSession(ctx, engine.SessionRecord{ChatID: "web:other", AgentSessionID: "x"}))
	require.NoError(t, s.Close())

	s2 := open(t, path) // after a restart
	got, found, err := s2.LoadSession(ctx, "telegram:42")
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, "sess-2", got.AgentSessionID)
	assert.Equal(t, agent.ModeAcceptEdits, got.Mode)
	assert.Equal(t, "/srv/app", got.WorkDir)
	assert.True(t, t0.Add(time.Minute).Equal(got.LastActive), "last active %v", got.LastActive)

	// /clear: the session ID is dropped, the rest kept.
	got.AgentSessionID = ""
	require.NoError(t, s2.SaveSession(ctx, got))
	got2, _, err := s2.LoadSession(ctx, "telegram:42")
	require.NoError(t, err)
	assert.Empty(t, got2.AgentSessionID)
	assert.Equal(t, agent.ModeAcceptEdits, got2.Mode)

	require.Error(t, s2.SaveSession(ctx, engine.SessionRecord{}), "a session needs a chat")
}

// TestAnotherProcessHoldingTheWriteLock: a write waits for another
// process's write lock up to the busy timeout, then fails with an error,
// and succeeds once the lock is released.
func TestAnotherProcessHoldingTheWriteLock(t *testing.T) {
	ctx := context.Background()
	path := dbPath(t)
	s := open(t, path, sqlite.WithBusyTimeout(50*time.Millisecond))
	holder := rawDB(t, path)
	conn, err := holder.Conn(ctx)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.ExecContext(ctx, `BEGIN IMMEDIATE`)
	require.NoError(t, err)

	err = s.SaveSession(ctx, engine.SessionRecord{ChatID: "web:1", AgentSessionID: "s1"})
	require.ErrorContains(t, err, "saving the session of chat web:1")
	assert.ErrorContains(t, err, "locked")
	// Reads go on meanwhile (WAL).
	_, found, err := s.LoadSession(ctx, "web:1")
	require.NoError(t, err)
	assert.False(t, found)

	_, err = conn.ExecContext(ctx, `COMMIT`)
	require.NoError(t, err)
	require.NoError(t, s.SaveSession(ctx, engine.SessionRecord{ChatID: "web:1", AgentSessionID: "s1"}))
}

func TestOpenExpandsHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	s := open(t, "~/state/leashd.db")
	assert.Equal(t, filepath.Join(home, "state", "leashd.db"), s.Path())
	_, err := os.Stat(filepath.Join(home, "state", "leashd.db"))
	require.NoError(t, err)
	ro := open(t, "~/state/leashd.db", sqlite.ReadOnly())
	assert.Equal(t, s.Path(), ro.Path())
}
