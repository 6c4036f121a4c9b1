package metrics_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/metrics"
	"github.com/leashd/leashd/interactions"
)

var (
	_ engine.Metrics   = (*metrics.Metrics)(nil)
	_ connectors.Stats = (*metrics.Metrics)(nil)
)

func scrape(t *testing.T, m *metrics.Metrics) string {
	t.Helper()
	srv := httptest.NewServer(m.Handler())
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// samples parses the text format into "name{labels}" -> value.
func samples(t *testing.T, text string) map[string]string {
	t.Helper()
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		require.Positive(t, i, line)
		out[line[:i]] = line[i+1:]
	}
	return out
}

func TestEverySeriesIsPresentAtZeroFromStartUp(t *testing.T) {
	s := samples(t, scrape(t, metrics.New()))
	want := []string{
		"leashd_agent_turns_total",
		"leashd_agent_errors_total",
		"leashd_sessions_active",
	}
	for _, k := range []string{"question", "plan_review", "tool_approval"} {
		want = append(want,
			fmt.Sprintf(`leashd_interactions_pending{kind="%s"}`, k),
			fmt.Sprintf(`leashd_interaction_answer_seconds_count{kind="%s"}`, k),
			fmt.Sprintf(`leashd_interaction_answer_seconds_sum{kind="%s"}`, k),
			fmt.Sprintf(`leashd_interaction_answer_seconds_bucket{kind="%s",le="+Inf"}`, k),
			fmt.Sprintf(`leashd_interaction_answer_seconds_bucket{kind="%s",le="60"}`, k))
		for _, st := range []string{"answered", "rejected", "expired", "cancelled", "interrupted"} {
			want = append(want, fmt.Sprintf(`leashd_interactions_resolved_total{kind="%s",status="%s"}`, k, st))
		}
	}
	for _, c := range []string{"telegram", "slack"} {
		want = append(want,
			fmt.Sprintf(`leashd_outbound_messages_total{connector="%s"}`, c),
			fmt.Sprintf(`leashd_outbound_rate_limited_total{connector="%s"}`, c))
	}
	for _, op := range []string{"requested", "presented", "resolved", "recovered", "interrupt", "session", "file"} {
		want = append(want, fmt.Sprintf(`leashd_store_errors_total{op="%s"}`, op))
	}
	for _, name := range want {
		v, ok := s[name]
		if assert.True(t, ok, "missing %s", name) {
			assert.Equal(t, "0", v, name)
		}
	}
	assert.NotContains(t, s, `leashd_outbound_messages_total{connector="web"}`, "the page has no outbound API: a series that never moves would mislead")
	assert.Contains(t, s, "process_resident_memory_bytes", "process collector for RSS")
	assert.Contains(t, s, "go_goroutines")
}

func TestRuntimeCollectorsCanBeLeftOut(t *testing.T) {
	s := samples(t, scrape(t, metrics.New(metrics.WithoutRuntimeCollectors())))
	assert.NotContains(t, s, "go_goroutines")
	assert.Contains(t, s, "leashd_sessions_active")
}

func TestTwoMetricsDoNotShareState(t *testing.T) {
	a, b := metrics.New(), metrics.New() // a global registry would panic here
	a.Outbound("telegram")
	assert.Equal(t, "1", samples(t, scrape(t, a))[`leashd_outbound_messages_total{connector="telegram"}`])
	assert.Equal(t, "0", samples(t, scrape(t, b))[`leashd_outbound_messages_total{connector="telegram"}`])
}

func TestEngineAndConnectorCounters(t *testing.T) {
	m := metrics.New()
	m.TurnFinished(nil, false)
	m.TurnFinished(nil, true)                                   // the agent's result was an error
	m.TurnFinished(errors.New("exec: claude not found"), false) // could not run
	m.TurnFinished(fmt.Errorf("turn: %w", context.Canceled), false)
	m.SessionsActive(3)
	m.SessionsActive(2)
	for range 5 {
		m.Outbound("telegram")
	}
	m.Outbound("slack")
	m.Outbound("matrix") // a connector not known in advance still counts
	m.RateLimited("telegram")
	connectors.CountOutbound(m, "web")
	m.StoreError("resolved")
	m.StoreError("resolved")

	s := samples(t, scrape(t, m))
	assert.Equal(t, "4", s["leashd_agent_turns_total"])
	assert.Equal(t, "2", s["leashd_agent_errors_total"], "a cancelled turn (/stop) is not an error")
	assert.Equal(t, "2", s["leashd_sessions_active"])
	assert.Equal(t, "5", s[`leashd_outbound_messages_total{connector="telegram"}`])
	assert.Equal(t, "1", s[`leashd_outbound_messages_total{connector="slack"}`])
	assert.Equal(t, "1", s[`leashd_outbound_messages_total{connector="matrix"}`])
	assert.Equal(t, "1", s[`leashd_outbound_messages_total{connector="web"}`])
	assert.Equal(t, "1", s[`leashd_outbound_rate_limited_total{connector="telegram"}`])
	assert.Equal(t, "0", s[`leashd_outbound_rate_limited_total{connector="slack"}`])
	assert.Equal(t, "2", s[`leashd_store_errors_total{op="resolved"}`])
	assert.Equal(t, "0", s[`leashd_store_errors_total{op="session"}`])
}

