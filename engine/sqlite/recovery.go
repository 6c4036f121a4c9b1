package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/interactions"
)

// InterruptedText is the reason recorded on interactions that were still
// pending when leashd stopped.
const InterruptedText = "leashd stopped before anyone answered"

// Interrupt implements engine.Store: every interaction an earlier run
// left pending (it crashed, or could not record the shutdown) is marked
// interrupted, in one transaction with an event each, and returned with its
// message reference, oldest first. Interactions requested since this Store
// was opened are left alone even when Interrupt runs after them: they
// belong to this run's coordinator, which settles them (at shutdown as
// interrupted, through Resolved).
func (s *Store) Interrupt(ctx context.Context) ([]engine.Interrupted, error) {
	var out []engine.Interrupted
	lost := lostAttrs("interactions the last run left pending are not marked interrupted (they are marked at the next start or when answered)")
	err := s.write(ctx, OpInterrupt, lost, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+recordColumns+` FROM interactions
			WHERE status = 'pending' AND seq <= ? ORDER BY asked_at, seq`, s.orphanSeq)
		if err != nil {
			return err
		}
		recs, err := scanRecords(rows)
		if err != nil {
			return err
		}
		now := s.now()
		data, _ := json.Marshal(map[string]string{"reason": InterruptedText}) // cannot fail
		for _, r := range recs {
			_, err := tx.ExecContext(ctx, `UPDATE interactions SET status = 'interrupted', text = ?,
					resolved_at = ?, interrupted_at = ?
				WHERE id = ? AND status = 'pending'`,
				InterruptedText, fmtTime(now), fmtTime(now), r.Interaction.ID)
			if err != nil {
				return err
			}
			if err := s.event(ctx, tx, r.Interaction.ID, evInterrupted, data); err != nil {
				return err
			}
			out = append(out, engine.Interrupted{Interaction: r.Interaction, Ref: r.Ref})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("marking pending interactions interrupted: %w", err)
	}
	if err := s.fillSelections(ctx, out); err != nil {
		return nil, fmt.Errorf("marking pending interactions interrupted: %w", err)
	}
	if err := s.fillApprovals(ctx, out); err != nil {
		return nil, fmt.Errorf("marking pending interactions interrupted: %w", err)
	}
	return out, nil
}

// lookupInterrupted finds an interaction that a restart interrupted,
// whether or not its late answer has been recorded yet. One an earlier run
// left pending counts even before Interrupt has marked it. Only the tests
// use it now, to look into the store: at start-up the engine restores
// what is left in the coordinator instead (Interrupt, Unanswered).
func (s *Store) lookupInterrupted(ctx context.Context, id string) (engine.Interrupted, bool, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+recordColumns+` FROM interactions
		WHERE id = ? AND (interrupted_at IS NOT NULL OR (status = 'pending' AND seq <= ?))`, id, s.orphanSeq)
	if err != nil {
		return engine.Interrupted{}, false, fmt.Errorf("looking up interaction %s: %w", id, err)
	}
	recs, err := scanRecords(rows)
	if err != nil {
		return engine.Interrupted{}, false, fmt.Errorf("looking up interaction %s: %w", id, err)
	}
	if len(recs) == 0 {
		return engine.Interrupted{}, false, nil
	}
	return engine.Interrupted{Interaction: recs[0].Interaction, Ref: recs[0].Ref}, true, nil
}

