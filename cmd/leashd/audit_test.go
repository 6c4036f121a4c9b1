package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
)

// auditDB is a real database written the way leashd writes it: through the
// coordinator with the store as its journal. It holds an answered question
// (telegram:42), a denied tool call (slack:C1) and a plan review still
// pending (web:x) — leashd is still running when the tests read it.
type auditDB struct {
	path  string
	coord *interactions.Coordinator
}

func newAuditDB(t *testing.T) auditDB {
	t.Helper()
	ctx := context.Background()
	path := filepath.Join(testenv.PrivateDir(t), "state", "leashd.db")
	s, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	shown := make(chan interactions.Interaction, 8)
	coord := interactions.New(interactions.WithJournal(s), interactions.WithPresenter(
		interactions.PresenterFunc(func(_ context.Context, it *interactions.Interaction) (string, error) {
			shown <- *it
			return "msg-" + it.ID, nil
		})))
	results := make(chan interactions.Resolution, 8)
	ask := func(it interactions.Interaction, r interactions.Reply) {
		go func() {
			_, res, err := coord.Request(ctx, it)
			assert.NoError(t, err)
			results <- res
		}()
		got := <-shown
		if r.By == "" {
			return // left pending
		}
		_, err := coord.Reply(got.ID, r)
		require.NoError(t, err)
		select {
		case <-results:
		case <-time.After(10 * time.Second):
			t.Fatal("no resolution")
		}
	}
	ask(interactions.Interaction{ChatID: "telegram:42", Kind: interactions.KindQuestion, Header: "DB",
		Question: "Which database\tshould we use?", Options: []interactions.Choice{{Label: "Postgres"}, {Label: "SQLite"}}},
		interactions.Reply{By: "1001", Answers: []string{"SQLite"}})
	ask(interactions.Interaction{ChatID: "slack:C1", Kind: interactions.KindToolApproval, ToolName: "Bash",
		ToolInput: json.RawMessage(`{"command":"rm -rf build"}`), ToolSummary: "rm -rf build"},
		interactions.Reply{By: "U777", Answers: []string{interactions.DecisionDeny}, Text: "not the build dir"})
	ask(interactions.Interaction{ChatID: "web:x", Kind: interactions.KindPlanReview, Plan: "1. Add a users table\n2. Migrate"},
		interactions.Reply{})
	t.Cleanup(func() {
		coord.Interrupt("test over")
		<-results
		_ = s.Close()
	})
	return auditDB{path: path, coord: coord}
}

// audit runs `leashd audit args…` in-process with LEASHD_DB_PATH set.
func (d auditDB) audit(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	cleanEnv(t)
	t.Setenv("LEASHD_DB_PATH", d.path)
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), append([]string{"audit"}, args...), strings.NewReader(""), &stdout, &stderr)
	return stdout.String(), stderr.String(), err
}

func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		lines = append(lines, m)
	}
	return lines
}

func TestAuditTableWhileLeashdRuns(t *testing.T) {
	d := newAuditDB(t)
	out, stderr, err := d.audit(t)
	require.NoError(t, err)
	assert.Empty(t, stderr)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4, out)
	assert.Equal(t, []string{"ASKED", "CHAT", "KIND", "WHAT", "STATUS", "ANSWER", "BY", "LATENCY"}, strings.Fields(lines[0]))

	q := lines[1]
	for _, s := range []string{"telegram:42", "question", "Which database should we use?", "answered", "SQLite", "1001"} {
		assert.Contains(t, q, s)
	}
	tool := lines[2]
	for _, s := range []string{"slack:C1", "tool_approval", "Bash: rm -rf build", "rejected", "deny: not the build dir", "U777"} {
		assert.Contains(t, tool, s)
	}
	plan := lines[3]
	for _, s := range []string{"web:x", "plan_review", "plan: 1. Add a users table 2. Migrate", "pending"} {
		assert.Contains(t, plan, s)
	}
	f := strings.Fields(plan)
	assert.Equal(t, []string{"-", "-", "-"}, f[len(f)-3:], "a pending plan has no answer, nobody and no latency yet")
	// Columns line up: every row's CHAT starts where the header's does.
	col := strings.Index(lines[0], "CHAT")
	for _, l := range lines[1:] {
		assert.NotEqual(t, byte(' '), l[col], l)
		assert.Equal(t, byte(' '), l[col-1], l)
	}
}

