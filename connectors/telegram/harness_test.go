package telegram_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/connectors/telegram"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/interactions"
)

// waitLimit only bounds waiting; it is never what a test measures.
const waitLimit = 10 * time.Second

// ask makes the agent ask for permission; the scripted agent records the
// response.
func ask(ctx context.Context, h agent.TurnHandler, tool string, input any) agent.PermissionResponse {
	raw, _ := json.Marshal(input)
	return h.Permission(ctx, agent.PermissionRequest{ToolName: tool, Input: raw, ToolUseID: "toolu_1"})
}

// turnFunc is a scripted turn; by default the agent echoes the prompt.
type turnFunc func(ctx context.Context, prompt string, h agent.TurnHandler) (agent.Result, error)

// scriptAgent returns the scripted agent running turn; an interrupt
// cancels the turn's ctx.
func scriptAgent(turn turnFunc) *enginetest.ScriptAgent {
	a := &enginetest.ScriptAgent{CancelOnInterrupt: true}
	if turn != nil {
		a.Turn = func(ctx context.Context, _ *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
			return turn(ctx, prompt, h)
		}
	}
	return a
}

type harness struct {
	t     testing.TB
	fake  *tgfake.Server
	conn  *telegram.Connector
	coord *interactions.Coordinator
	eng   *engine.Engine
	agent *enginetest.ScriptAgent
	logs  *testenv.Buffer
	stop  func() // stops the engine (and the connector) and waits
}

type setup struct {
	allowed    []int64
	fakeOpts   []tgfake.Option
	connOpts   []telegram.Option
	coordOpts  []interactions.Opt
	turn       turnFunc
	noRun      bool
	limits     *telegram.Limits
	fakeServer *tgfake.Server
	engineOpts []enginetest.Setup
	agent      agent.Agent // instead of the scripted agent
}

// fastLimits leave rate limiting to the tests that are about it.
var fastLimits = telegram.Limits{}

func newHarness(t testing.TB, s setup) *harness {
	t.Helper()
	fake := s.fakeServer
	if fake == nil {
		fake = tgfake.New(s.fakeOpts...)
		t.Cleanup(fake.Close)
	}
	logs := &testenv.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	limits := fastLimits
	if s.limits != nil {
		limits = *s.limits
	}
	allowed := s.allowed
	if allowed == nil {
		allowed = []int64{42}
	}
	opts := append([]telegram.Option{
		telegram.WithAPIURL(fake.URL()),
		telegram.WithAllowedUsers(allowed),
		telegram.WithLogger(logger),
		telegram.WithLimits(limits),
		telegram.WithPollTimeout(time.Second),
		telegram.WithStreamInterval(10 * time.Millisecond),
		telegram.WithRetryDelay(20 * time.Millisecond),
		telegram.WithCommands(chatCommands()),
	}, s.connOpts...)
	conn := telegram.New(fake.Token(), opts...)
	script := scriptAgent(s.turn)
	coord := interactions.New(s.coordOpts...)
	var ag agent.Agent = script
	if s.agent != nil {
		ag = s.agent
	}
	eng := enginetest.New(ag, coord, append([]enginetest.Setup{func(d *engine.Deps, _ *engine.Config) { d.Log = logger }, func(_ *engine.Deps, c *engine.Config) { c.WorkDir = t.TempDir() }}, s.engineOpts...)...)
	eng.AddConnector(conn)
	h := &harness{t: t, fake: fake, conn: conn, coord: coord, eng: eng, agent: script, logs: logs}
	t.Cleanup(func() {
		// Whatever happened, the bot token never reached the logs.
		_, secret, _ := strings.Cut(fake.Token(), ":")
		if strings.Contains(logs.String(), secret) {
			t.Errorf("the bot token appears in the logs:\n%s", logs.String())
		}
	})
	if !s.noRun {
		h.run()
	}
	return h
}

func (h *harness) run() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.eng.Run(ctx) }()
	var once sync.Once
	h.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				require.NoError(h.t, err)
			case <-time.After(20 * time.Second):
				h.t.Error("engine did not stop")
			}
		})
	}
	h.t.Cleanup(h.stop)
	h.waitReady()
}

func (h *harness) waitReady() {
	h.t.Helper()
	h.waitFor("the connector to be ready", func() bool { return h.conn.Ready() == nil })
}

func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	if !h.fake.Wait(waitLimit, cond) {
		h.t.Fatalf("timed out waiting for %s\nchat 42:\n%s\nlogs:\n%s", what, h.dump(42), h.logs.String())
	}
}

// botMessage waits for a bot message in chat containing substr and
// returns it.
func (h *harness) botMessage(chat int64, substr string) tgfake.Message {
	h.t.Helper()
	var found tgfake.Message
	h.waitFor(fmt.Sprintf("a bot message containing %q in chat %d", substr, chat), func() bool {
		for _, m := range h.fake.BotMessages(chat) {
			if strings.Contains(m.Text, substr) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// message returns the current state of a message.
func (h *harness) message(chat int64, id int) tgfake.Message {
	for _, m := range h.fake.Messages(chat) {
		if m.ID == id {
			return m
		}
	}
	h.t.Fatalf("chat %d has no message %d", chat, id)
	return tgfake.Message{}
}

// waitMessage waits until message id in chat satisfies cond.
func (h *harness) waitMessage(chat int64, id int, what string, cond func(tgfake.Message) bool) tgfake.Message {
	h.t.Helper()
	var m tgfake.Message
	h.waitFor(what, func() bool {
		m = h.message(chat, id)
		return cond(m)
	})
	return m
}

func (h *harness) tap(chat, user int64, msg int, button string) string {
	h.t.Helper()
	q, err := h.fake.TapButton(chat, user, msg, button)
	require.NoError(h.t, err)
	return q
}

// answer waits for the bot's answer to a callback query.
func (h *harness) answer(q string) tgfake.CallbackAnswer {
	h.t.Helper()
	var a tgfake.CallbackAnswer
	h.waitFor("the answer to callback query "+q, func() bool {
		var ok bool
		a, ok = h.fake.CallbackAnswer(q)
		return ok
	})
	return a
}

// response waits for the agent's n-th (1-based) permission response.
func (h *harness) response(n int) agent.PermissionResponse {
	h.t.Helper()
	h.waitFor(fmt.Sprintf("permission response #%d", n), func() bool { return len(h.agent.Responses()) >= n })
	return h.agent.Responses()[n-1]
}

func (h *harness) prompts() []string { return h.agent.Prompts() }

func (h *harness) dump(chat int64) string {
	var b strings.Builder
	for _, m := range h.fake.Messages(chat) {
		fmt.Fprintf(&b, "#%d bot=%v buttons=%q: %s\n", m.ID, m.FromBot, m.Buttons(), m.Text)
	}
	return b.String()
}

// chatCommands are the engine's chat commands as cmd/leashd passes them.
func chatCommands() []connectors.Command {
	out := make([]connectors.Command, len(engine.Commands))
	for i, c := range engine.Commands {
		out[i] = connectors.Command{Name: c.Name, Help: c.Description}
	}
	return out
}
