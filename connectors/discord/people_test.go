package discord_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/discord"
	"github.com/leashd/leashd/connectors/discord/discordfake"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest"
)

// count is how many messages in channel contain substr.
func (e *env) count(channel, substr string) int {
	n := 0
	for _, m := range e.fake.Messages(channel) {
		if strings.Contains(m.Content, substr) {
			n++
		}
	}
	return n
}

// A stranger's DM gets one answer naming their user ID and the variable
// to set, however often they write; their mention starts no thread, their
// command and their tap on someone's question are refused privately; the
// agent hears nothing of them.
func TestStranger(t *testing.T) {
	e := start(t, envOpt{})
	want := discord.NotAllowedText(stranger)
	assert.Contains(t, want, "Your Discord user ID is 13")
	assert.Contains(t, want, "LEASHD_DISCORD_ALLOWED_USERS")

	e.dm(stranger, "hello")
	reply := e.waitText(dmChan, want)
	assert.NotEmpty(t, reply.ReplyTo, "it answers their message")
	e.dm(stranger, "hello again")
	e.settle()
	assert.Equal(t, 1, e.count(dmChan, want), "one answer, not one per message")

	id, err := e.fake.Post(stranger, guildCh, "do things", true)
	require.NoError(t, err)
	e.waitText(guildCh, want)
	assert.Empty(t, e.fake.ThreadOf(id), "a stranger's mention starts no thread")

	cmd, err := e.fake.Command(stranger, dmChan, "clear", "")
	require.NoError(t, err)
	e.acked(cmd)
	e.waitEphemeral(stranger, want)

	e.dm(dev, "ask")
	q := e.waitComponents(dmChan, "Which database?")
	e.click(stranger, q, "SQLite")
	e.waitEphemeral(stranger, "only allowed users")
	assert.True(t, e.current(q).HasComponents(), "the question still waits")
	assert.Equal(t, []string{"ask"}, e.agent.Prompts())
}

// In a server thread with two approvers and a quorum of 2: an allowed
// user who is no approver cannot approve; the first approver's tap is
// counted ("1 of 2 approvals", buttons kept), a repeat counts once, the
// second's allows it and the message names both; an approver who may not
// prompt is refused a command.
func TestGroupQuorum(t *testing.T) {
	const second = "14"
	e := start(t, envOpt{approvers: []string{lead, second},
		setups: []enginetest.Setup{func(_ *engine.Deps, c *engine.Config) { c.ApprovalQuorum = 2 }}})
	th := e.mention(dev, "tool")
	a := e.waitComponents(th, "The agent wants to run a command")

	e.click(dev, a, "Allow")
	e.waitEphemeral(dev, "only approvers")
	e.click(lead, a, "Allow")
	counted := e.waitMsg(th, "1 of 2", func(m discordfake.Message) bool {
		return m.ID == a.ID && strings.Contains(m.Content, "⏳ **1 of 2 approvals — <@"+lead+">**")
	})
	assert.True(t, counted.HasComponents(), "the buttons stay for the second approver")
	e.click(lead, a, "Allow")
	e.waitEphemeral(lead, discord.AlreadyApprovedText)
	assert.Empty(t, e.agent.Responses())

	_, err := e.fake.Post(lead, th, "/clear", false)
	require.NoError(t, err)
	e.waitText(th, "not prompt the agent or run commands")

	e.click(second, a, "Allow")
	assert.True(t, e.agent.WaitResponses(t, 1)[0].Allow)
	done := e.waitMsg(th, "approved by both", func(m discordfake.Message) bool { return m.ID == a.ID && !m.HasComponents() })
	assert.Contains(t, done.Content, "approved by <@"+lead+">, <@"+second+">")
	e.waitText(th, "tool allow=true")
}