// logLines reads the JSON log lines written so far.
func logLines(t *testing.T, logs *testenv.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(logs.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		out = append(out, m)
	}
	return out
}

// presenter records what was presented so the test can answer it.
type presenter struct{ asked chan interactions.Interaction }

func (p presenter) Present(_ context.Context, it *interactions.Interaction) (string, error) {
	p.asked <- *it
	return "msg-" + it.ID, nil
}

// value reads one sample through the /metrics handler ("" when absent).
func value(m *metrics.Metrics, series string) string {
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for line := range strings.SplitSeq(rec.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

func pending(m *metrics.Metrics, kind string) string {
	return value(m, `leashd_interactions_pending{kind="`+kind+`"}`)
}

func TestWatchCountsAndLogsEachInteractionOnce(t *testing.T) {
	logs := &testenv.Buffer{}
	m := metrics.New(metrics.WithLogger(slog.New(slog.NewJSONHandler(logs, nil))))
	p := presenter{asked: make(chan interactions.Interaction, 16)}
	coord := interactions.New(interactions.WithPresenter(p), interactions.WithTimeout(time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	wait := m.Watch(ctx, coord)

	type result struct {
		it  interactions.Interaction
		res interactions.Resolution
	}
	results := make(chan result, 16)
	request := func(it interactions.Interaction) {
		go func() {
			it, res, err := coord.Request(context.Background(), it)
			assert.NoError(t, err)
			results <- result{it, res}
		}()
	}
	// A question, a plan review and a tool approval wait at once.
	request(interactions.Interaction{ChatID: "telegram:42", Kind: interactions.KindQuestion, Question: "Which DB?", Options: []interactions.Choice{{Label: "SQLite"}, {Label: "Postgres"}}})
	request(interactions.Interaction{ChatID: "slack:C1:1.2", Kind: interactions.KindPlanReview, Plan: "1. do it"})
	request(interactions.Interaction{ChatID: "web-abc", Kind: interactions.KindToolApproval, ToolName: "Bash"})
	byKind := map[interactions.Kind]interactions.Interaction{}
	for range 3 {
		it := <-p.asked
		byKind[it.Kind] = it
	}
	require.Eventually(t, func() bool {
		return pending(m, "question") == "1" && pending(m, "plan_review") == "1" && pending(m, "tool_approval") == "1"
	}, 5*time.Second, 5*time.Millisecond)

	time.Sleep(20 * time.Millisecond) // a measurable answer time
	_, err := coord.Reply(byKind[interactions.KindQuestion].ID, interactions.Reply{By: "7", Answers: []string{"SQLite"}})
	require.NoError(t, err)
	_, err = coord.Reply(byKind[interactions.KindToolApproval].ID, interactions.Reply{By: "8", Answers: []string{interactions.DecisionDeny}, Text: "no"})
	require.NoError(t, err)
	<-results
	<-results
	// Shutdown interrupts the plan review.
	assert.Len(t, coord.Interrupt("restarting"), 1)
	<-results
	cancel()
	wait() // everything published before is handled

	resolved := func(kind, status string) string {
		return value(m, `leashd_interactions_resolved_total{kind="`+kind+`",status="`+status+`"}`)
	}
	assert.Equal(t, "0", pending(m, "question"))
	assert.Equal(t, "0", pending(m, "plan_review"))
	assert.Equal(t, "0", pending(m, "tool_approval"))
	assert.Equal(t, "1", resolved("question", "answered"))
	assert.Equal(t, "1", resolved("tool_approval", "rejected"))
	assert.Equal(t, "1", resolved("plan_review", "interrupted"))
	assert.Equal(t, "0", resolved("plan_review", "answered"))

	s := samples(t, scrape(t, m))
	assert.Equal(t, "1", s[`leashd_interaction_answer_seconds_count{kind="question"}`])
	assert.Equal(t, "1", s[`leashd_interaction_answer_seconds_count{kind="tool_approval"}`])
	assert.Equal(t, "0", s[`leashd_interaction_answer_seconds_count{kind="plan_review"}`], "an interrupted review is not an answer")
	assert.Equal(t, "1", s[`leashd_interaction_answer_seconds_bucket{kind="question",le="0.5"}`], "answered in about 20ms")
	sum, err := strconv.ParseFloat(s[`leashd_interaction_answer_seconds_sum{kind="question"}`], 64)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, sum, 0.015)

	// Each interaction is logged once when asked and once when resolved.
	assertLoggedOnce(t, logs, byKind)
}

// assertLoggedOnce checks that each of the interactions in byKind was
// logged once when asked and once when resolved: the question answered
// by "7" after about 20ms, the plan review interrupted.
func assertLoggedOnce(t *testing.T, logs *testenv.Buffer, byKind map[interactions.Kind]interactions.Interaction) {
	t.Helper()
	lines := logLines(t, logs)
	require.Len(t, lines, 6)
	asked := map[string]map[string]any{}
	done := map[string]map[string]any{}
	for _, l := range lines {
		id, _ := l["id"].(string)
		require.NotEmpty(t, id, l)
		switch l["msg"] {
		case "interaction asked":
			require.NotContains(t, asked, id)
			asked[id] = l
		case "interaction resolved":
			require.NotContains(t, done, id)
			done[id] = l
		default:
			t.Fatalf("unexpected log line %v", l)
		}
	}
	for kind, it := range byKind {
		a, d := asked[it.ID], done[it.ID]
		require.NotNil(t, a, kind)
		require.NotNil(t, d, kind)
		assert.Equal(t, it.ChatID, a["chat"])
		assert.Equal(t, string(kind), a["kind"])
		assert.Equal(t, it.ChatID, d["chat"])
		assert.Equal(t, string(kind), d["kind"])
		assert.IsType(t, float64(0), d["latency"])
	}
	q := done[byKind[interactions.KindQuestion].ID]
	assert.Equal(t, "answered", q["status"])
	assert.Equal(t, "7", q["by"])
	assert.GreaterOrEqual(t, q["latency"], float64(15*time.Millisecond), "latency in nanoseconds (JSON duration)")
	assert.Equal(t, "interrupted", done[byKind[interactions.KindPlanReview].ID]["status"])
}

func TestWatchWithoutLoggerStillCounts(t *testing.T) {
	m := metrics.New()
	// The asker gives up while the chat cannot show the question (a
	// failed Present alone keeps it pending).
	reqCtx, giveUp := context.WithCancel(context.Background())
	coord := interactions.New(interactions.WithPresenter(interactions.PresenterFunc(func(context.Context, *interactions.Interaction) (string, error) {
		giveUp()
		return "", errors.New("chat gone")
	})))
	ctx, cancel := context.WithCancel(context.Background())
	wait := m.Watch(ctx, coord)
	_, res, err := coord.Request(reqCtx, interactions.Interaction{ChatID: "terminal:1", Kind: interactions.KindQuestion, Question: "?"})
	require.NoError(t, err)
	assert.Equal(t, interactions.StatusCancelled, res.Status)
	cancel()
	wait()
	assert.Equal(t, "1", value(m, `leashd_interactions_resolved_total{kind="question",status="cancelled"}`))
	assert.Equal(t, "0", value(m, `leashd_interactions_pending{kind="question"}`))
	assert.Equal(t, "0", value(m, `leashd_interaction_answer_seconds_count{kind="question"}`))
}

// Many chats asking and answering at once, some expiring, while /metrics is
// scraped: the gauges come back to zero and the counts add up.
func TestWatchUnderConcurrentLoad(t *testing.T) {
	m := metrics.New(metrics.WithoutRuntimeCollectors())
	coord := interactions.New(interactions.WithPresenter(interactions.PresenterFunc(func(context.Context, *interactions.Interaction) (string, error) {
		return "ref", nil
	})), interactions.WithTimeout(50*time.Millisecond))
	ctx, cancel := context.WithCancel(context.Background())
	wait := m.Watch(ctx, coord)
	const chats = 200
	var wg sync.WaitGroup
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				_ = value(m, "leashd_sessions_active")
			}
		}
	}()
	for i := range chats {
		wg.Go(func() {
			chat := fmt.Sprintf("telegram:%d", i)
			if i%2 == 0 { // answered by a tap as soon as it shows
				go func() {
					for start := time.Now(); time.Since(start) < time.Second; {
						if ps := coord.Pending(chat); len(ps) > 0 {
							_, _ = coord.Reply(ps[0].ID, interactions.Reply{By: "u", Answers: []string{interactions.DecisionAllow}})
							return
						}
						time.Sleep(time.Millisecond)
					}
				}()
			}
			_, _, err := coord.Request(context.Background(), interactions.Interaction{ChatID: chat, Kind: interactions.KindToolApproval, ToolName: "Bash"})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	close(stop)
	cancel()
	wait()
	answered, err := strconv.Atoi(value(m, `leashd_interactions_resolved_total{kind="tool_approval",status="answered"}`))
	require.NoError(t, err)
	expired, err := strconv.Atoi(value(m, `leashd_interactions_resolved_total{kind="tool_approval",status="expired"}`))
	require.NoError(t, err)
	assert.Equal(t, chats, answered+expired)
	assert.GreaterOrEqual(t, answered, 1)
	assert.Equal(t, "0", pending(m, "tool_approval"))
	assert.Equal(t, strconv.Itoa(answered), value(m, `leashd_interaction_answer_seconds_count{kind="tool_approval"}`))
}
