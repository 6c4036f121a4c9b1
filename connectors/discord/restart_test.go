package discord_test

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/discord/discordfake"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
)

// A tool approval pending in a thread when leashd stops: its message says
// leashd restarted and keeps its buttons. After the restart (a new store,
// connector and engine on the same SQLite file, the same Discord) the old
// button still works: the approver's tap reaches the agent as a recovered
// answer and the message shows it; the thread is leashd's again, so a
// reply in it without a mention is a prompt.
func TestRestartWithAPendingApproval(t *testing.T) {
	fake, run := restarts(t)
	e1 := run()
	th := e1.mention(dev, "tool")
	a := e1.waitComponents(th, "The agent wants to run a command")
	e1.stop()
	m := e1.current(a)
	assert.Contains(t, m.Content, "leashd restarted")
	assert.True(t, m.HasComponents(), "the buttons stay: they still work")

	e2 := run()
	e2.click(lead, a, "Allow")
	p := e2.waitPrompt("allowed")
	assert.True(t, strings.HasPrefix(p, agent.RecoveredPromptPrefix), "a recovered answer: %q", p)
	done := e2.waitMsg(th, "allowed", func(m discordfake.Message) bool { return m.ID == a.ID && !m.HasComponents() })
	assert.Contains(t, done.Content, "✅ **Allow** — <@"+lead+">")

	e2.click(lead, a, "Allow") // a second tap on the old button
	e2.waitEphemeral(lead, "This question has expired.")
	_, err := fake.Post(dev, th, "and now?", false)
	require.NoError(t, err)
	e2.waitPrompt("and now?")
	assert.Len(t, e2.agent.Prompts(), 2)
}

// restarts gives a fake Discord and a way to start leashd on it, each
// run with a new store, connector and engine on the same SQLite file.
func restarts(t *testing.T) (*discordfake.Server, func() *env) {
	path := filepath.Join(t.TempDir(), "leashd.db")
	fake := discordfake.New(token)
	t.Cleanup(fake.Close)
	return fake, func() *env {
		st, err := sqlite.Open(context.Background(), path)
		require.NoError(t, err)
		t.Cleanup(func() { _ = st.Close() })
		return start(t, envOpt{fake: fake, approvers: []string{lead},
			coordOpts: []interactions.Opt{interactions.WithJournal(st)},
			setups:    []enginetest.Setup{func(d *engine.Deps, _ *engine.Config) { d.Store = st }}})
	}
}

// A multi-select question pending when leashd stops keeps its select
// menu; after the restart picking options in it answers with them, once.
func TestRestartWithAPendingMultiSelect(t *testing.T) {
	_, run := restarts(t)
	e1 := run()
	e1.dm(dev, "multi")
	q := e1.waitComponents(dmChan, "Which features?")
	e1.stop()
	assert.Contains(t, e1.current(q).Content, "leashd restarted")
	assert.Equal(t, "Auth | Search | Billing", e1.current(q).Labels())

	e2 := run()
	e2.pick(dev, q, "Search", "Billing")
	p := e2.waitPrompt(`"Search, Billing"`)
	assert.True(t, strings.HasPrefix(p, agent.RecoveredPromptPrefix), "a recovered answer: %q", p)
	done := e2.waitMsg(dmChan, "answered", func(m discordfake.Message) bool { return m.ID == q.ID && !m.HasComponents() })
	assert.Contains(t, done.Content, "✅ **Answer:** Search, Billing")
	assert.Len(t, e2.agent.Prompts(), 1)
}

// The Gateway connection drops mid-flow: the approval tapped meanwhile
// and a message sent meanwhile wait in the session; discordgo resumes it
// (no new IDENTIFY), they arrive, the tap is acknowledged within 3 s of
// its delivery and the agent goes on.
func TestGatewayResumeMidFlow(t *testing.T) {
	e := start(t, envOpt{})
	e.dm(dev, "tool")
	a := e.waitComponents(dmChan, "The agent wants to run a command")
	e.fake.Drop() // from here until the RESUME, events wait in the session
	e.click(dev, a, "Allow")
	assert.True(t, e.agent.WaitResponses(t, 1)[0].Allow)
	e.waitMsg(dmChan, "allowed", func(m discordfake.Message) bool { return m.ID == a.ID && !m.HasComponents() })
	e.waitText(dmChan, "tool allow=true")
	assert.GreaterOrEqual(t, e.fake.Resumes(), 1)
	assert.Equal(t, 1, e.fake.Identifies(), "resumed, not identified again")
	e.dm(dev, "still there?")
	e.waitText(dmChan, "echo: still there?")
	require.Eventually(t, func() bool { return e.conn.Ready() == nil }, wait, 5*time.Millisecond)
}

// A storm of 429s — scripted ones on posts and edits, a global one, and a
// bucket of 4 requests per 400 ms that a long streamed turn exceeds —
// loses nothing: every line and the approval get through, the tap is
// acknowledged in time, no request is sent before its retry_after has
// passed, and each 429 is counted.
func TestRateLimitStorm(t *testing.T) {
	e := start(t, envOpt{})
	// From here on leashd's requests follow one another (one chat); the
	// commands' registration at start is done first, so no request is in
	// flight when a 429 is answered.
	require.True(t, e.fake.WaitFor(wait, func() bool { return len(e.fake.Commands()) > 0 }))
	e.settle()
	e.fake.SetBucket(4, 400*time.Millisecond)
	e.fake.RateLimit("", 300*time.Millisecond, true)
	for range 5 {
		e.fake.RateLimit("POST channels/{id}/messages", 150*time.Millisecond, false)
		e.fake.RateLimit("PATCH channels/{id}/messages/{id}", 100*time.Millisecond, false)
	}
	e.dm(dev, "stream")
	e.waitText(dmChan, "-# Done")
	var all strings.Builder
	for _, m := range e.fake.Messages(dmChan) {
		all.WriteString(m.Content)
	}
	for i := range 30 {
		assert.Contains(t, all.String(), "line "+itoa(i)+":")
	}
	e.dm(dev, "tool")
	a := e.waitComponents(dmChan, "The agent wants to run a command")
	e.click(dev, a, "Allow")
	assert.True(t, e.agent.WaitResponses(t, 1)[0].Allow)
	e.waitText(dmChan, "tool allow=true")

	assert.GreaterOrEqual(t, e.fake.Served429(), 11)
	assert.Empty(t, e.fake.Violations(), "a request went out before its retry_after passed")
	assert.GreaterOrEqual(t, e.stats.limited.Load(), int64(11), "each 429 counted")
}

func itoa(i int) string { return strconv.Itoa(i) }
