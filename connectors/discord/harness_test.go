package discord_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/connectors/discord"
	"github.com/leashd/leashd/connectors/discord/discordfake"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/interactions"
)

// token is the bot token; the tests check it never appears in the logs.
const token = "MTAwMDAw.SECRET-DISCORD-TOKEN.xyz"

// People: dev may prompt and answer questions, lead is an approver,
// stranger is nobody. Channels: a DM and a server channel.
const (
	dev      = "11"
	lead     = "12"
	stranger = "13"
	dmChan   = "500"
	guildCh  = "600"
)

const wait = 15 * time.Second

type stats struct{ out, limited atomic.Int64 }

func (s *stats) Outbound(string)    { s.out.Add(1) }
func (s *stats) RateLimited(string) { s.limited.Add(1) }

// Questions and a plan the scripted turns use.
var (
	dbQuestion = `{"questions":[{"question":"Which database?","header":"DB","options":[{"label":"Postgres","description":"a server"},{"label":"SQLite","description":"a file"}],"multiSelect":false}]}`
	featQ      = `{"questions":[{"question":"Which features?","header":"Features","options":[{"label":"Auth"},{"label":"Search"},{"label":"Billing"}],"multiSelect":true}]}`
	shortPlan  = "# Plan\n1. Add **tests**\n2. Ship it"
	long       = strings.Repeat("echo step && ", 400) + "echo END" // a command of 5,208 characters
)

// turn does what the prompt's first word names: ask, multi, plan, tool or
// stream; it echoes any other prompt.
func turn(ctx context.Context, _ *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
	ask := func(tool, input string) agent.PermissionResponse {
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
		if arg == "long" {
			plan = longPlan()
		}
		b, _ := json.Marshal(map[string]string{"plan": plan})
		r := ask("ExitPlanMode", string(b))
		return agent.Result{Text: fmt.Sprintf("plan allow=%v %s", r.Allow, r.Message)}, nil
	case "tool":
		r := ask("Bash", `{"command":"rm -rf build && make"}`)
		return agent.Result{Text: fmt.Sprintf("tool allow=%v %s", r.Allow, r.Message)}, nil
	case "edit":
		r := ask("Edit", `{"file_path":"main.go","old_string":"return 1","new_string":"return 2"}`)
		return agent.Result{Text: fmt.Sprintf("edit allow=%v", r.Allow)}, nil
	case "longbash":
		b, _ := json.Marshal(map[string]string{"command": long})
		r := ask("Bash", string(b))
		return agent.Result{Text: fmt.Sprintf("tool allow=%v", r.Allow)}, nil
	case "stream":
		for i := range 30 {
			h.Text(fmt.Sprintf("line %d: %s\n", i, strings.Repeat("words ", 20)))
			time.Sleep(10 * time.Millisecond) // a few edits between posts
		}
		return agent.Result{Text: "streamed"}, nil
	}
	h.Text("echo: " + prompt)
	return agent.Result{Text: "echo: " + prompt}, nil
}

func longPlan() string {
	var b strings.Builder
	b.WriteString("# A long plan\n")
	for i := 0; b.Len() < 9000; i++ {
		fmt.Fprintf(&b, "%d. Step %d: change `file%d.go` so that **it** does the thing %s\n", i, i, i, strings.Repeat("x", 60))
	}
	return b.String()
}

// env is a running leashd (real engine, real coordinator, the Discord
// connector with the real discordgo client) against discordfake.
type env struct {
	t       testing.TB
	fake    *discordfake.Server
	conn    *discord.Connector
	eng     *engine.Engine
	agent   *enginetest.ScriptAgent
	logs    *testenv.Buffer
	stats   *stats
	runErr  chan error
	cancel  context.CancelFunc
	stopped bool
}

type envOpt struct {
	approvers []string
	roles     []string
	setups    []enginetest.Setup
	before    func(*discordfake.Server) // runs before leashd starts
	fake      *discordfake.Server       // shared across runs (a restart); the test closes it
	coordOpts []interactions.Opt
}

