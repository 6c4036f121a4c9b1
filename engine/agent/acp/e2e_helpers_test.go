package acp

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/telegram"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
	"github.com/leashd/leashd/interactions"
)

// me is the allowed Telegram user, in a private chat with the bot.
const me = int64(42)

// waitLimit bounds waiting for the real agent; it is never measured.
const waitLimit = 60 * time.Second

// stack is the real ACP agent (claude-agent-acp against the fake Messages
// API) behind the real engine and coordinator, shown in Telegram (the
// connector against tgfake).
type stack struct {
	t     testing.TB
	api   *fakeapi.Server
	fake  *tgfake.Server
	conn  *telegram.Connector
	coord *interactions.Coordinator
	eng   *engine.Engine
	dir   string
	home  string
	logs  *testenv.Buffer
	stop  func()

	pids string // the wrapper's log of agent pids, one a start

	mu         sync.Mutex
	script     []fakeapi.Step
	unscripted int
}

// suggestion reports whether a model call is the adapter's prompt
// suggestion (it asks for one after each turn; ACP has no field for it),
// which is answered with nothing and takes no scripted reply.
func suggestion(r *fakeapi.Request) bool {
	return r.HasUserText("Reply with ONLY the suggestion")
}

// reply appends model replies to the script; prompt suggestions skip it.
func (s *stack) reply(rs ...fakeapi.Reply) {
	for _, r := range rs {
		s.then(func(*fakeapi.Request) fakeapi.Reply { return r })
	}
}

// then appends a step that decides its reply from the request.
func (s *stack) then(f fakeapi.Step) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, f)
}

func (s *stack) next(r *fakeapi.Request) fakeapi.Reply {
	if suggestion(r) {
		return fakeapi.Text("")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.script) == 0 {
		s.unscripted++
		return fakeapi.Text("(no scripted reply left)")
	}
	step := s.script[0]
	s.script = s.script[1:]
	return step(r)
}

// unscriptedCalls counts model calls that found the script empty.
func (s *stack) unscriptedCalls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.unscripted
}

func newStack(t *testing.T, engineOpts ...enginetest.Setup) *stack {
	t.Helper()
	real := testenv.ACPAgent(t)
	// A wrapper that logs each start's pid, then becomes the agent.
	wrapDir := t.TempDir()
	bin := filepath.Join(wrapDir, "agent")
	pids := filepath.Join(wrapDir, "pids")
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho $$ >> "+strconv.Quote(pids)+"\nexec "+strconv.Quote(real)+" \"$@\"\n"), 0o755))
	api := fakeapi.New(t)
	home := t.TempDir()
	logs := &testenv.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ag := New([]string{bin}, WithEnv(append(api.Env(home), "IS_SANDBOX=1")...), WithLogger(log), WithCloseTimeout(3*time.Second))
	s := buildStack(t, ag, logs, log, nil, engineOpts...)
	s.api, s.home, s.pids = api, home, pids
	api.Otherwise(s.next)
	return s
}

// buildStack runs agent behind the engine and the Telegram connector.
func buildStack(t *testing.T, ag agent.Agent, logs *testenv.Buffer, log *slog.Logger, coordOpts []interactions.Opt, engineOpts ...enginetest.Setup) *stack {
	t.Helper()
	dir := t.TempDir()
	fake := tgfake.New()
	t.Cleanup(fake.Close)
	conn := telegram.New(fake.Token(),
		telegram.WithAPIURL(fake.URL()), telegram.WithAllowedUsers([]int64{me}), telegram.WithLogger(log),
		telegram.WithLimits(telegram.Limits{}), telegram.WithPollTimeout(time.Second),
		telegram.WithStreamInterval(10*time.Millisecond), telegram.WithRetryDelay(20*time.Millisecond))
	coord := interactions.New(coordOpts...)
	eng := enginetest.New(ag, coord, append([]enginetest.Setup{func(d *engine.Deps, _ *engine.Config) { d.Log = log }, func(_ *engine.Deps, c *engine.Config) { c.WorkDir = dir }, func(_ *engine.Deps, c *engine.Config) { c.CloseTimeout = 15 * time.Second }}, engineOpts...)...)
	eng.AddConnector(conn)
	s := &stack{t: t, fake: fake, conn: conn, coord: coord, eng: eng, dir: dir, logs: logs}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- eng.Run(ctx) }()
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				require.NoError(t, err)
			case <-time.After(40 * time.Second):
				t.Error("engine did not stop")
			}
		})
	}
	t.Cleanup(func() {
		s.stop()
		if t.Failed() {
			calls := ""
			if s.api != nil {
				calls = s.calls()
			}
			t.Logf("chat:\n%s\nmodel calls:\n%s\nlogs:\n%s", s.dump(), calls, lastN(logs.String(), 12000))
		}
	})
	s.waitFor("the connector to be ready", func() bool { return conn.Ready() == nil })
	return s
}

