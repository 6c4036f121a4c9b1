package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
)

// auditUsage is printed by `leashd audit -h` and after a bad flag.
const auditUsage = `Usage: leashd audit [flags]

Prints the audit log: every question, plan review and tool approval, who
answered it, how and when. It reads the database (LEASHD_DB_PATH) without
changing it, also while leashd runs.

Flags:
  --chat ID       only this chat (e.g. telegram:42, slack:C0123, web:abc)
  --since WHEN    only interactions asked since WHEN: ` + sqlite.SinceForms + `
  --kind KIND     only question, plan_review or tool_approval
  --status S      only pending, answered, rejected, expired, cancelled or interrupted
  --limit N       only the newest N (still printed oldest first)
  --notices       the agents' notices instead (tool calls they denied without
                  asking, writes they lost, conversations they reset); takes
                  --chat, --since, --limit
  --json          one JSON object per line instead of a table
  --db PATH       the database file (default: LEASHD_DB_PATH)
`

// auditArgs are `leashd audit`'s parsed flags.
type auditArgs struct {
	filter  sqlite.AuditFilter
	json    bool
	notices bool
	db      string
}

// parseAuditArgs reads the flags; a bad value is an error naming the flag,
// the value and what is accepted.
func parseAuditArgs(args []string, now time.Time, stderr io.Writer) (auditArgs, error) {
	fs := flag.NewFlagSet("leashd audit", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var a auditArgs
	var since, kind, status, limit string
	fs.StringVar(&a.filter.ChatID, "chat", "", "")
	fs.StringVar(&since, "since", "", "")
	fs.StringVar(&kind, "kind", "", "")
	fs.StringVar(&status, "status", "", "")
	fs.StringVar(&limit, "limit", "", "")
	fs.BoolVar(&a.json, "json", false, "")
	fs.BoolVar(&a.notices, "notices", false, "")
	fs.StringVar(&a.db, "db", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stderr, auditUsage)
			return a, err
		}
		fmt.Fprint(stderr, auditUsage)
		return a, fmt.Errorf("leashd audit: %w", err)
	}
	if fs.NArg() > 0 {
		return a, fmt.Errorf("leashd audit: unexpected argument %q (it takes only flags; see leashd audit -h)", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["chat"] && strings.TrimSpace(a.filter.ChatID) == "" {
		return a, errors.New("--chat is empty: give a chat ID such as telegram:42")
	}
	if set["since"] {
		t, err := sqlite.ParseSince(since, now)
		if err != nil {
			return a, err
		}
		a.filter.Since = t
	}
	if set["kind"] {
		k := interactions.Kind(strings.TrimSpace(kind))
		if !slices.Contains(sqlite.Kinds, k) {
			return a, fmt.Errorf("--kind %q is not a kind: use question, plan_review or tool_approval", kind)
		}
		a.filter.Kind = k
	}
	if set["status"] {
		s := strings.TrimSpace(status)
		if !slices.Contains(sqlite.Statuses, s) {
			return a, fmt.Errorf("--status %q is not a status: use %s", status, strings.Join(sqlite.Statuses, ", "))
		}
		a.filter.Status = s
	}
	if set["limit"] {
		n, err := strconv.Atoi(strings.TrimSpace(limit))
		if err != nil || n < 1 {
			return a, fmt.Errorf("--limit %q is not a count: use a whole number of 1 or more", limit)
		}
		a.filter.Limit = n
	}
	if a.notices && (set["kind"] || set["status"]) {
		return a, errors.New("--kind and --status select interactions; --notices lists notices, by --chat, --since and --limit")
	}
	if set["db"] && strings.TrimSpace(a.db) == "" {
		return a, errors.New("--db is empty: give the database file's path")
	}
	return a, nil
}

// runAudit is `leashd audit`: it prints the audit log from the database,
// opened read-only.
func runAudit(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	a, err := parseAuditArgs(args, time.Now(), stderr)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	path := a.db
	if path == "" {
		path = cfg.DBPath
	}
	s, err := sqlite.Open(ctx, path, sqlite.ReadOnly())
	if sqlite.IsNotExist(err) {
		return fmt.Errorf("no audit log at %s: leashd has not run with this LEASHD_DB_PATH yet (or set --db)", path)
	}
	if err != nil {
		return dbPathError(a.db, path, err)
	}
	defer s.Close()
	if a.notices {
		ns, err := s.Notices(ctx, a.filter)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Path(), err)
		}
		return writeNotices(stdout, ns, a.json)
	}
	recs, err := s.Audit(ctx, a.filter)
	if err != nil {
		return fmt.Errorf("%s: %w", s.Path(), err)
	}
	if a.json {
		return writeAuditJSON(stdout, recs, askedBy(ctx, s, recs), sources(ctx, s, recs))
	}
	return writeAuditTable(stdout, recs, sources(ctx, s, recs))
}

