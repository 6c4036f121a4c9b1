// Package sqlite keeps leashd's state in a SQLite file (modernc.org/sqlite,
// pure Go, no cgo): chats' agent sessions, an append-only audit log of every
// interaction, and what restart recovery needs.
//
// It implements interactions.Journal and engine.Store, and offers Audit for
// reading the log, also from another process while leashd runs.
//
// # Writes
//
// All writes go through one *sql.DB limited to a single connection. SQLite
// allows one writer at a time anyway; serialising writers in Go rather than
// letting several connections race for the file lock means no in-process
// write ever waits in busy_timeout or fails with SQLITE_BUSY, and every
// multi-statement change (a projection row and its event) is one
// transaction on that connection. Transactions begin IMMEDIATE, so a write
// never has to upgrade a read lock another process holds. Reads use a
// separate pool of read-only connections, which WAL mode lets run
// concurrently with the writer.
//
// # The audit log
//
// Every change to an interaction is an insert into the events table
// (requested, presented, resolved, interrupted, recovered), never updated
// or deleted — triggers refuse it. The interactions table is a projection of
// those events, one row per interaction, written in the same transaction,
// because that is what the audit command and recovery read. A row's question
// never changes, its outcome is set once (pending → settled), and the only
// later change is the recovery of an interrupted row, which the events record
// too; triggers enforce all of this, so nothing is rewritten silently.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite" // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"
)

// ErrReadOnly is returned by writes to a Store opened with ReadOnly.
var ErrReadOnly = errors.New("the store is open read-only")

// Store is leashd's SQLite database. It is safe for concurrent use. Create
// it with Open and Close it when done.
type Store struct {
	path string
	w    *sql.DB // nil when read-only; one connection: the only writer
	r    *sql.DB // read-only connections
	now  func() time.Time
	log  *slog.Logger
	errs ErrorCounter // nil: not counted
	h    health
	gc   groupCommit // writes waiting for the writer (write)
	// prepared holds hotStatements prepared on the writer (stmts.go);
	// set by Open, read-only after.
	prepared map[string]*sql.Stmt
	// orphanSeq is the last interaction row that existed when the store
	// was opened: pending rows up to it were left by an earlier run.
	orphanSeq int64
}

type options struct {
	busyTimeout time.Duration
	readOnly    bool
	now         func() time.Time
	log         *slog.Logger
	errs        ErrorCounter
}

// An Option configures Open.
type Option func(*options)

// WithBusyTimeout sets how long a statement waits for another process's
// lock on the file before failing (default 5s).
func WithBusyTimeout(d time.Duration) Option { return func(o *options) { o.busyTimeout = d } }

// ReadOnly opens an existing database for reading only: nothing is created
// (a missing file is an error wrapping fs.ErrNotExist), no migration runs,
// and writes return ErrReadOnly. `leashd audit` uses it.
func ReadOnly() Option { return func(o *options) { o.readOnly = true } }

// WithClock replaces time.Now for the times the store itself records (when
// an event was written, when pending interactions were interrupted).
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithLogger sets the logger; by default nothing is logged.
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// Open opens the database at path ("~/" meaning the home directory),
// creating its directory (mode 0700) and the file (mode 0600) when missing,
// switches it to WAL mode and applies the schema migrations this version of
// leashd knows. Every error names the file.
func Open(ctx context.Context, path string, opts ...Option) (*Store, error) {
	o := options{busyTimeout: 5 * time.Second, now: time.Now}
	for _, f := range opts {
		f(&o)
	}
	if o.log == nil {
		o.log = slog.New(slog.DiscardHandler)
	}
	if path == "" {
		return nil, errors.New("no database path given (set LEASHD_DB_PATH)")
	}
	abs, err := absPath(path)
	if err != nil {
		return nil, err
	}
	s := &Store{path: abs, now: o.now, log: o.log, errs: o.errs}
	if o.readOnly {
		if err := s.openReadOnly(ctx, o); err != nil {
			return nil, err
		}
		return s, nil
	}
	if err := prepareFile(abs); err != nil {
		return nil, fmt.Errorf("database %s: %w", abs, err)
	}
	if err := s.openWriter(ctx, o); err != nil {
		return nil, err
	}
	s.r, err = sql.Open("sqlite", dsn(abs, o.busyTimeout, true))
	if err != nil {
		s.closePrepared()
		s.w.Close()
		return nil, fmt.Errorf("opening database %s for reading: %w", abs, err)
	}
	s.r.SetMaxOpenConns(4)
	if s.h.ident, err = os.Stat(abs); err != nil {
		s.Close()
		return nil, fmt.Errorf("database %s: %w", abs, err)
	}
	return s, nil
}