func TestAuditJSONLines(t *testing.T) {
	d := newAuditDB(t)
	out, _, err := d.audit(t, "--json")
	require.NoError(t, err)
	lines := jsonLines(t, out)
	require.Len(t, lines, 3)
	for _, l := range lines {
		for _, k := range []string{"interaction_id", "chat_id", "kind", "question", "options", "answer", "decision", "status", "by", "asked_at", "resolved_at"} {
			assert.Contains(t, l, k)
		}
		_, err := time.Parse(time.RFC3339Nano, l["asked_at"].(string))
		assert.NoError(t, err)
	}
	q := lines[0]
	assert.Equal(t, "telegram:42", q["chat_id"])
	assert.Equal(t, "question", q["kind"])
	assert.Equal(t, "Which database\tshould we use?", q["question"], "JSON keeps the text exact")
	assert.Equal(t, []any{map[string]any{"label": "Postgres"}, map[string]any{"label": "SQLite"}}, q["options"])
	assert.Equal(t, "SQLite", q["answer"])
	assert.Equal(t, "answered", q["status"])
	assert.Equal(t, "1001", q["by"])
	assert.NotNil(t, q["resolved_at"])
	assert.GreaterOrEqual(t, q["latency_ms"], 0.0)

	tool := lines[1]
	assert.Equal(t, "deny", tool["decision"])
	assert.Equal(t, "not the build dir", tool["text"])
	assert.Equal(t, map[string]any{"command": "rm -rf build"}, tool["tool_input"])
	assert.Equal(t, "U777", tool["by"])

	plan := lines[2]
	assert.Equal(t, "pending", plan["status"])
	assert.Nil(t, plan["resolved_at"])
	assert.Nil(t, plan["latency_ms"])
	assert.Equal(t, "", plan["by"])
	assert.Contains(t, plan["plan"], "users table")
	assert.Len(t, plan["options"], len(interactions.PlanOptions))
}

func TestAuditFilters(t *testing.T) {
	d := newAuditDB(t)
	chats := func(args ...string) []string {
		t.Helper()
		out, _, err := d.audit(t, append(args, "--json")...)
		require.NoError(t, err)
		got := []string{}
		for _, l := range jsonLines(t, out) {
			got = append(got, l["chat_id"].(string))
		}
		return got
	}
	assert.Equal(t, []string{"slack:C1"}, chats("--chat", "slack:C1"))
	assert.Equal(t, []string{"slack:C1"}, chats("--kind=tool_approval"))
	assert.Equal(t, []string{"web:x"}, chats("--status", "pending"))
	assert.Equal(t, []string{"slack:C1", "web:x"}, chats("--limit", "2"))
	assert.Equal(t, []string{"telegram:42", "slack:C1", "web:x"}, chats("--since", "1h"))
	assert.Equal(t, []string{}, chats("--since", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)))
	assert.Equal(t, []string{}, chats("--chat", "telegram:42", "--status", "rejected"))

	out, _, err := d.audit(t, "--chat", "nobody")
	require.NoError(t, err)
	assert.Equal(t, "No interactions recorded (with these filters).\n", out)
}

func TestAuditBadFlagsNameFlagValueAndWhatIsAccepted(t *testing.T) {
	d := newAuditDB(t)
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"--since", "yesterday"}, []string{"--since", `"yesterday"`, "RFC 3339", "90m", "7d"}},
		{[]string{"--since", "-3h"}, []string{"--since", `"-3h"`, "positive"}},
		{[]string{"--kind", "poll"}, []string{"--kind", `"poll"`, "question, plan_review or tool_approval"}},
		{[]string{"--status", "done"}, []string{"--status", `"done"`, "pending, answered, rejected, expired, cancelled, interrupted"}},
		{[]string{"--limit", "ten"}, []string{"--limit", `"ten"`, "1 or more"}},
		{[]string{"--limit", "0"}, []string{"--limit", `"0"`, "1 or more"}},
		{[]string{"--chat", ""}, []string{"--chat", "empty", "telegram:42"}},
		{[]string{"--frobnicate"}, []string{"frobnicate"}},
		{[]string{"extra"}, []string{`"extra"`, "only flags"}},
	} {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, _, err := d.audit(t, tt.args...)
			require.Error(t, err)
			for _, s := range tt.want {
				assert.Contains(t, err.Error(), s)
			}
			assert.Empty(t, out, "nothing printed to stdout")
		})
	}
	out, stderr, err := d.audit(t, "-h")
	require.NoError(t, err)
	assert.Empty(t, out)
	assert.Contains(t, stderr, "--since WHEN")
}

