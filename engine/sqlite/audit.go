package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/leashd/leashd/interactions"
)

// AuditFilter selects audit records; the zero value selects all.
type AuditFilter struct {
	ChatID string            // only this chat ("" for all)
	Since  time.Time         // only interactions asked at or after this time (zero: all)
	Kind   interactions.Kind // only this kind ("" for all)
	Status string            // only this status: "pending" or an interactions.Status ("" for all)
	Limit  int               // only the newest Limit records (0 for all)
}

// Statuses are the values AuditFilter.Status accepts.
var Statuses = []string{statusPending, string(interactions.StatusAnswered), string(interactions.StatusRejected),
	string(interactions.StatusExpired), string(interactions.StatusCancelled), string(interactions.StatusInterrupted)}

// Kinds are the values AuditFilter.Kind accepts.
var Kinds = []interactions.Kind{interactions.KindQuestion, interactions.KindPlanReview, interactions.KindToolApproval}

// AuditRecord is one interaction as the audit log has it.
type AuditRecord struct {
	Interaction interactions.Interaction
	// Ref is the chat message that showed it ("" if it was never shown).
	Ref string
	// Resolution is how it ended; its Status is "" while it is pending.
	// For an interaction answered after a restart it is that answer.
	Resolution interactions.Resolution
	// InterruptedAt is when a restart interrupted it (zero if none did).
	InterruptedAt time.Time
	// RecoveredAt is when an answer given after the restart was recorded.
	RecoveredAt time.Time
	// RecoveredFrom, on a tool call allowed without asking, is the ID of
	// the interaction whose answer after a restart allowed the identical
	// call ("" for every other record).
	RecoveredFrom string
	// Approvals are the approvals counted towards the interaction's
	// Quorum, first first: who and when (none when it needed one).
	Approvals []interactions.Approver
}

// Status is the record's status: "pending" or how it ended.
func (r AuditRecord) Status() string {
	if r.Resolution.Status == "" {
		return statusPending
	}
	return string(r.Resolution.Status)
}

// Audit returns the interactions the filter selects, oldest first (with a
// Limit, the newest Limit of them, still oldest first). It reads a
// consistent snapshot and never blocks leashd's writes, so it can run from
// another process while leashd runs.
func (s *Store) Audit(ctx context.Context, f AuditFilter) ([]AuditRecord, error) {
	if f.Kind != "" && !slices.Contains(Kinds, f.Kind) {
		return nil, fmt.Errorf("reading the audit log: unknown kind %q (accepted: %s)", f.Kind, joinKinds())
	}
	if f.Status != "" && !slices.Contains(Statuses, f.Status) {
		return nil, fmt.Errorf("reading the audit log: unknown status %q (accepted: %s)", f.Status, strings.Join(Statuses, ", "))
	}
	if f.Limit < 0 {
		return nil, fmt.Errorf("reading the audit log: limit %d is negative", f.Limit)
	}
	q, args := filterQuery(f, "interactions", recordColumns, "asked_at", true)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	recs, err := scanRecords(rows)
	if err != nil {
		return nil, fmt.Errorf("reading the audit log: %w", err)
	}
	for i := range recs {
		if recs[i].Interaction.Quorum < 2 {
			continue
		}
		if recs[i].Approvals, err = s.approvals(ctx, recs[i].Interaction.ID); err != nil {
			return nil, fmt.Errorf("reading the audit log: %w", err)
		}
	}
	return recs, nil
}

// filterQuery selects cols from table as the filter says: by chat, by
// time (timeCol at or after Since), by kind and status when the table has
// them; with a Limit the newest Limit rows. Oldest first.
func filterQuery(f AuditFilter, table, cols, timeCol string, kindStatus bool) (string, []any) {
	var where []string
	var args []any
	if f.ChatID != "" {
		where = append(where, "chat_id = ?")
		args = append(args, f.ChatID)
	}
	if !f.Since.IsZero() {
		where = append(where, timeCol+" >= ?")
		args = append(args, fmtTime(f.Since))
	}
	if kindStatus && f.Kind != "" {
		where = append(where, "kind = ?")
		args = append(args, string(f.Kind))
	}
	if kindStatus && f.Status != "" {
		where = append(where, "status = ?")
		args = append(args, f.Status)
	}
	q := `SELECT ` + cols + `, seq FROM ` + table
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if f.Limit > 0 {
		q += " ORDER BY " + timeCol + " DESC, seq DESC LIMIT ?"
		args = append(args, f.Limit)
	}
	return `SELECT ` + cols + ` FROM (` + q + `) ORDER BY ` + timeCol + `, seq`, args
}