func start(t testing.TB, o envOpt) *env {
	t.Helper()
	fake, own := o.fake, o.fake == nil
	if own {
		fake = discordfake.New(token)
	}
	fake.GuildChannel(guildCh)
	e := &env{t: t, fake: fake, agent: &enginetest.ScriptAgent{Turn: turn}, logs: &testenv.Buffer{}, stats: &stats{}, runErr: make(chan error, 1)}
	log := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e.conn = discord.New(token,
		discord.WithAPIURL(strings.TrimSuffix(e.fake.URL(), "/")), // the missing "/" is added
		discord.WithAllowedUsers([]string{dev}),
		discord.WithAllowedRoles(o.roles),
		discord.WithApprovers(o.approvers),
		discord.WithLogger(log),
		discord.WithStats(e.stats),
		discord.WithStreamInterval(50*time.Millisecond),
		discord.WithCommands(commands()),
	)
	coord := interactions.New(append([]interactions.Opt{interactions.WithLogger(log)}, o.coordOpts...)...)
	setups := append([]enginetest.Setup{
		func(d *engine.Deps, c *engine.Config) { d.Log = log; c.CloseTimeout = 3 * time.Second },
	}, o.setups...)
	eng := enginetest.New(e.agent, coord, setups...)
	eng.AddConnector(e.conn)
	e.eng = eng
	if o.before != nil {
		o.before(e.fake)
	}
	identified := fake.Identifies()
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() { e.runErr <- eng.Run(ctx) }()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs:\n%s", e.logs.String())
		}
		e.stop()
		for _, r := range e.fake.Rejected() { // everything leashd sent must be what Discord takes
			t.Errorf("Discord would refuse %s: %v", r.Call, r.Errors)
		}
		if own {
			e.fake.Close()
		}
		require.NotContains(t, e.logs.String(), token, "the token was logged")
	})
	require.Eventually(t, func() bool { return e.conn.Ready() == nil && e.fake.Identifies() > identified }, wait, 5*time.Millisecond,
		"never connected: %v\n%s", e.conn.Ready(), e.logs.String())
	return e
}

// stop stops leashd (once) and waits for it.
func (e *env) stop() {
	e.t.Helper()
	if e.stopped {
		return
	}
	e.stopped = true
	e.cancel()
	select {
	case err := <-e.runErr:
		require.NoError(e.t, err)
	case <-time.After(wait):
		e.t.Error("engine did not stop")
	}
}

func commands() []connectors.Command {
	out := make([]connectors.Command, len(engine.Commands))
	for i, c := range engine.Commands {
		out[i] = connectors.Command{Name: c.Name, Help: c.Description}
	}
	return out
}

// waitMsg waits for a message in channel satisfying ok and returns it.
func (e *env) waitMsg(channel, what string, ok func(discordfake.Message) bool) discordfake.Message {
	e.t.Helper()
	var found discordfake.Message
	if !e.fake.WaitFor(wait, func() bool {
		for _, m := range e.fake.Messages(channel) {
			if ok(m) {
				found = m
				return true
			}
		}
		return false
	}) {
		e.t.Fatalf("timed out waiting for %s in %s; messages:%s", what, channel, e.dump(channel))
	}
	return found
}

func (e *env) dump(channel string) string {
	var b strings.Builder
	for _, m := range e.fake.Messages(channel) {
		fmt.Fprintf(&b, "\n[%s in %s edits=%d] %q {%s}", m.ID, m.ChannelID, m.Edits, m.Content, m.Labels())
	}
	return b.String()
}

// waitText waits for a message in channel whose content contains substr.
func (e *env) waitText(channel, substr string) discordfake.Message {
	e.t.Helper()
	return e.waitMsg(channel, fmt.Sprintf("%q", substr), func(m discordfake.Message) bool { return strings.Contains(m.Content, substr) })
}

// waitComponents waits for a message with components whose content
// contains substr.
func (e *env) waitComponents(channel, substr string) discordfake.Message {
	e.t.Helper()
	return e.waitMsg(channel, "components with "+substr, func(m discordfake.Message) bool {
		return m.HasComponents() && strings.Contains(m.Content, substr)
	})
}