func TestAuditDatabaseProblemsNameThePath(t *testing.T) {
	cleanEnv(t)
	missing := filepath.Join(testenv.PrivateDir(t), "nowhere", "leashd.db")
	t.Setenv("LEASHD_DB_PATH", missing)
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"audit"}, strings.NewReader(""), &stdout, &stderr)
	require.ErrorContains(t, err, "no audit log at "+missing)
	_, statErr := os.Stat(filepath.Dir(missing))
	assert.True(t, os.IsNotExist(statErr), "reading the audit log creates nothing")

	junk := filepath.Join(testenv.PrivateDir(t), "junk.db")
	require.NoError(t, os.WriteFile(junk, bytes.Repeat([]byte("not sqlite "), 200), 0o600))
	err = run(t.Context(), []string{"audit", "--db", junk}, strings.NewReader(""), &stdout, &stderr)
	require.ErrorContains(t, err, junk)
	b, _ := os.ReadFile(junk)
	assert.True(t, bytes.HasPrefix(b, []byte("not sqlite")), "the file is left alone")
}

// TestAuditProcess runs the real binary's main against the file: exit code
// 0 with the table, 1 with the message for a bad flag.
func TestAuditProcess(t *testing.T) {
	d := newAuditDB(t)
	for _, tt := range []struct {
		args, stdout, stderr string
		code                 int
	}{
		{"audit --chat telegram:42", "SQLite", "", 0},
		{"audit --json --kind plan_review", `"status":"pending"`, "", 0},
		{"audit --since 2weeks", "", `leashd: --since "2weeks" is not understood`, 1},
	} {
		t.Run(tt.args, func(t *testing.T) {
			cleanEnv(t)
			cmd := exec.CommandContext(t.Context(), os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), runMainEnv+"=1", runMainArgs+"="+tt.args, "LEASHD_DB_PATH="+d.path)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else {
				require.NoError(t, err)
			}
			assert.Equal(t, tt.code, code, "stderr: %s", stderr.String())
			assert.Contains(t, stdout.String(), tt.stdout)
			assert.Contains(t, stderr.String(), tt.stderr)
		})
	}
}

// TestAuditShowsAnswersGivenAfterARestart: a question left pending by a
// crash, answered after the restart, shows as such, with how long it
// waited; long text is cut to keep the table readable, and JSON has it all.
func TestAuditShowsAnswersGivenAfterARestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(testenv.PrivateDir(t), "leashd.db")
	asked := time.Now().Add(-2 * time.Hour).Truncate(time.Second)
	long := "Which of these databases should the reporting service use, given that " + strings.Repeat("it must scale ", 10) + "?"
	s1, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	require.NoError(t, s1.Requested(ctx, interactions.Interaction{ID: "q1", ChatID: "telegram:42", Kind: interactions.KindQuestion,
		Question: long, Options: []interactions.Choice{{Label: "Postgres"}, {Label: "SQLite"}}, AskedAt: asked}))
	require.NoError(t, s1.Close()) // crashed with it pending
	s2, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	defer s2.Close()
	_, err = s2.Interrupt(ctx)
	require.NoError(t, err)
	first, err := s2.Recovered(ctx, "q1", interactions.Resolution{Status: interactions.StatusAnswered, Answer: "Postgres", By: "1001",
		At: asked.Add(83*time.Minute + 20*time.Second)})
	require.NoError(t, err)
	require.True(t, first)

	d := auditDB{path: path}
	out, _, err := d.audit(t)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 2, out)
	row := lines[1]
	assert.Contains(t, row, "answered (after restart)")
	assert.Contains(t, row, "Postgres")
	assert.Contains(t, row, "1h23m20s")
	assert.Contains(t, row, "Which of these databases should the reporting…")
	assert.NotContains(t, row, "it must scale it must scale")

	out, _, err = d.audit(t, "--json")
	require.NoError(t, err)
	l := jsonLines(t, out)[0]
	assert.Equal(t, long, l["question"])
	assert.Equal(t, "answered", l["status"])
	assert.NotNil(t, l["interrupted_at"])
	assert.NotNil(t, l["recovered_at"])
	assert.Equal(t, float64((83*time.Minute + 20*time.Second).Milliseconds()), l["latency_ms"])
}

