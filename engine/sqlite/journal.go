package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/leashd/leashd/interactions"
)

// statusPending is the status of an interaction nobody has answered yet.
const statusPending = "pending"

// Event types of the events table.
const (
	evRequested   = "requested"
	evPresented   = "presented"
	evResolved    = "resolved"
	evInterrupted = "interrupted"
	evRecovered   = "recovered"
)

var _ interactions.Journal = (*Store)(nil)

// Requested implements interactions.Journal: it records it as pending,
// before it is shown, so a crash right after loses nothing.
func (s *Store) Requested(ctx context.Context, it interactions.Interaction) error {
	ctx = context.WithoutCancel(ctx) // a failed write is retried later
	lost := lostAttrs("the interaction is not in the audit log and cannot be recovered after a restart",
		"id", it.ID, "chat", it.ChatID, "kind", string(it.Kind), "question", it.Question, "tool", it.ToolName, "tool_summary", it.ToolSummary)
	err := s.write(ctx, OpRequested, lost, func(tx *sql.Tx) error { return s.insertRequested(ctx, tx, it) })
	if err != nil {
		return fmt.Errorf("recording interaction %s: %w", it.ID, err)
	}
	return nil
}

// MaxToolInput bounds the tool input kept in the audit log: a larger one
// (a Write of a big file, say) is replaced by a note of its size, so that
// the append-only log does not grow by megabytes per approval. The tool
// summary is always kept.
const MaxToolInput = 64 << 10

func (s *Store) insertRequested(ctx context.Context, tx *sql.Tx, it interactions.Interaction) error {
	if it.ID == "" {
		return refused("the interaction has no ID")
	}
	if it.AskedAt.IsZero() {
		it.AskedAt = s.now()
	}
	if n := len(it.ToolInput); n > MaxToolInput {
		it.ToolInput = json.RawMessage(fmt.Sprintf(`{"leashd_omitted":"tool input too large to keep","bytes":%d}`, n))
	}
	opts := it.Options
	if opts == nil {
		opts = []interactions.Choice{}
	}
	optJSON, err := json.Marshal(opts)
	if err != nil {
		return fmt.Errorf("options: %w", err)
	}
	var toolInput any
	if len(it.ToolInput) > 0 {
		if !json.Valid(it.ToolInput) {
			return refused("the tool input is not valid JSON")
		}
		toolInput = string(it.ToolInput)
	}
	data, err := json.Marshal(it)
	if err != nil {
		return err
	}
	approval, err := json.Marshal(approvalOf(it))
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, tx, sqlInsertInteraction,
		it.ID, it.ChatID, string(it.Kind), it.Header, it.Question, string(optJSON), it.MultiSelect,
		it.Index, it.Total, it.Plan, it.ToolName, toolInput, it.ToolSummary,
		fmtTime(it.AskedAt), fmtTime(it.Deadline), string(approval))
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE constraint failed") {
			return refused("an interaction with this ID is already recorded")
		}
		return err
	}
	return s.event(ctx, tx, it.ID, evRequested, data)
}

// Presented implements interactions.Journal: it records the chat message
// that shows the interaction, so it can be edited after a restart. It is
// recorded even when ctx is already done (a shutdown cancelled the turn
// just after the message was sent): the message exists either way, and
// without its reference it could not be edited after the restart.
func (s *Store) Presented(ctx context.Context, id, ref string) error {
	ctx = context.WithoutCancel(ctx)
	data, _ := json.Marshal(map[string]string{"ref": ref}) // cannot fail
	lost := lostAttrs("the reference of the chat message showing the interaction: after a restart that message cannot be edited",
		"id", id, "ref", ref)
	err := s.write(ctx, OpPresented, lost, func(tx *sql.Tx) error {
		res, err := s.exec(ctx, tx, sqlSetRef, ref, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			var old string
			switch err := tx.QueryRowContext(ctx, `SELECT ref FROM interactions WHERE id = ?`, id).Scan(&old); {
			case errors.Is(err, sql.ErrNoRows):
				return errors.New("it was never recorded as requested")
			case err != nil:
				return err
			case old != ref:
				return refused(fmt.Sprintf("it is already shown as %q", old))
			}
			return nil // the same reference again
		}
		return s.event(ctx, tx, id, evPresented, data)
	})
	if err != nil {
		return fmt.Errorf("recording the message of interaction %s: %w", id, err)
	}
	return nil
}

// Resolved implements interactions.Journal: it records how it ended. An
// interaction the store never saw requested (its Requested failed) is
// recorded whole. When the row is no longer pending (Interrupt got there
// first) the event is still recorded but the row keeps its outcome, and a
// warning is logged. An interruption (leashd shutting down) makes the
// interaction recoverable like one Interrupt found.
func (s *Store) Resolved(ctx context.Context, it interactions.Interaction, res interactions.Resolution) error {
	ctx = context.WithoutCancel(ctx) // the record is written even when the caller gave up; a failed write is retried later
	if !validOutcome(res.Status) {
		return fmt.Errorf("recording the outcome of interaction %s: unknown status %q", it.ID, res.Status)
	}
	if res.At.IsZero() {
		res.At = s.now()
	}
	data, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("recording the outcome of interaction %s: %w", it.ID, err)
	}
	lost := lostAttrs("the outcome is not in the audit log (the agent got it); after a restart the interaction counts as interrupted and can be answered again",
		"id", it.ID, "chat", it.ChatID, "kind", string(it.Kind), "status", string(res.Status),
		"answer", res.Answer, "decision", res.Decision, "text", res.Text, "by", res.By)
	err = s.write(ctx, OpResolved, lost, func(tx *sql.Tx) error {
		var st string
		switch err := s.queryRow(ctx, tx, sqlStatus, it.ID).Scan(&st); {
		case errors.Is(err, sql.ErrNoRows):
			// Requested was lost (a disk error, say): record it now.
			if err := s.insertRequested(ctx, tx, it); err != nil {
				return err
			}
			st = statusPending
		case err != nil:
			return err
		}
		if st != statusPending {
			s.log.Warn("interaction resolved after it was settled; the event is recorded, the outcome kept",
				"id", it.ID, "recorded", st, "now", res.Status)
			return s.event(ctx, tx, it.ID, evResolved, data)
		}
		var interruptedAt any
		if res.Status == interactions.StatusInterrupted {
			interruptedAt = fmtTime(res.At)
		}
		_, err := s.exec(ctx, tx, sqlResolve,
			string(res.Status), res.Answer, res.Decision, res.Text, res.By, fmtTime(res.At), interruptedAt, it.ID)
		if err != nil {
			return err
		}
		// The approval that completed a quorum is journaled with the
		// outcome (the ones before it by Approved).
		if err := s.insertApprovals(ctx, tx, it.ID, res.Approvals); err != nil {
			return err
		}
		return s.event(ctx, tx, it.ID, evResolved, data)
	})
	if err != nil {
		return fmt.Errorf("recording the outcome of interaction %s: %w", it.ID, err)
	}
	return nil
}

func validOutcome(st interactions.Status) bool {
	switch st {
	case interactions.StatusAnswered, interactions.StatusRejected, interactions.StatusExpired,
		interactions.StatusCancelled, interactions.StatusInterrupted:
		return true
	}
	return false
}

// event appends to the events table.
func (s *Store) event(ctx context.Context, tx *sql.Tx, id, typ string, data []byte) error {
	_, err := s.exec(ctx, tx, sqlInsertEvent,
		id, typ, fmtTime(s.now()), string(data))
	return err
}