func lastN(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func (s *stack) waitFor(what string, cond func() bool) {
	s.t.Helper()
	if !s.fake.Wait(waitLimit, cond) {
		s.t.Fatalf("timed out waiting for %s", what)
	}
}

func (s *stack) say(text string) { s.fake.Text(me, me, text) }

// botMessage waits for a bot message containing substr.
func (s *stack) botMessage(substr string) tgfake.Message {
	s.t.Helper()
	var found tgfake.Message
	s.waitFor(fmt.Sprintf("a bot message containing %q", substr), func() bool {
		for _, m := range s.fake.BotMessages(me) {
			if strings.Contains(m.Text, substr) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// waitMessage waits until message id satisfies cond.
func (s *stack) waitMessage(id int, what string, cond func(tgfake.Message) bool) tgfake.Message {
	s.t.Helper()
	var m tgfake.Message
	s.waitFor(what, func() bool {
		for _, x := range s.fake.Messages(me) {
			if x.ID == id {
				m = x
				return cond(x)
			}
		}
		return false
	})
	return m
}

// tap taps a button of a message.
func (s *stack) tap(msg tgfake.Message, button string) {
	s.t.Helper()
	_, err := s.fake.TapButton(me, me, msg.ID, button)
	require.NoError(s.t, err, "buttons: %q", msg.Buttons())
}

// starts lists the pids of the agent processes started.
func (s *stack) starts() []int {
	b, err := os.ReadFile(s.pids)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(s.t, err)
	var out []int
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.Atoi(f)
		require.NoError(s.t, err)
		out = append(out, n)
	}
	return out
}

// calls describes the model calls: the last message's blocks, and the reply.
func (s *stack) calls() string {
	var b strings.Builder
	for i, c := range s.api.Calls() {
		last := ""
		if n := len(c.Messages); n > 0 {
			for _, bl := range c.Messages[n-1].Content {
				last += fmt.Sprintf(" [%s %s%s]", bl.Type, lastN(bl.Text, 200), lastN(bl.ResultText(), 200))
			}
		}
		fmt.Fprintf(&b, "%d: %d msgs, last:%s → text=%q tools=%d\n", i+1, len(c.Messages), last, c.Reply.Text, len(c.Reply.Tools))
	}
	return b.String()
}

func (s *stack) dump() string {
	var b strings.Builder
	for _, m := range s.fake.Messages(me) {
		fmt.Fprintf(&b, "#%d bot=%v buttons=%q: %s\n", m.ID, m.FromBot, m.Buttons(), m.Text)
	}
	return b.String()
}

// toolResult waits for a model call carrying the tool_result of id and
// returns its text.
func (s *stack) toolResult(id string) (string, bool) {
	s.t.Helper()
	var out fakeapi.Block
	s.waitFor("the tool_result of "+id, func() bool {
		for _, c := range s.api.Calls() {
			if b, ok := c.ToolResult(id); ok {
				out = b
				return true
			}
		}
		return false
	})
	return out.ResultText(), out.IsError
}

// userTextCall waits for a model call whose user messages hold text.
func (s *stack) userTextCall(text string) *fakeapi.Request {
	s.t.Helper()
	var found *fakeapi.Request
	s.waitFor("a model call with the user text "+text, func() bool {
		for _, c := range s.api.Calls() {
			for _, u := range c.UserTexts() {
				if strings.Contains(u, text) {
					found = c
					return true
				}
			}
		}
		return false
	})
	return found
}
