package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/interactions"
)

var _ interactions.ApprovalJournal = (*Store)(nil)

// Approved implements interactions.ApprovalJournal: every approval counted
// towards an interaction's quorum, who and when, appended to the audit log
// once per approver (the coordinator passes the whole list each time).
func (s *Store) Approved(ctx context.Context, id string, approvals []interactions.Approver) error {
	ctx = context.WithoutCancel(ctx) // a failed write is retried later
	names := make([]string, len(approvals))
	for i, a := range approvals {
		names[i] = a.By
	}
	lost := lostAttrs("approvals were not recorded; after a restart they must be given again",
		"id", id, "approvers", strings.Join(names, ", "))
	err := s.write(ctx, OpApproved, lost, func(tx *sql.Tx) error {
		return s.insertApprovals(ctx, tx, id, approvals)
	})
	if err != nil {
		return fmt.Errorf("recording the approvals of interaction %s: %w", id, err)
	}
	return nil
}

// insertApprovals appends the approvals not recorded yet.
func (s *Store) insertApprovals(ctx context.Context, tx *sql.Tx, id string, approvals []interactions.Approver) error {
	for _, a := range approvals {
		at := a.At
		if at.IsZero() {
			at = s.now()
		}
		if _, err := s.exec(ctx, tx, sqlInsertApproval, id, a.By, a.Decision, fmtTime(at)); err != nil {
			return err
		}
	}
	return nil
}

// approvals reads an interaction's approvals, first first.
func (s *Store) approvals(ctx context.Context, id string) ([]interactions.Approver, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT approver, decision, at FROM approvals WHERE interaction_id = ? ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("reading the approvals of %s: %w", id, err)
	}
	defer rows.Close()
	var out []interactions.Approver
	for rows.Next() {
		var a interactions.Approver
		var at sql.NullString
		if err := rows.Scan(&a.By, &a.Decision, &at); err != nil {
			return nil, fmt.Errorf("reading the approvals of %s: %w", id, err)
		}
		t, err := parseTime(at)
		if err != nil {
			return nil, fmt.Errorf("reading the approvals of %s: %w", id, err)
		}
		a.At = t
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the approvals of %s: %w", id, err)
	}
	return out, nil
}

// fillApprovals sets the journaled approvals of each interaction that
// needs a quorum.
func (s *Store) fillApprovals(ctx context.Context, ins []engine.Interrupted) error {
	for i := range ins {
		if ins[i].Interaction.Quorum < 2 {
			continue
		}
		as, err := s.approvals(ctx, ins[i].Interaction.ID)
		if err != nil {
			return err
		}
		ins[i].Approvals = as
	}
	return nil
}