// FuzzAuditArgs: any flags either parse into a valid filter or fail with
// an error that names what was wrong; nothing panics.
func FuzzAuditArgs(f *testing.F) {
	for _, seed := range [][4]string{
		{"--since", "7d", "--limit", "3"},
		{"--kind", "tool_approval", "--status", "pending"},
		{"--chat", "telegram:42", "--json", "--db=/tmp/x.db"},
		{"--limit", "-1", "--since", "2026-11-22"},
		{"--status", "done", "", ""},
		{"-h", "", "", ""},
		{"--since=", "--chat=", "--kind=", "x"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	now := time.Date(2026, 11, 22, 8, 30, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, a, b, c, d string) {
		var stderr bytes.Buffer
		got, err := parseAuditArgs([]string{a, b, c, d}, now, &stderr)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		fl := got.filter
		if fl.Limit < 0 {
			t.Fatalf("negative limit %d accepted", fl.Limit)
		}
		if fl.Kind != "" && !slices.Contains(sqlite.Kinds, fl.Kind) {
			t.Fatalf("kind %q accepted", fl.Kind)
		}
		if fl.Status != "" && !slices.Contains(sqlite.Statuses, fl.Status) {
			t.Fatalf("status %q accepted", fl.Status)
		}
	})
}

// TestAuditShowsEveryApprover: an interaction that needed 2 approvals
// shows both approvers, their decisions and times, in the table and in
// --json.
func TestAuditShowsEveryApprover(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(testenv.PrivateDir(t), "state", "leashd.db")
	s, err := sqlite.Open(ctx, path)
	require.NoError(t, err)
	defer s.Close()
	at := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	shown := make(chan interactions.Interaction, 1)
	coord := interactions.New(interactions.WithJournal(s), interactions.WithClock(func() time.Time { return at }),
		interactions.WithPresenter(interactions.PresenterFunc(func(_ context.Context, it *interactions.Interaction) (string, error) {
			shown <- *it
			return "m", nil
		})))
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _, err := coord.Request(ctx, interactions.Interaction{ChatID: "slack:C1:1.2", Kind: interactions.KindPlanReview, Plan: "1. ship", Quorum: 2})
		assert.NoError(t, err)
	}()
	it := <-shown
	at = at.Add(time.Minute)
	out, err := coord.Reply(it.ID, interactions.Reply{By: "UALICE", Answers: []string{interactions.DecisionEdit}})
	require.NoError(t, err)
	require.Equal(t, interactions.Counted, out)
	at = at.Add(time.Minute)
	_, err = coord.Reply(it.ID, interactions.Reply{By: "UBOB", Answers: []string{interactions.DecisionDefault}})
	require.NoError(t, err)
	<-done

	d := auditDB{path: path}
	table, _, err := d.audit(t)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(table), "\n")
	require.Len(t, lines, 4, table)
	for i, want := range [][]string{
		{"approval 1 of 2", at.Add(-time.Minute).Local().Format("2006-01-02 15:04:05"), "edit", "UALICE", "1m"},
		{"approval 2 of 2", at.Local().Format("2006-01-02 15:04:05"), "default", "UBOB", "2m"},
	} {
		for _, s := range want {
			assert.Contains(t, lines[2+i], s)
		}
	}

	js, _, err := d.audit(t, "--json")
	require.NoError(t, err)
	l := jsonLines(t, js)
	require.Len(t, l, 1)
	assert.EqualValues(t, 2, l[0]["quorum"])
	assert.Equal(t, []any{
		map[string]any{"by": "UALICE", "at": "2026-11-25T12:01:00Z", "decision": "edit"},
		map[string]any{"by": "UBOB", "at": "2026-11-25T12:02:00Z", "decision": "default"},
	}, l[0]["approvals"])
}
