package slack_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/connectors/slack"
	"github.com/leashd/leashd/connectors/slack/slackfake"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/interactions"
)

// Secrets the tests check never appear in logs or errors.
const (
	botToken      = "xoxb-111-SECRETBOTTOKEN"
	appToken      = "xapp-1-SECRETAPPTOKEN"
	signingSecret = "8f742231b10e8888abcd99yyyzzz85a5"
)

// People: U1 may prompt and answer questions, U2 is an approver only, U3 a
// stranger.
const (
	allowedUser  = "U1"
	approverUser = "U2"
	stranger     = "U3"
)

const wait = 10 * time.Second

type stats struct{ out, limited atomic.Int64 }

func (s *stats) Outbound(string)    { s.out.Add(1) }
func (s *stats) RateLimited(string) { s.limited.Add(1) }

// scriptAgent is the shared scripted agent with turns named by their
// prompt (see turn).
type scriptAgent struct {
	*enginetest.ScriptAgent
	mu     sync.Mutex
	stream []string // text chunks a "stream" turn says
}

func newAgent() *scriptAgent {
	a := &scriptAgent{}
	a.ScriptAgent = &enginetest.ScriptAgent{Turn: a.turn}
	return a
}

// Questions and a plan the scripted turns use.
var (
	dbQuestion = `{"questions":[{"question":"Which database?","header":"DB","options":[{"label":"Postgres","description":"a server"},{"label":"SQLite","description":"a file"}],"multiSelect":false}]}`
	featQ      = `{"questions":[{"question":"Which features?","header":"Features","options":[{"label":"Auth"},{"label":"Search"},{"label":"Billing"}],"multiSelect":true}]}`
	shortPlan  = "# Plan\n1. Add **tests**\n2. Ship it"
)

// turn does what the prompt's first word names: ask, multi, plan, tool,
// flagged, raw or stream; it echoes any other prompt.
func (a *scriptAgent) turn(ctx context.Context, _ *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
	ask := func(tool string, input string) agent.PermissionResponse {
		return h.Permission(ctx, agent.PermissionRequest{ToolName: tool, Input: json.RawMessage(input), ToolUseID: "toolu_1"})
	}
	word, arg, _ := strings.Cut(prompt, " ")
	switch word {
	case "ask":
		r := ask("AskUserQuestion", dbQuestion)
		return agent.Result{Text: "asked: " + string(r.UpdatedInput) + r.Message}, nil
	case "multi":
		r := ask("AskUserQuestion", featQ)
		return agent.Result{Text: "asked: " + string(r.UpdatedInput) + r.Message}, nil
	case "plan":
		plan := shortPlan
		if arg != "" {
			plan = arg
		}
		if arg == "long" {
			plan = longPlan()
		}
		b, _ := json.Marshal(map[string]string{"plan": plan})
		r := ask("ExitPlanMode", string(b))
		return agent.Result{Text: fmt.Sprintf("plan allow=%v %s", r.Allow, r.Message)}, nil
	case "tool":
		r := ask("Bash", `{"command":"rm -rf build && make"}`)
		return agent.Result{Text: fmt.Sprintf("tool allow=%v %s", r.Allow, r.Message)}, nil
	case "flagged": // a request that must be read, defaults to no and keeps no session rule
		r := h.Permission(ctx, agent.PermissionRequest{
			ToolName: "mcp__github__create_issue", Input: json.RawMessage(`{"title":"Leak <keys>","repo":"acme/site"}`), ToolUseID: "toolu_1",
			Reason: "Posts to a public repo", MCPServer: "github", MCPSource: "user",
			DefaultToNo: true, NoSessionAllow: true, RequiresDetails: true,
		})
		return agent.Result{Text: fmt.Sprintf("flagged allow=%v", r.Allow)}, nil
	case "raw": // "raw <tool> <input JSON>": ask permission for exactly that
		tool, input, _ := strings.Cut(arg, " ")
		r := ask(tool, input)
		return agent.Result{Text: fmt.Sprintf("%s allow=%v", tool, r.Allow)}, nil
	case "stream":
		a.mu.Lock()
		chunks := append([]string(nil), a.stream...)
		a.mu.Unlock()
		for _, c := range chunks {
			h.Text(c)
			time.Sleep(time.Millisecond)
		}
		return agent.Result{Text: strings.Join(chunks, "")}, nil
	}
	return agent.Result{Text: "echo: " + prompt}, nil
}