// Recovered implements engine.Store: it records the answer given after
// the restart as the interaction's outcome, exactly once (or how it ended
// unanswered: expired, or cancelled by /clear or /stop). It reports false
// when the answer was already recorded (a duplicate tap), and an error when
// id is not an interrupted interaction. One an earlier run left pending is
// marked interrupted first, in the same transaction.
func (s *Store) Recovered(ctx context.Context, id string, res interactions.Resolution) (bool, error) {
	switch res.Status {
	case interactions.StatusAnswered, interactions.StatusRejected, interactions.StatusExpired, interactions.StatusCancelled:
	default:
		return false, fmt.Errorf("recording the recovered answer to %s: status %q (accepted: answered, rejected, expired, cancelled)", id, res.Status)
	}
	if res.At.IsZero() {
		res.At = s.now()
	}
	data, err := json.Marshal(res)
	if err != nil {
		return false, fmt.Errorf("recording the recovered answer to %s: %w", id, err)
	}
	first := false
	lost := lostAttrs("an answer given after a restart was not recorded and not passed to the agent; the person is told it failed and can answer again",
		"id", id, "status", string(res.Status), "answer", res.Answer, "decision", res.Decision, "text", res.Text, "by", res.By)
	err = s.write(ctx, OpRecovered, lost, func(tx *sql.Tx) error {
		// Left pending by an earlier run and not yet marked: mark it now.
		now := s.now()
		r, err := tx.ExecContext(ctx, `UPDATE interactions SET status = 'interrupted', text = ?,
				resolved_at = ?, interrupted_at = ?
			WHERE id = ? AND status = 'pending' AND seq <= ?`,
			InterruptedText, fmtTime(now), fmtTime(now), id, s.orphanSeq)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n > 0 {
			data, _ := json.Marshal(map[string]string{"reason": InterruptedText}) // cannot fail
			if err := s.event(ctx, tx, id, evInterrupted, data); err != nil {
				return err
			}
		}
		r, err = tx.ExecContext(ctx, `UPDATE interactions SET status = ?, answer = ?, decision = ?, text = ?,
				resolved_by = ?, resolved_at = ?, recovered_at = ?
			WHERE id = ? AND status = 'interrupted' AND recovered_at IS NULL`,
			string(res.Status), res.Answer, res.Decision, res.Text, res.By, fmtTime(res.At), fmtTime(res.At), id)
		if err != nil {
			return err
		}
		if n, _ := r.RowsAffected(); n == 0 {
			var interrupted bool
			err := tx.QueryRowContext(ctx, `SELECT interrupted_at IS NOT NULL FROM interactions WHERE id = ?`, id).Scan(&interrupted)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				return refused(fmt.Sprintf("no interaction %q is recorded", id))
			case err != nil:
				return err
			case !interrupted:
				return refused(fmt.Sprintf("interaction %s was not interrupted by a restart", id))
			}
			return nil // already recovered
		}
		first = true
		if err := s.insertApprovals(ctx, tx, id, res.Approvals); err != nil {
			return err
		}
		return s.event(ctx, tx, id, evRecovered, data)
	})
	if err != nil {
		return false, fmt.Errorf("recording the recovered answer to %s: %w", id, err)
	}
	return first, nil
}

// Unanswered returns the interactions earlier runs left interrupted (at a
// shutdown or by a crash, once Interrupt marked them) that nobody has
// answered since, interrupted at or after since, oldest first. Their
// buttons still work; the engine shows them again after a restart to
// connectors that keep no history of their own, such as the web page.
func (s *Store) Unanswered(ctx context.Context, since time.Time) ([]engine.Interrupted, error) {
	from := fmtTime(since)
	if from == nil {
		from = ""
	}
	rows, err := s.r.QueryContext(ctx, `SELECT `+recordColumns+` FROM interactions
		WHERE status = 'interrupted' AND recovered_at IS NULL AND seq <= ? AND interrupted_at >= ?
		ORDER BY asked_at, seq`, s.orphanSeq, from)
	if err != nil {
		return nil, fmt.Errorf("listing unanswered interrupted interactions: %w", err)
	}
	recs, err := scanRecords(rows)
	if err != nil {
		return nil, fmt.Errorf("listing unanswered interrupted interactions: %w", err)
	}
	out := make([]engine.Interrupted, 0, len(recs))
	for _, r := range recs {
		out = append(out, engine.Interrupted{Interaction: r.Interaction, Ref: r.Ref})
	}
	if err := s.fillSelections(ctx, out); err != nil {
		return nil, fmt.Errorf("listing unanswered interrupted interactions: %w", err)
	}
	if err := s.fillApprovals(ctx, out); err != nil {
		return nil, fmt.Errorf("listing unanswered interrupted interactions: %w", err)
	}
	return out, nil
}

