package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"modernc.org/sqlite"
)

// Ops name the store's writes, as the leashd_store_errors_total metric and
// the ERROR log lines label them. OpFile is the database file itself
// (deleted or replaced while leashd runs).
const (
	OpRequested = "requested" // an interaction asked (the journal)
	OpPresented = "presented" // the chat message that shows it
	OpResolved  = "resolved"  // how it ended: the answer
	OpRecovered = "recovered" // an answer given after a restart
	OpInterrupt = "interrupt" // marking the last run's pending interactions
	OpSession   = "session"   // a chat's agent session, mode and workdir
	OpFile      = "file"      // the database file went away
	OpAgain     = "again"     // a call allowed again without asking after a restart
	OpSelected  = "selected"  // a multi-select's ticks so far
	OpApproved  = "approved"  // approvals counted towards a quorum
	OpNotice    = "notice"    // an agent's notice (auto-denial, lost writes, reset)
	OpTurn      = "turn"      // a finished turn's usage (/sessions, /cost)
	OpPush      = "push"      // a web push subscription kept or deleted
)

// Ops are every op a write error is counted under.
var Ops = []string{OpRequested, OpPresented, OpResolved, OpRecovered, OpInterrupt, OpSession, OpFile, OpAgain, OpSelected, OpNotice, OpApproved, OpTurn, OpPush}

// ErrorCounter counts failed writes by op (the metrics package implements
// it as leashd_store_errors_total).
type ErrorCounter interface {
	StoreError(op string)
}

// WithErrorCounter counts every failed write (see Ops).
func WithErrorCounter(c ErrorCounter) Option { return func(o *options) { o.errs = c } }

// health is what the store knows about its own writes: whether the last
// one failed and whether the file is still the one it opened.
type health struct {
	wmu     sync.Mutex // serialises writes and the backlog
	backlog []queued   // failed retryable writes, oldest first

	mu       sync.Mutex
	ident    os.FileInfo // the file as opened; nil when read-only
	failing  error       // the last write's error; nil once one succeeds
	failOp   string
	failAt   time.Time
	failures int   // writes failed since the last success
	gone     error // the file was deleted or replaced
}

// MaxBacklog bounds the failed writes kept in memory for a retry; past it
// the oldest is dropped (and logged as lost).
const MaxBacklog = 4096

// queued is a failed write waiting to be retried.
type queued struct {
	op   string
	key  string // a later write with the same key replaces it (sessions)
	lost []any
	f    func(tx *sql.Tx) error
}

// retryable reports whether a failed write of op is kept and retried.
// Marking the last run's interactions interrupted and recording an answer
// given after a restart are not: the engine needs their result now (and
// the person who answered is told it failed).
func retryable(op string) bool {
	switch op {
	case OpRequested, OpPresented, OpResolved, OpSession, OpSelected, OpNotice, OpApproved, OpTurn:
		return true
	}
	return false
}

// failed records a write that did not reach the disk: it is logged at
// ERROR with what it held, counted, and kept for a retry when its op is
// retryable. Called with wmu held.
func (s *Store) failed(op string, lost []any, f func(tx *sql.Tx) error, err error) {
	s.h.mu.Lock()
	first := s.h.failing == nil
	s.h.failing, s.h.failOp, s.h.failAt = err, op, s.now()
	s.h.failures++
	s.h.mu.Unlock()
	s.count(op)
	attrs := append([]any{"op", op, "db", s.path, "err", err}, lost...)
	if !retryable(op) {
		s.log.Error("database write failed; this record is lost", attrs...)
	} else {
		q := queued{op: op, lost: lost, f: f}
		if op == OpSession {
			q.key = op + "\x00" + attrString(lost, "chat")
			s.h.backlog = slices.DeleteFunc(s.h.backlog, func(o queued) bool { return o.key == q.key })
		}
		s.h.backlog = append(s.h.backlog, q)
		if len(s.h.backlog) > MaxBacklog {
			d := s.h.backlog[0]
			s.h.backlog = s.h.backlog[1:]
			s.log.Error("database write dropped from the retry queue (full); this record is lost",
				append([]any{"op", d.op, "db", s.path, "queue", MaxBacklog}, d.lost...)...)
		}
		s.log.Error("database write failed; kept in memory and retried when the database can be written (lost if leashd stops first)",
			append(attrs, "queued", len(s.h.backlog))...)
	}
	if first {
		s.log.Error("the database cannot be written: /readyz reports the store not ready until a write succeeds again",
			"db", s.path, "err", err)
	}
}

// flushLocked retries the queued writes in order until one fails, and
// returns how many are still queued and why. Called with wmu held.
func (s *Store) flushLocked() (int, error) {
	for len(s.h.backlog) > 0 {
		q := s.h.backlog[0]
		err := s.tx(context.Background(), q.f)
		var se *sqlite.Error
		switch {
		case err == nil:
			s.log.Info("database write recorded after a retry", append([]any{"op", q.op, "db", s.path}, q.lost...)...)
		case !errors.As(err, &se):
			// Not the disk (a refusal, a row that was never recorded):
			// retrying cannot help, and must not hold up the writes
			// behind it.
			s.log.Error("database write refused on retry; this record is lost",
				append([]any{"op", q.op, "db", s.path, "err", err}, q.lost...)...)
		default:
			return len(s.h.backlog), err
		}
		s.h.backlog = s.h.backlog[1:]
	}
	s.h.backlog = nil
	return 0, nil
}