func longPlan() string {
	var b strings.Builder
	b.WriteString("# A long plan\n")
	for i := 0; b.Len() < 160_000; i++ {
		fmt.Fprintf(&b, "%d. Step %d: change `file%d.go` so that **it** does <the> thing & more %s\n", i, i, i, strings.Repeat("x", 60))
	}
	return b.String()
}

// env is a running leashd (real engine, real coordinator, real Slack
// connector with the real slack-go client) against slackfake.
type env struct {
	t      testing.TB
	fake   *slackfake.Server
	conn   *slack.Connector
	agent  *scriptAgent
	coord  *interactions.Coordinator
	logs   *testenv.Buffer
	stats  *stats
	http   *httptest.Server // HTTP mode only
	runErr chan error
	cancel context.CancelFunc
	evSeq  atomic.Int64
	tsSeq  atomic.Int64
}

type envOpt struct {
	httpMode  bool
	approvers []string
	opts      []slack.Option
	timeout   time.Duration
	recovery  engine.Store
	agent     agent.Agent             // default: the scripted agent
	before    func(*slackfake.Server) // runs before leashd starts
	engine    []enginetest.Setup      // more engine settings (a working directory)
}

func start(t testing.TB, o envOpt) *env {
	t.Helper()
	e := &env{t: t, fake: slackfake.New(botToken, appToken), agent: newAgent(), logs: &testenv.Buffer{}, stats: &stats{}, runErr: make(chan error, 1)}
	e.tsSeq.Store(1800000000)
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := []slack.Option{
		slack.WithAPIURL(strings.TrimSuffix(e.fake.APIURL(), "/")), // the missing "/" is added
		slack.WithAllowedUsers([]string{allowedUser}),
		slack.WithLogger(log),
		slack.WithStats(e.stats),
		slack.WithStreamInterval(50 * time.Millisecond),
	}
	if o.approvers != nil {
		opts = append(opts, slack.WithApprovers(o.approvers))
	} else {
		opts = append(opts, slack.WithApprovers([]string{approverUser}))
	}
	if o.httpMode {
		opts = append(opts, slack.WithSigningSecret(signingSecret))
	} else {
		opts = append(opts, slack.WithAppToken(appToken))
	}
	e.conn = slack.New(botToken, append(opts, o.opts...)...)
	copts := []interactions.Opt{interactions.WithLogger(log)}
	if o.timeout > 0 {
		copts = append(copts, interactions.WithTimeout(o.timeout))
	}
	e.coord = interactions.New(copts...)
	eopts := []enginetest.Setup{func(d *engine.Deps, _ *engine.Config) { d.Log = log }, func(_ *engine.Deps, c *engine.Config) { c.CloseTimeout = 2 * time.Second }}
	if o.recovery != nil {
		eopts = append(eopts, func(d *engine.Deps, _ *engine.Config) { d.Store = o.recovery })
	}
	eopts = append(eopts, o.engine...)
	var ag agent.Agent = e.agent
	if o.agent != nil {
		ag = o.agent
	}
	eng := enginetest.New(ag, e.coord, eopts...)
	eng.AddConnector(e.conn)
	if o.httpMode {
		mux := http.NewServeMux()
		e.conn.Mount(mux)
		e.http = httptest.NewServer(mux)
	}
	if o.before != nil {
		o.before(e.fake)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() { e.runErr <- eng.Run(ctx) }()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s\ncalls: %+v", e.logs.String(), e.fake.Calls(""))
		}
		cancel()
		select {
		case err := <-e.runErr:
			require.NoError(t, err)
		case <-time.After(wait):
			t.Error("engine did not stop")
		}
		if e.http != nil {
			e.http.Close()
		}
		for _, r := range e.fake.Rejected() { // every message leashd sent must be one Slack takes
			t.Errorf("Slack would refuse the blocks of this %s: %v\n%s", r.Method, r.Errors, r.Blocks)
		}
		e.fake.Close()
		for _, s := range []string{botToken, appToken, signingSecret} {
			require.NotContains(t, e.logs.String(), s, "a secret was logged")
		}
	})
	require.Eventually(t, func() bool { return e.conn.Ready() == nil }, wait, 5*time.Millisecond, "connector never became ready: %v\n%s\n%+v", e.conn.Ready(), e.logs.String(), e.fake.Calls(""))
	if !o.httpMode {
		require.True(t, e.fake.WaitFor(wait, func() bool { return e.fake.Connected() > 0 }))
	}
	return e
}