// absPath makes path absolute, "~/" meaning the home directory.
func absPath(path string) (string, error) {
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		// Not expanded by systemd's Environment= or a .env file.
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("database path %q: %w", path, err)
		}
		path = filepath.Join(home, rest)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("database path %q: %w", path, err)
	}
	return abs, nil
}

// openWriter opens the one writing connection, switches the file to WAL,
// migrates the schema and prepares the statements; on failure nothing is
// left open.
func (s *Store) openWriter(ctx context.Context, o options) error {
	var err error
	s.w, err = sql.Open("sqlite", dsn(s.path, o.busyTimeout, false))
	if err != nil {
		return fmt.Errorf("opening database %s: %w", s.path, err)
	}
	s.w.SetMaxOpenConns(1)
	s.w.SetMaxIdleConns(1)
	s.w.SetConnMaxLifetime(0)
	s.w.SetConnMaxIdleTime(0)
	var mode string
	// Switching a new file to WAL takes an exclusive lock that SQLite does
	// not always wait for with busy_timeout (two processes opening a fresh
	// database at once: one gets SQLITE_BUSY at once). Retry it within the
	// same timeout.
	if err := retryBusy(ctx, o.busyTimeout, func() error {
		return s.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode)
	}); err != nil {
		s.w.Close()
		return fmt.Errorf("opening database %s: %w%s", s.path, err, damagedHint(err))
	}
	if mode != "wal" {
		s.w.Close()
		return fmt.Errorf("opening database %s: journal mode is %q, WAL could not be enabled", s.path, mode)
	}
	if err := migrate(ctx, s.w, migrations); err != nil {
		s.w.Close()
		return fmt.Errorf("database %s: %w%s", s.path, err, damagedHint(err))
	}
	if err := s.w.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM interactions`).Scan(&s.orphanSeq); err != nil {
		s.w.Close()
		return fmt.Errorf("reading database %s: %w", s.path, err)
	}
	if err := s.prepare(ctx); err != nil {
		s.closePrepared()
		s.w.Close()
		return fmt.Errorf("database %s: %w", s.path, err)
	}
	return nil
}

func (s *Store) openReadOnly(ctx context.Context, o options) error {
	fi, err := os.Stat(s.path)
	if err != nil {
		return fmt.Errorf("database %s: %w", s.path, err)
	}
	if fi.IsDir() {
		return fmt.Errorf("database %s is a directory, not a file", s.path)
	}
	s.r, err = sql.Open("sqlite", dsn(s.path, o.busyTimeout, true))
	if err != nil {
		return fmt.Errorf("opening database %s: %w", s.path, err)
	}
	s.r.SetMaxOpenConns(4)
	v, err := userVersion(ctx, s.r)
	if err == nil {
		// The header alone can look fine; reading the schema finds damage
		// before the first query does.
		var n int
		err = s.r.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n)
	}
	if err != nil {
		s.r.Close()
		return fmt.Errorf("reading database %s: %w%s", s.path, err, damagedHint(err))
	}
	if err := checkReadable(v, len(migrations)); err != nil {
		s.r.Close()
		return fmt.Errorf("database %s: %w", s.path, err)
	}
	return nil
}

// checkReadable says whether a reader that knows schema version latest can
// read a database at version v without migrating it.
func checkReadable(v, latest int) error {
	switch {
	case v == 0:
		return errors.New("it is not a leashd database (no schema version)")
	case v > latest:
		return fmt.Errorf("its schema version %d is newer than this leashd knows (%d); use the leashd that wrote it", v, latest)
	case v < latest:
		return fmt.Errorf("its schema version %d is older than this leashd's (%d); start leashd once to upgrade it", v, latest)
	}
	return nil
}

// retryBusy runs f until it does not fail with SQLITE_BUSY, for at most d.
func retryBusy(ctx context.Context, d time.Duration, f func() error) error {
	deadline := time.Now().Add(d)
	wait := 5 * time.Millisecond
	for {
		err := f()
		var se *sqlite.Error
		if err == nil || !errors.As(err, &se) || se.Code()&0xff != sqlite3.SQLITE_BUSY || time.Now().Add(wait).After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// damagedHint says what to do about a file SQLite cannot read.
func damagedHint(err error) string {
	msg := err.Error()
	if strings.Contains(msg, "malformed") || strings.Contains(msg, "not a database") {
		return " (the file is damaged or not a SQLite database: restore it from a backup, or move it aside and leashd starts a new one)"
	}
	return ""
}

// prepareFile creates the database's directory (0700) and the file (0600)
// before SQLite opens it, so that SQLite (which gives its -wal and -shm
// files the database file's mode) never creates anything readable by
// others. An existing file readable by others is tightened to 0600.
func prepareFile(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating the database directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("creating the database file: %w", err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("database file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("database path %s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			return fmt.Errorf("restricting database file %s to mode 0600: %w", path, err)
		}
	}
	return nil
}

// dsn builds a file: URI for the driver. Readers are query_only; the
// writer enables WAL, foreign keys and IMMEDIATE transactions. SQLite URI
// mode=rw never creates the file: Open created it, and a reader must not.
func dsn(path string, busy time.Duration, reader bool) string {
	q := url.Values{}
	q.Set("mode", "rw")
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
	q.Add("_pragma", "foreign_keys(1)")
	if reader {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Add("_pragma", "journal_mode(WAL)")
		// FULL: every commit is synced. Interactions are written at the
		// pace people answer, and "written before it is shown" should
		// survive a power cut too, not only a crash.
		q.Add("_pragma", "synchronous(FULL)")
		q.Set("_txlock", "immediate")
	}
	u := url.URL{Scheme: "file", Path: path, RawQuery: q.Encode()}
	// url.URL writes "file:///abs/path?…", which SQLite accepts.
	return u.String()
}

// Path is the database file's absolute path.
func (s *Store) Path() string { return s.path }

// Close closes the database.
func (s *Store) Close() error {
	s.closeBacklog()
	var errs []error
	if s.r != nil {
		errs = append(errs, s.r.Close())
	}
	if s.w != nil {
		s.closePrepared()
		errs = append(errs, s.w.Close())
	}
	return errors.Join(errs...)
}

// IsNotExist reports whether err means the database file does not exist
// (only Open with ReadOnly reports that).
func IsNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// write runs f in a write transaction and commits it. A failure is logged
// at ERROR with lost (what the record held, as slog key-value pairs),
// counted under op, and makes Ready fail until a write succeeds again. A
// failed write of a retryable op (see retryable) is kept in memory and
// written, in order, once the database can be written again; while earlier
// writes wait, later ones of those ops queue behind them. f must not use a
// context that ends: a retry runs it later.
//
// Writes that arrive while another is being committed are committed
// together, each in a savepoint of one transaction: one sync for all of
// them (group commit). Without it every write waited for the syncs of all
// the writes queued before it: with 1,000 chats answering at once, an
// answer reached its agent after about a second of other chats' syncs.
//
// One writer at a time leads: it takes the writer (wmu), commits every
// write queued so far, and hands the lead to the oldest write queued
// meanwhile. The others wait for their own write's result only: a write
// committed in another's batch returns as soon as that commit is done.
// (Before, every writer took wmu in turn even when its write had been
// committed long ago, so a durable answer still waited behind the next
// commits of other chats, and writes arriving meanwhile were committed
// one by one, a sync each, by whichever writer got wmu next.)
func (s *Store) write(ctx context.Context, op string, lost []any, f func(tx *sql.Tx) error) error {
	if s.w == nil {
		return ErrReadOnly
	}
	w := &pendingWrite{ctx: ctx, op: op, lost: lost, f: f, done: make(chan error, 1), lead: make(chan struct{}, 1)}
	s.gc.Lock()
	s.gc.queue = append(s.gc.queue, w)
	leads := !s.gc.leading
	s.gc.leading = true
	s.gc.Unlock()
	if !leads {
		select {
		case err := <-w.done: // committed by a leader
			return err
		case <-w.lead: // still queued: commit it (and what queued with it)
		}
	}
	s.h.wmu.Lock()
	s.gc.Lock()
	batch := s.gc.queue // w is among them
	s.gc.queue = nil
	s.gc.Unlock()
	s.commitLocked(batch)
	s.h.wmu.Unlock()
	s.gc.Lock()
	if len(s.gc.queue) > 0 {
		s.gc.queue[0].lead <- struct{}{}
	} else {
		s.gc.leading = false
	}
	s.gc.Unlock()
	return <-w.done
}

// pendingWrite is a write waiting for its commit.
type pendingWrite struct {
	ctx  context.Context
	op   string
	lost []any
	f    func(tx *sql.Tx) error
	done chan error    // buffered; receives the write's result once
	lead chan struct{} // buffered; told to lead the next commit
}

// groupCommit queues the writes waiting for the writer.
type groupCommit struct {
	sync.Mutex
	queue   []*pendingWrite
	leading bool // a writer is committing, or told to: the queue is its to take
}

// commitLocked commits a batch of writes, in order, in one transaction.
// Each write's f runs once; a write that fails is handled, counted and
// queued for a retry exactly as a single write that failed. Called with
// wmu held.
func (s *Store) commitLocked(batch []*pendingWrite) {
	if len(batch) == 1 {
		batch[0].done <- s.writeOneLocked(batch[0])
		return
	}
	if n, _ := s.flushLocked(); n > 0 {
		for _, w := range batch { // behind the backlog, one by one
			w.done <- s.writeOneLocked(w)
		}
		return
	}
	results, txErr := s.batchTx(batch)
	for i, w := range batch {
		err := results[i]
		var r *refusal
		switch {
		case errors.As(err, &r):
			// Refused: rolled back alone, nothing wrong with the disk.
		case err == nil && txErr != nil:
			err = txErr // the commit failed: this write did not reach the disk
			s.failed(w.op, w.lost, w.f, err)
		case err != nil:
			s.failed(w.op, w.lost, w.f, err)
		default:
			s.succeeded(w.op, w.lost)
		}
		w.done <- err
	}
}

// batchTx runs each write of batch in its own savepoint of one
// transaction: a write that fails is rolled back alone (results holds its
// error). txErr is non-nil when the transaction itself failed: nothing was
// committed.
func (s *Store) batchTx(batch []*pendingWrite) (results []error, txErr error) {
	results = make([]error, len(batch))
	tx, err := s.w.BeginTx(context.Background(), nil)
	if err != nil {
		return results, err
	}
	for i, w := range batch {
		if _, err := s.exec(context.Background(), tx, sqlSavepoint); err != nil {
			_ = tx.Rollback()
			return results, err
		}
		if ferr := w.f(tx); ferr != nil {
			results[i] = ferr
			if _, err := s.exec(context.Background(), tx, sqlRollbackTo); err != nil {
				_ = tx.Rollback()
				return results, err
			}
		}
		if _, err := s.exec(context.Background(), tx, sqlRelease); err != nil {
			_ = tx.Rollback()
			return results, err
		}
	}
	return results, tx.Commit()
}

// writeOneLocked is one write in its own transaction, after the backlog.
// Called with wmu held.
func (s *Store) writeOneLocked(w *pendingWrite) error {
	var err error
	if n, ferr := s.flushLocked(); n > 0 && retryable(w.op) {
		err = fmt.Errorf("queued behind %d earlier write(s) the database did not take: %w", n, ferr)
	} else {
		err = s.tx(w.ctx, w.f)
	}
	var r *refusal
	switch {
	case errors.As(err, &r):
		return err // nothing wrong with the disk: the record was refused
	case err != nil:
		s.failed(w.op, w.lost, w.f, err)
		return err
	}
	s.succeeded(w.op, w.lost)
	return nil
}

// refusal is an error of a write the store refuses (bad or duplicate
// input), as opposed to one the disk failed.
type refusal struct{ msg string }

func (r *refusal) Error() string { return r.msg }

func refused(msg string) error { return &refusal{msg} }

func (s *Store) tx(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	return tx.Commit()
}

// timeLayout is fixed-width UTC, so text order is time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z"

// fmtTime formats t for a column; the zero time is NULL.
func fmtTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return clampYear(t).UTC().Format(timeLayout)
}

// clampYear keeps t within the years the fixed-width layout can order.
func clampYear(t time.Time) time.Time {
	switch {
	case t.UTC().Year() < 1:
		return time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)
	case t.UTC().Year() > 9999:
		return time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)
	}
	return t
}

// parseTime reads a column written by fmtTime; NULL is the zero time.
func parseTime(ns sql.NullString) (time.Time, error) {
	if !ns.Valid || ns.String == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, ns.String)
	if err != nil {
		return time.Time{}, fmt.Errorf("bad time %q in the database: %w", ns.String, err)
	}
	return t, nil
}