// current is the message as it is now.
func (e *env) current(m discordfake.Message) discordfake.Message {
	now, ok := e.fake.Message(m.ID)
	require.True(e.t, ok, "message %s vanished", m.ID)
	return now
}

// click taps the button labelled label on m as it was posted (a client
// may still show old buttons), and checks the tap was acknowledged
// within Discord's 3 s.
func (e *env) click(user string, m discordfake.Message, label string) {
	e.t.Helper()
	for _, b := range append(discordfake.Buttons(e.current(m).Components), discordfake.Buttons(m.Posted)...) {
		if b.Label == label {
			id, err := e.fake.Click(user, m, b.CustomID)
			require.NoError(e.t, err)
			e.acked(id)
			return
		}
	}
	e.t.Fatalf("no button %q on message %s: %s", label, m.ID, e.current(m).Labels())
}

// pick chooses the options labelled labels in m's select menu.
func (e *env) pick(user string, m discordfake.Message, labels ...string) {
	e.t.Helper()
	menus := discordfake.Menus(e.current(m).Components)
	require.Len(e.t, menus, 1, "one select menu on %s", m.ID)
	var values []string
	for _, l := range labels {
		for _, o := range menus[0].Options {
			if o.Label == l {
				values = append(values, o.Value)
			}
		}
	}
	require.Len(e.t, values, len(labels), "options %q in %+v", labels, menus[0].Options)
	id, err := e.fake.Select(user, m, menus[0].CustomID, values...)
	require.NoError(e.t, err)
	e.acked(id)
}

// acked waits for the interaction's response and checks it came within
// Discord's 3 s of its dispatch.
func (e *env) acked(id string) {
	e.t.Helper()
	var it discordfake.Interaction
	require.True(e.t, e.fake.WaitFor(wait, func() bool {
		for _, x := range e.fake.Interactions() {
			if x.ID == id && !x.Responded.IsZero() {
				it = x
				return true
			}
		}
		return false
	}), "interaction %s never answered", id)
	require.Less(e.t, it.Responded.Sub(it.Sent), discordfake.AckDeadline, "answered after Discord's deadline")
	require.Zero(e.t, it.Late)
}

// waitEphemeral waits for an ephemeral message to user containing substr.
func (e *env) waitEphemeral(user, substr string) {
	e.t.Helper()
	require.True(e.t, e.fake.WaitFor(wait, func() bool {
		for _, x := range e.fake.Ephemerals() {
			if x.User == user && strings.Contains(x.Content, substr) {
				return true
			}
		}
		return false
	}), "no ephemeral %q to %s; have %+v", substr, user, e.fake.Ephemerals())
}

// waitPrompt waits for a prompt the agent got containing substr.
func (e *env) waitPrompt(substr string) string {
	e.t.Helper()
	var got string
	require.Eventually(e.t, func() bool {
		for _, p := range e.agent.Prompts() {
			if strings.Contains(p, substr) {
				got = p
				return true
			}
		}
		return false
	}, wait, 10*time.Millisecond, "no prompt with %q; prompts: %q", substr, e.agent.Prompts())
	return got
}

// dm sends a DM from user.
func (e *env) dm(user, text string) {
	e.t.Helper()
	_, err := e.fake.DM(user, dmChan, text)
	require.NoError(e.t, err)
}

// mention mentions the bot in the server channel and returns the thread
// leashd started for it.
func (e *env) mention(user, text string) string {
	e.t.Helper()
	id, err := e.fake.Post(user, guildCh, text, true)
	require.NoError(e.t, err)
	var thread string
	require.True(e.t, e.fake.WaitFor(wait, func() bool { thread = e.fake.ThreadOf(id); return thread != "" }), "no thread started")
	return thread
}

// settle waits until no request reached the fake for a while, so a test
// can assert that something did NOT happen.
func (e *env) settle() {
	n := -1
	for range 100 {
		time.Sleep(100 * time.Millisecond)
		c := len(e.fake.Calls())
		if c == n {
			return
		}
		n = c
	}
}