func (e *env) nextTS() string {
	return strconv.FormatInt(e.tsSeq.Add(1), 10) + ".000100"
}

// push delivers an Events API event and returns its event_id; in Socket
// Mode it also checks the acknowledgement arrived within Slack's 3 s.
func (e *env) push(inner map[string]any) string {
	e.t.Helper()
	id := fmt.Sprintf("Ev%d", e.evSeq.Add(1))
	e.deliver("events_api", slackfake.EventCallback(id, inner), 0)
	return id
}

func (e *env) deliver(typ string, payload any, retry int) {
	e.t.Helper()
	if e.http != nil {
		var body []byte
		path := slack.EventsPath
		switch typ {
		case "interactive":
			raw, _ := json.Marshal(payload)
			body = []byte(url.Values{"payload": {string(raw)}}.Encode())
			path = slack.InteractionsPath
		case "slash_commands":
			body = []byte(payload.(url.Values).Encode())
			path = slack.CommandsPath
		default:
			body, _ = json.Marshal(payload)
		}
		hdr := http.Header{}
		if retry > 0 {
			hdr.Set("X-Slack-Retry-Num", strconv.Itoa(retry))
		}
		start := time.Now()
		resp := e.signedPost(path, body, time.Now(), signingSecret, hdr)
		require.Equal(e.t, http.StatusOK, resp.StatusCode)
		require.Less(e.t, time.Since(start), ackDeadline, "Slack waits 3 s for the answer to %s", path)
		return
	}
	if typ == "slash_commands" {
		payload = slackfake.FormMap(payload.(url.Values))
	}
	env, err := e.fake.Push(typ, payload, retry)
	require.NoError(e.t, err)
	require.True(e.t, e.fake.WaitFor(wait, func() bool { _, ok := e.fake.Acked(env); return ok }), "envelope %s not acknowledged", env)
	// Slack retries (and finally disables the app) when an acknowledgement
	// takes over 3 s: every envelope must be acknowledged within that,
	// before its work (which may wait for a person) is done.
	d, _ := e.fake.AckDelay(env)
	require.Less(e.t, d, ackDeadline, "%s envelope %s acknowledged after %v", typ, env, d)
}

// ackDeadline is how long Slack waits for an acknowledgement.
const ackDeadline = 3 * time.Second