// auditLine is one interaction in `leashd audit --json`.
type auditLine struct {
	InteractionID string                `json:"interaction_id"`
	ChatID        string                `json:"chat_id"`
	Kind          interactions.Kind     `json:"kind"`
	Header        string                `json:"header,omitempty"`
	Question      string                `json:"question"`
	Plan          string                `json:"plan,omitempty"`
	ToolName      string                `json:"tool_name,omitempty"`
	ToolSummary   string                `json:"tool_summary,omitempty"`
	ToolInput     json.RawMessage       `json:"tool_input,omitempty"`
	Options       []interactions.Choice `json:"options"`
	MultiSelect   bool                  `json:"multi_select,omitempty"`
	Answer        string                `json:"answer"`
	Decision      string                `json:"decision"`
	Text          string                `json:"text,omitempty"`
	Status        string                `json:"status"`
	By            string                `json:"by"`
	// AskedBy is the program that asked, when not the chat's agent: "api"
	// (the page's token), "api:<name>" (a token of LEASHD_API_TOKENS) or
	// "mcp".
	AskedBy string `json:"asked_by,omitempty"`
	// Source: a request relayed by an agent's hook ("hook", with the
	// terminal session's ID and working directory).
	Source        *interactions.Source `json:"source,omitempty"`
	AskedAt       time.Time            `json:"asked_at"`
	ResolvedAt    *time.Time           `json:"resolved_at"`
	LatencyMS     *int64               `json:"latency_ms"`
	InterruptedAt *time.Time           `json:"interrupted_at,omitempty"`
	RecoveredAt   *time.Time           `json:"recovered_at,omitempty"`
	RecoveredFrom string               `json:"recovered_from,omitempty"`
	Ref           string               `json:"message_ref,omitempty"`
	// Quorum and Approvals: an interaction that needed several approvers,
	// and every approval counted (who, decision, when), first first.
	Quorum    int                     `json:"quorum,omitempty"`
	Approvals []interactions.Approver `json:"approvals,omitempty"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// askedBy is who asked each interaction a program asked (the journal
// keeps it with the request): "api:<name>" for a token of
// LEASHD_API_TOKENS. One it cannot read is left out.
func askedBy(ctx context.Context, s *sqlite.Store, recs []sqlite.AuditRecord) map[string]string {
	out := map[string]string{}
	for _, r := range recs {
		if by, err := s.AskedBy(ctx, r.Interaction.ID); err == nil && by != "" {
			out[r.Interaction.ID] = by
		}
	}
	return out
}

// sources is where each relayed request came from (hook_event.go).
func sources(ctx context.Context, s *sqlite.Store, recs []sqlite.AuditRecord) map[string]*interactions.Source {
	out := map[string]*interactions.Source{}
	for _, r := range recs {
		if src, err := s.SourceOf(ctx, r.Interaction.ID); err == nil && src != nil {
			out[r.Interaction.ID] = src
		}
	}
	return out
}

// sourceLine is a relayed request's source in the table: source=hook,
// the session and its working directory.
func sourceLine(src *interactions.Source) string {
	return fmt.Sprintf("source=%s session=%s cwd=%s", src.Kind, orDash(src.SessionID), orDash(src.Cwd))
}

func writeAuditJSON(w io.Writer, recs []sqlite.AuditRecord, askers map[string]string, srcs map[string]*interactions.Source) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range recs {
		it, res := r.Interaction, r.Resolution
		l := auditLine{
			InteractionID: it.ID, ChatID: it.ChatID, Kind: it.Kind, Header: it.Header,
			Question: it.Question, Plan: it.Plan, ToolName: it.ToolName, ToolSummary: it.ToolSummary,
			ToolInput: it.ToolInput, Options: it.Options, MultiSelect: it.MultiSelect,
			Answer: res.Answer, Decision: res.Decision, Text: res.Text, Status: r.Status(), By: res.By, AskedBy: askers[it.ID], Source: srcs[it.ID],
			AskedAt: it.AskedAt.UTC(), ResolvedAt: timePtr(res.At),
			InterruptedAt: timePtr(r.InterruptedAt), RecoveredAt: timePtr(r.RecoveredAt), Ref: r.Ref,
			RecoveredFrom: r.RecoveredFrom,
		}
		if it.NeedsQuorum() {
			l.Quorum, l.Approvals = it.Quorum, r.Approvals
		}
		if l.Options == nil {
			l.Options = []interactions.Choice{}
		}
		if d, ok := latency(r); ok {
			ms := d.Milliseconds()
			l.LatencyMS = &ms
		}
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return nil
}

// latency is how long the interaction waited for its outcome.
func latency(r sqlite.AuditRecord) (time.Duration, bool) {
	if r.Resolution.At.IsZero() || r.Interaction.AskedAt.IsZero() {
		return 0, false
	}
	return r.Resolution.At.Sub(r.Interaction.AskedAt), true
}

func writeAuditTable(w io.Writer, recs []sqlite.AuditRecord, srcs map[string]*interactions.Source) error {
	if len(recs) == 0 {
		_, err := fmt.Fprintln(w, "No interactions recorded (with these filters).")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ASKED\tCHAT\tKIND\tWHAT\tSTATUS\tANSWER\tBY\tLATENCY")
	for _, r := range recs {
		it := r.Interaction
		lat := "-"
		if d, ok := latency(r); ok {
			lat = roundDuration(d)
		}
		status := r.Status()
		if !r.RecoveredAt.IsZero() {
			status += " (after restart)"
		}
		if r.RecoveredFrom != "" {
			status += " (again: " + r.RecoveredFrom + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n",
			it.AskedAt.Local().Format("2006-01-02 15:04:05"), cell(it.ChatID, 24), it.Kind,
			cell(what(it), 48), status, cell(answer(r.Resolution), 32), orDash(cell(r.Resolution.By, 20)), lat)
		if src := srcs[it.ID]; src != nil {
			fmt.Fprintf(tw, "\t\t\t%s\t\t\t\t\n", cell(sourceLine(src), 120))
		}
		// Each approval counted towards a quorum on a line of its own:
		// which one, who, their decision and when.
		for i, a := range r.Approvals {
			fmt.Fprintf(tw, "\t\t\t%s\t%s\t%s\t%s\t%s\n",
				fmt.Sprintf("  approval %d of %d", i+1, it.Quorum), a.At.Local().Format("2006-01-02 15:04:05"),
				cell(a.Decision, 32), cell(a.By, 20), roundDuration(a.At.Sub(it.AskedAt)))
		}
	}
	return tw.Flush()
}

// what is the interaction's subject in one line.
func what(it interactions.Interaction) string {
	switch it.Kind {
	case interactions.KindPlanReview:
		return "plan: " + it.Plan
	case interactions.KindToolApproval:
		if it.ToolSummary != "" {
			return it.ToolName + ": " + it.ToolSummary
		}
		return it.ToolName
	}
	return it.Question
}

// answer is what was decided, in one line.
func answer(res interactions.Resolution) string {
	var parts []string
	for _, s := range []string{res.Decision, res.Answer, res.Text} {
		if s != "" && !slices.Contains(parts, s) {
			parts = append(parts, s)
		}
	}
	return orDash(strings.Join(parts, ": "))
}

// cell makes s one table cell: one line, tabs gone, at most max runes,
// cut at a word when one ends near the limit.
func cell(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	cut := string([]rune(s)[:max-1])
	if i := strings.LastIndexByte(cut, ' '); i > 0 && utf8.RuneCountInString(cut[i:]) <= 12 {
		cut = cut[:i]
	}
	return cut + "…"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func roundDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-"
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	default:
		return d.Round(time.Second).String()
	}
}

// writeNotices prints agents' notices: a table, or JSON lines.
func writeNotices(w io.Writer, ns []sqlite.Notice, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		for _, n := range ns {
			if err := enc.Encode(n); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AT\tCHAT\tKIND\tTEXT")
	for _, n := range ns {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", n.At.Local().Format("2006-01-02 15:04:05"), cell(n.ChatID, 40), n.Kind, cell(n.Text, 120))
	}
	return tw.Flush()
}