func joinKinds() string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return strings.Join(s, ", ")
}

// recordColumns are the interactions columns scanRecords reads.
const recordColumns = `id, chat_id, kind, header, question, options, multi_select, idx, total,
	plan, tool_name, tool_input, tool_summary, asked_at, deadline, ref,
	status, answer, decision, text, resolved_by, resolved_at, interrupted_at, recovered_at, recovered_from, approval`

// approvalFields is the approval column: what the agent said about a tool
// approval.
type approvalFields struct {
	Reason          string `json:"reason,omitempty"`
	MCPServer       string `json:"mcp_server,omitempty"`
	DefaultToNo     bool   `json:"default_to_no,omitempty"`
	NoSessionAllow  bool   `json:"no_session_allow,omitempty"`
	RequiresDetails bool   `json:"requires_details,omitempty"`
	Quorum          int    `json:"quorum,omitempty"` // approvers needed (plan reviews too)
	// ForApprovers: a question only approvers answer (an agent's own
	// permission options).
	ForApprovers bool `json:"for_approvers,omitempty"`
	// Approval: a yes/no approval (a program's), which after a restart
	// still needs its quorum of its first option.
	Approval bool `json:"approval,omitempty"`
	// AgentRef: the agent's own ID for the request, which the same agent
	// process asks again with after a restart (it runs on a runner).
	AgentRef string `json:"agent_ref,omitempty"`
}

func approvalOf(it interactions.Interaction) approvalFields {
	return approvalFields{it.Reason, it.MCPServer, it.DefaultToNo, it.NoSessionAllow, it.RequiresDetails, it.Quorum, it.ForApprovers, it.Approval, it.AgentRef}
}

// scanRecords reads and closes rows selected with recordColumns.
func scanRecords(rows *sql.Rows) ([]AuditRecord, error) {
	defer rows.Close()
	var out []AuditRecord
	for rows.Next() {
		var (
			r                                                 AuditRecord
			it                                                = &r.Interaction
			kind, options, status, approval                   string
			toolInput                                         sql.NullString
			asked, deadline, resolved, interrupted, recovered sql.NullString
		)
		err := rows.Scan(&it.ID, &it.ChatID, &kind, &it.Header, &it.Question, &options, &it.MultiSelect,
			&it.Index, &it.Total, &it.Plan, &it.ToolName, &toolInput, &it.ToolSummary, &asked, &deadline,
			&r.Ref, &status, &r.Resolution.Answer, &r.Resolution.Decision, &r.Resolution.Text,
			&r.Resolution.By, &resolved, &interrupted, &recovered, &r.RecoveredFrom, &approval)
		if err != nil {
			return nil, err
		}
		it.Kind = interactions.Kind(kind)
		if err := json.Unmarshal([]byte(options), &it.Options); err != nil {
			return nil, fmt.Errorf("interaction %s: bad options in the database: %w", it.ID, err)
		}
		if toolInput.Valid {
			it.ToolInput = json.RawMessage(toolInput.String)
		}
		var a approvalFields
		if err := json.Unmarshal([]byte(approval), &a); err != nil {
			return nil, fmt.Errorf("interaction %s: bad approval fields in the database: %w", it.ID, err)
		}
		it.Reason, it.MCPServer, it.DefaultToNo, it.NoSessionAllow, it.RequiresDetails = a.Reason, a.MCPServer, a.DefaultToNo, a.NoSessionAllow, a.RequiresDetails
		it.Quorum, it.ForApprovers, it.Approval, it.AgentRef = a.Quorum, a.ForApprovers, a.Approval, a.AgentRef
		if status != statusPending {
			r.Resolution.Status = interactions.Status(status)
		}
		for _, t := range []struct {
			dst *time.Time
			src sql.NullString
		}{{&it.AskedAt, asked}, {&it.Deadline, deadline}, {&r.Resolution.At, resolved},
			{&r.InterruptedAt, interrupted}, {&r.RecoveredAt, recovered}} {
			v, err := parseTime(t.src)
			if err != nil {
				return nil, fmt.Errorf("interaction %s: %w", it.ID, err)
			}
			*t.dst = v
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