// Members of an allowed role may prompt in the server's channels; the
// same person in a DM, where there are no roles, may not.
func TestAllowedRole(t *testing.T) {
	const member, role = "15", "77"
	e := start(t, envOpt{roles: []string{role}})
	e.fake.SetUser(discordfake.User{ID: member, Name: "mia", Roles: []string{role}})
	th := e.mention(member, "hello")
	e.waitText(th, "echo: hello")
	_, err := e.fake.Post(member, th, "more", false)
	require.NoError(t, err)
	e.waitText(th, "echo: more")
	e.dm(member, "in private")
	e.waitText(dmChan, discord.NotAllowedText(member))
	assert.Equal(t, []string{"hello", "more"}, e.agent.Prompts())
}

// The chat commands are registered as application commands at start;
// one run in a DM is echoed and answered there; in a server channel with
// no leashd thread it is refused privately, and after a mention it
// applies to the latest thread.
func TestCommands(t *testing.T) {
	e := start(t, envOpt{})
	require.True(t, e.fake.WaitFor(wait, func() bool { return len(e.fake.Commands()) > 0 }))
	for _, name := range []string{`"name":"clear"`, `"name":"stop"`, `"name":"plan"`, `"name":"text"`} {
		assert.Contains(t, string(e.fake.Commands()), name)
	}

	id, err := e.fake.Command(dev, dmChan, "status", "")
	require.NoError(t, err)
	e.acked(id)
	e.waitText(dmChan, "/status")
	e.waitText(dmChan, "Mode")

	id, err = e.fake.Command(dev, guildCh, "plan", "")
	require.NoError(t, err)
	e.acked(id)
	e.waitEphemeral(dev, "No leashd thread here yet")

	th := e.mention(dev, "hi")
	e.waitText(th, "echo: hi")
	id, err = e.fake.Command(dev, guildCh, "plan", "draft a schema")
	require.NoError(t, err)
	e.acked(id)
	e.waitText(guildCh, "/plan draft a schema → <#"+th+">")
	e.waitText(th, "Mode: plan")
	e.waitPrompt("draft a schema")
}

// Without the Message Content intent enabled in the Developer Portal, or
// with a token the Gateway refuses, Run stops with what to do, and the
// connector is not ready.
func TestGatewayRefusals(t *testing.T) {
	for name, setup := range map[string]func(*discordfake.Server){
		"Message Content Intent": func(f *discordfake.Server) { f.DisableMessageContent() },
	} {
		f := discordfake.New(token)
		setup(f)
		c := discord.New(token, discord.WithAPIURL(f.URL()))
		err := c.Run(t.Context(), nil)
		require.Error(t, err)
		assert.Contains(t, err.Error(), name)
		assert.Error(t, c.Ready())
		assert.NotContains(t, err.Error(), token)
		f.Close()
	}
	f := discordfake.New("another-token")
	defer f.Close()
	err := discord.New(token, discord.WithAPIURL(f.URL())).Run(t.Context(), nil)
	require.ErrorContains(t, err, "checking the bot token")
	assert.NotContains(t, err.Error(), token)
}

// A thread leashd started before a restart, with nothing pending in it:
// leashd recognises it as its own (Discord names the bot its owner), so
// a reply without a mention is a prompt and a command run there applies
// there; chatter in the channel without a mention is not.
func TestOwnThreadAfterRestart(t *testing.T) {
	const old = "700"
	e := start(t, envOpt{before: func(f *discordfake.Server) { f.Thread(old, guildCh) }})
	_, err := e.fake.Post(dev, old, "where were we?", false)
	require.NoError(t, err)
	e.waitText(old, "echo: where were we?")
	id, err := e.fake.Command(dev, old, "status", "")
	require.NoError(t, err)
	e.acked(id)
	e.waitText(old, "/status")
	e.waitText(old, "Mode")

	_, err = e.fake.Post(dev, guildCh, "just chatting", false)
	require.NoError(t, err)
	e.settle()
	assert.Equal(t, []string{"where were we?"}, e.agent.Prompts(), "channel chatter is not for the bot")
}