// signedPost posts body to the HTTP mode server signed with secret at ts.
func (e *env) signedPost(path string, body []byte, ts time.Time, secret string, extra http.Header) *http.Response {
	e.t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.http.URL+path, bytes.NewReader(body))
	require.NoError(e.t, err)
	for k, v := range signHeaders(body, ts, secret) {
		req.Header[k] = v
	}
	if path == slack.EventsPath {
		req.Header.Set("Content-Type", "application/json")
	} else {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range extra {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	resp.Body.Close()
	return resp
}

// dm sends a direct message from user and returns its ts.
func (e *env) dm(user, text string) string {
	ts := e.nextTS()
	e.push(slackfake.MessageEvent("D1", "im", user, ts, "", text))
	return ts
}

// mention starts (or continues) a channel thread by mentioning the bot,
// delivered as Slack does: app_mention and message. It returns the ts.
func (e *env) mention(channel, user, thread, text string) string {
	ts := e.nextTS()
	full := "<@" + slackfake.BotUserID + "> " + text
	e.push(slackfake.MentionEvent(channel, user, ts, thread, full))
	e.push(slackfake.MessageEvent(channel, "channel", user, ts, thread, full))
	return ts
}

// waitMsg waits for a message in channel satisfying ok and returns it.
func (e *env) waitMsg(channel, what string, ok func(slackfake.Message) bool) slackfake.Message {
	e.t.Helper()
	var found slackfake.Message
	if !e.fake.WaitFor(wait, func() bool {
		for _, m := range e.fake.Messages(channel) {
			if ok(m) {
				found = m
				return true
			}
		}
		return false
	}) {
		e.t.Fatalf("timed out waiting for %s in %s; messages: %s", what, channel, e.dump(channel))
	}
	return found
}

func (e *env) dump(channel string) string {
	var b strings.Builder
	for _, m := range e.fake.Messages(channel) {
		fmt.Fprintf(&b, "\n[%s thread=%s edits=%d] %q %s", m.TS, m.ThreadTS, m.Edits, m.Text, slackfake.Texts(m.Blocks))
	}
	return b.String()
}

// waitText waits for a message whose text or blocks contain substr.
func (e *env) waitText(channel, substr string) slackfake.Message {
	e.t.Helper()
	return e.waitMsg(channel, fmt.Sprintf("%q", substr), func(m slackfake.Message) bool {
		return strings.Contains(m.Text, substr) || strings.Contains(slackfake.Texts(m.Blocks), substr)
	})
}

// waitButtons waits for a message with buttons whose blocks contain substr.
func (e *env) waitButtons(channel, substr string) slackfake.Message {
	e.t.Helper()
	return e.waitMsg(channel, "buttons with "+substr, func(m slackfake.Message) bool {
		return len(slackfake.Buttons(m.Blocks)) > 0 && strings.Contains(slackfake.Texts(m.Blocks), substr)
	})
}

// current returns the message as it is now.
func (e *env) current(m slackfake.Message) slackfake.Message {
	for _, x := range e.fake.Messages(m.Channel) {
		if x.TS == m.TS {
			return x
		}
	}
	e.t.Fatalf("message %s vanished", m.TS)
	return m
}

// tap taps the button whose text is label on message m as it is now, or
// as it was (a client may still show old buttons).
func (e *env) tap(user string, m slackfake.Message, label string) {
	e.t.Helper()
	for _, b := range slices.Concat(slackfake.Buttons(e.current(m).Blocks), slackfake.Buttons(m.Blocks), slackfake.Buttons(m.Posted)) {
		if b.Text == label {
			e.tapRaw(user, m, b.ActionID, b.Value)
			return
		}
	}
	e.t.Fatalf("no button %q on message %s: %+v", label, m.TS, slackfake.Buttons(e.current(m).Blocks))
}

func (e *env) tapRaw(user string, m slackfake.Message, actionID, value string) {
	e.t.Helper()
	e.deliver("interactive", slackfake.BlockAction(user, m, actionID, value), 0)
}

// waitEphemeral waits for an ephemeral message to user containing substr.
func (e *env) waitEphemeral(user, substr string) slackfake.Ephemeral {
	e.t.Helper()
	var found slackfake.Ephemeral
	if !e.fake.WaitFor(wait, func() bool {
		for _, x := range e.fake.Ephemerals() {
			if x.User == user && strings.Contains(x.Text, substr) {
				found = x
				return true
			}
		}
		return false
	}) {
		e.t.Fatalf("no ephemeral %q to %s; have %+v", substr, user, e.fake.Ephemerals())
	}
	return found
}

func (e *env) ephemeralsTo(user string) int {
	n := 0
	for _, x := range e.fake.Ephemerals() {
		if x.User == user {
			n++
		}
	}
	return n
}

// settle waits until no call reached the fake for a while, so a test can
// assert that something did NOT happen.
func (e *env) settle() {
	n := -1
	for range 100 {
		time.Sleep(100 * time.Millisecond)
		c := len(e.fake.Calls(""))
		if c == n {
			return
		}
		n = c
	}
}

var _ connectors.Stats = (*stats)(nil)

func slogTo(w *testenv.Buffer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// signHeaders signs body as Slack does (v0 HMAC-SHA256 over
// "v0:<timestamp>:<body>").
func signHeaders(body []byte, at time.Time, secret string) http.Header {
	stamp := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + stamp + ":"))
	mac.Write(body)
	h := http.Header{}
	h.Set("X-Slack-Request-Timestamp", stamp)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	return h
}