// Queued is how many failed writes wait in memory for a retry.
func (s *Store) Queued() int {
	s.h.wmu.Lock()
	defer s.h.wmu.Unlock()
	return len(s.h.backlog)
}

// closeBacklog makes a last attempt at the queued writes when the store
// closes, and logs each that could not be written as lost.
func (s *Store) closeBacklog() {
	if s.w == nil {
		return
	}
	s.h.wmu.Lock()
	defer s.h.wmu.Unlock()
	_, _ = s.flushLocked()
	for _, q := range s.h.backlog {
		s.log.Error("database write still failing at shutdown; this record is lost",
			append([]any{"op", q.op, "db", s.path}, q.lost...)...)
	}
	s.h.backlog = nil
}

func attrString(kv []any, key string) string {
	for i := 0; i+1 < len(kv); i += 2 {
		if k, ok := kv[i].(string); ok && k == key {
			return fmt.Sprint(kv[i+1])
		}
	}
	return ""
}

func (s *Store) count(op string) {
	if s.errs != nil {
		s.errs.StoreError(op)
	}
}

// succeeded records a write that committed. A write into a file that was
// deleted meanwhile committed only to a file nobody can open again: that is
// a failure too. Called with wmu held.
func (s *Store) succeeded(op string, lost []any) {
	if err := s.checkFile(); err != nil {
		s.count(op)
		attrs := append([]any{"op", op, "db", s.path, "err", err}, lost...)
		s.log.Error("database write went to a deleted file; this record is lost at the next restart", attrs...)
		return
	}
	if len(s.h.backlog) > 0 {
		return // earlier writes still wait
	}
	s.h.mu.Lock()
	was, n := s.h.failing, s.h.failures
	s.h.failing, s.h.failures = nil, 0
	s.h.mu.Unlock()
	if was != nil {
		s.log.Info("database writes succeed again", "db", s.path, "failed_writes", n)
	}
}

// checkFile reports whether the database file is still the one Open
// opened. The first time it is not, that is logged at ERROR and counted.
func (s *Store) checkFile() error {
	s.h.mu.Lock()
	defer s.h.mu.Unlock()
	if s.h.gone != nil || s.h.ident == nil {
		return s.h.gone
	}
	fi, err := os.Stat(s.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		s.h.gone = fmt.Errorf("the database file %s was deleted while leashd runs: everything is now written to a deleted file that is gone at the next restart (copy it back from /proc/%d/fd before restarting, or restore a backup)", s.path, os.Getpid())
	case err != nil:
		return nil // cannot tell (e.g. a permission change): writes will say
	case !os.SameFile(fi, s.h.ident):
		s.h.gone = fmt.Errorf("the database file %s was replaced while leashd runs: leashd still writes to the file it opened, which is gone at the next restart; stop leashd and restore the file", s.path)
	default:
		return nil
	}
	s.count(OpFile)
	s.log.Error("database file lost", "db", s.path, "err", s.h.gone)
	return s.h.gone
}

// Ready reports whether the store can record what happens: nil when the
// last write succeeded and the file is the one it opened. After a failed
// write it tries a one-page write (rewriting the schema version) so that a
// disk that has room again is noticed without waiting for the next
// interaction. The error names the file and what failed; /readyz shows it.
func (s *Store) Ready() error {
	if s.w == nil {
		return ErrReadOnly
	}
	if err := s.checkFile(); err != nil {
		return err
	}
	s.h.mu.Lock()
	failing := s.h.failing
	s.h.mu.Unlock()
	if failing == nil {
		return nil
	}
	s.h.wmu.Lock()
	queued, err := s.flushLocked()
	if queued == 0 {
		err = s.probe()
	}
	if err == nil {
		s.succeeded("probe", nil)
	}
	s.h.wmu.Unlock()
	if err := s.checkFile(); err != nil {
		return err
	}
	s.h.mu.Lock()
	failing, op, at, n := s.h.failing, s.h.failOp, s.h.failAt, s.h.failures
	s.h.mu.Unlock()
	if failing == nil {
		return nil
	}
	return fmt.Errorf("the database %s cannot be written: %d write(s) failed since %s (last: %s), %d kept in memory for a retry: %w",
		s.path, n, at.UTC().Format(time.RFC3339), op, queued, failing)
}

// probe writes one page without changing anything: the schema version is
// set to what it is. It fails as a real write would on a full or read-only
// disk.
func (s *Store) probe() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	v, err := userVersion(ctx, s.w)
	if err != nil {
		return err
	}
	_, err = s.w.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v))
	return err
}

// Monitor checks every interval, until ctx is done, that the database file
// is still there, so that its deletion is logged even when nothing is
// written, and retries the writes that failed, so that they are recorded
// soon after the disk has room again.
func (s *Store) Monitor(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = s.Ready() // logs a deleted file, retries queued writes
		}
	}
}

// maxLoggedValue bounds each value a lost-write log line carries, so that
// a huge question cannot make huge log lines.
const maxLoggedValue = 4096

// lostAttrs describes what a failed write loses, for its log line: what
// (the consequence) and the record's fields as key-value pairs.
func lostAttrs(what string, kv ...any) []any {
	out := append([]any{slog.String("lost", what)}, kv...)
	for i, v := range out {
		if s, ok := v.(string); ok && i > 0 && i%2 == 0 && len(s) > maxLoggedValue { // values follow the Attr and each key
			cut := maxLoggedValue
			for cut > 0 && !utf8.RuneStart(s[cut]) {
				cut--
			}
			out[i] = s[:cut] + fmt.Sprintf("… truncated (%d bytes)", len(s)-cut)
		}
	}
	return out
}