// AllowedAgain implements engine.Store: it records a tool
// call the engine allowed without asking, because a person allowed the
// identical call (interaction from) after a restart, as an answered
// interaction linked to from (AuditRecord.RecoveredFrom).
func (s *Store) AllowedAgain(ctx context.Context, it interactions.Interaction, res interactions.Resolution, from string) error {
	if from == "" {
		return fmt.Errorf("recording interaction %s allowed after a restart: no original interaction named", it.ID)
	}
	if res.At.IsZero() {
		res.At = s.now()
	}
	data, err := json.Marshal(map[string]any{"resolution": res, "recovered_from": from})
	if err != nil {
		return fmt.Errorf("recording interaction %s allowed after a restart: %w", it.ID, err)
	}
	lost := lostAttrs("a tool call allowed again after a restart is missing from the audit log (the agent ran it)",
		"id", it.ID, "chat", it.ChatID, "tool", it.ToolName, "recovered_from", from)
	err = s.write(ctx, OpAgain, lost, func(tx *sql.Tx) error {
		var st string
		switch err := tx.QueryRowContext(ctx, `SELECT status FROM interactions WHERE id = ?`, from).Scan(&st); {
		case errors.Is(err, sql.ErrNoRows):
			return refused(fmt.Sprintf("no interaction %q is recorded", from))
		case err != nil:
			return err
		case st != string(interactions.StatusAnswered):
			return refused(fmt.Sprintf("interaction %s was not allowed (status %s)", from, st))
		}
		if err := s.insertRequested(ctx, tx, it); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE interactions SET status = ?, answer = ?, decision = ?, text = ?,
				resolved_by = ?, resolved_at = ?, recovered_from = ?
			WHERE id = ? AND status = 'pending'`,
			string(res.Status), res.Answer, res.Decision, res.Text, res.By, fmtTime(res.At), from, it.ID)
		if err != nil {
			return err
		}
		return s.event(ctx, tx, it.ID, evResolved, data)
	})
	if err != nil {
		return fmt.Errorf("recording interaction %s allowed after a restart: %w", it.ID, err)
	}
	return nil
}

var _ interactions.SelectionJournal = (*Store)(nil)

// Selected implements interactions.SelectionJournal: it keeps the latest
// selection of a multi-select question, so that a restart keeps it.
func (s *Store) Selected(ctx context.Context, id string, labels []string) error {
	if labels == nil {
		labels = []string{}
	}
	data, err := json.Marshal(labels)
	if err != nil {
		return fmt.Errorf("recording the selection of interaction %s: %w", id, err)
	}
	lost := lostAttrs("a multi-select's ticks were not recorded; after a restart they are as before this toggle",
		"id", id, "selected", strings.Join(labels, ", "))
	err = s.write(ctx, OpSelected, lost, func(tx *sql.Tx) error {
		_, err := s.exec(ctx, tx, sqlSaveSelection,
			id, string(data), fmtTime(s.now()))
		return err
	})
	if err != nil {
		return fmt.Errorf("recording the selection of interaction %s: %w", id, err)
	}
	return nil
}

// fillSelections sets the journaled selection of each multi-select.
func (s *Store) fillSelections(ctx context.Context, ins []engine.Interrupted) error {
	for i := range ins {
		if !ins[i].Interaction.MultiSelect {
			continue
		}
		var raw string
		err := s.r.QueryRowContext(ctx, `SELECT labels FROM selections WHERE interaction_id = ?`, ins[i].Interaction.ID).Scan(&raw)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			continue
		case err != nil:
			return fmt.Errorf("reading the selection of %s: %w", ins[i].Interaction.ID, err)
		}
		if err := json.Unmarshal([]byte(raw), &ins[i].Selected); err != nil {
			return fmt.Errorf("reading the selection of %s: %w", ins[i].Interaction.ID, err)
		}
	}
	return nil
}
