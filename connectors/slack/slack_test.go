package slack_test

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/agent"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/slack"
	"github.com/leashd/leashd/connectors/slack/slackfake"
)

func answers(t *testing.T, r agent.PermissionResponse) map[string]string {
	t.Helper()
	var in struct {
		Answers map[string]string `json:"answers"`
	}
	require.NoError(t, json.Unmarshal(r.UpdatedInput, &in))
	return in.Answers
}

func TestQuestionInDMAnsweredByTap(t *testing.T) {
	e := start(t, envOpt{})
	e.dm(allowedUser, "ask")
	q := e.waitButtons("D1", "Which database?")
	assert.Empty(t, q.ThreadTS, "a DM is one chat: no threads")
	texts := slackfake.Texts(q.Blocks)
	assert.Contains(t, texts, "*DB*")
	assert.Contains(t, texts, "*SQLite* — a file", "descriptions shown as context")
	assert.Contains(t, texts, "Reply here to answer in your own words.")
	btns := slackfake.Buttons(q.Blocks)
	require.Len(t, btns, 2)
	seen := map[string]bool{}
	for _, b := range btns {
		assert.False(t, seen[b.ActionID], "action_id unique within the message")
		seen[b.ActionID] = true
		assert.NotContains(t, b.Value, "SQLite", "values carry a key, never the label")
	}

	e.tap(allowedUser, q, "SQLite")
	r := e.agent.WaitResponses(t, 1)
	require.True(t, r[0].Allow)
	assert.Equal(t, map[string]string{"Which database?": "SQLite"}, answers(t, r[0]))

	upd := e.waitMsg("D1", "the answered question", func(m slackfake.Message) bool { return m.TS == q.TS && m.Edits > 0 })
	assert.Contains(t, slackfake.Texts(upd.Blocks), "✅ *Answer:* SQLite — <@U1>")
	assert.Empty(t, slackfake.Buttons(upd.Blocks), "buttons removed after the answer")
	e.waitText("D1", "Done")
}

func TestMultiSelectTogglesThenDone(t *testing.T) {
	e := start(t, envOpt{})
	e.dm(allowedUser, "multi")
	q := e.waitButtons("D1", "Which features?")
	assert.Len(t, slackfake.Buttons(q.Blocks), 4, "three options and Done")

	e.tap(allowedUser, q, "☐ Auth")
	e.waitMsg("D1", "Auth ticked", func(m slackfake.Message) bool {
		return m.TS == q.TS && hasButton(m, "✓ Auth")
	})
	e.tap(allowedUser, q, "☐ Search")
	e.waitMsg("D1", "Search ticked", func(m slackfake.Message) bool {
		return m.TS == q.TS && hasButton(m, "✓ Search") && hasButton(m, "✓ Auth")
	})
	e.tap(allowedUser, q, "✓ Auth") // untick
	e.waitMsg("D1", "Auth unticked", func(m slackfake.Message) bool {
		return m.TS == q.TS && hasButton(m, "☐ Auth") && hasButton(m, "✓ Search")
	})
	assert.Empty(t, e.agent.Responses(), "toggles do not answer")
	e.tap(allowedUser, q, "☐ Billing")
	e.waitMsg("D1", "Billing ticked", func(m slackfake.Message) bool { return m.TS == q.TS && hasButton(m, "✓ Billing") })
	e.tap(allowedUser, q, "Done")

	r := e.agent.WaitResponses(t, 1)
	assert.Equal(t, map[string]string{"Which features?": "Search, Billing"}, answers(t, r[0]))
	upd := e.waitMsg("D1", "resolved", func(m slackfake.Message) bool { return m.TS == q.TS && len(slackfake.Buttons(m.Blocks)) == 0 })
	assert.Contains(t, slackfake.Texts(upd.Blocks), "Search, Billing — <@U1>")
}

func hasButton(m slackfake.Message, text string) bool {
	for _, b := range slackfake.Buttons(m.Blocks) {
		if b.Text == text {
			return true
		}
	}
	return false
}

func TestChannelThreadPlanOnlyApproversDecide(t *testing.T) {
	e := start(t, envOpt{})
	root := e.mention("C1", allowedUser, "", "plan")
	plan := e.waitText("C1", "Add *tests*")
	assert.Equal(t, root, plan.ThreadTS, "the session's messages go into the thread the mention started")
	btn := e.waitButtons("C1", "Plan review")
	assert.Equal(t, root, btn.ThreadTS)
	assert.Contains(t, slackfake.Texts(btn.Blocks), "Only approvers can decide.")
	require.Len(t, e.agent.Prompts(), 1, "the mention, delivered twice, is one prompt")
	assert.Equal(t, "plan", e.agent.Prompts()[0])

	// The allowed user who asked is not an approver: refused privately.
	e.tap(allowedUser, btn, "Approve, auto-accept edits")
	eph := e.waitEphemeral(allowedUser, "only approvers can decide plan reviews, tool approvals and approvals")
	assert.Equal(t, "C1", eph.Channel)
	assert.Equal(t, root, eph.ThreadTS)
	// A stranger too.
	e.tap(stranger, btn, "Approve, review edits")
	e.waitEphemeral(stranger, "You are not allowed to answer this")
	e.settle()
	assert.Empty(t, e.agent.Responses(), "refused taps change nothing")
	assert.Equal(t, 0, e.current(btn).Edits)

	e.tap(approverUser, btn, "Approve, auto-accept edits")
	r := e.agent.WaitResponses(t, 1)
	require.True(t, r[0].Allow)
	require.Len(t, r[0].UpdatedPermissions, 1)
	assert.Equal(t, agent.ModeAcceptEdits, r[0].UpdatedPermissions[0].Mode)
	upd := e.waitMsg("C1", "decided plan", func(m slackfake.Message) bool { return m.TS == btn.TS && m.Edits > 0 })
	assert.Contains(t, slackfake.Texts(upd.Blocks), "✅ *Approve, auto-accept edits* — <@U2>")
	assert.Empty(t, slackfake.Buttons(upd.Blocks))
	done := e.waitText("C1", "Done")
	assert.Equal(t, root, done.ThreadTS)
}

func TestThreadRepliesAreTheSessionsMessages(t *testing.T) {
	e := start(t, envOpt{})
	root := e.mention("C1", allowedUser, "", "hello")
	e.waitText("C1", "echo: hello")
	// A reply in the thread without a mention is the chat's next message.
	e.push(slackfake.MessageEvent("C1", "channel", allowedUser, e.nextTS(), root, "again"))
	m := e.waitText("C1", "echo: again")
	assert.Equal(t, root, m.ThreadTS)
	// A command typed in the thread (Slack's composer needs a space before
	// the slash) is the engine's command for this session.
	e.push(slackfake.MessageEvent("C1", "channel", allowedUser, e.nextTS(), root, " /bogus"))
	cmd := e.waitText("C1", "Unknown command /bogus")
	assert.Equal(t, root, cmd.ThreadTS)
	// Channel chatter and other threads are not for the bot.
	e.push(slackfake.MessageEvent("C1", "channel", allowedUser, e.nextTS(), "", "lunch?"))
	e.push(slackfake.MessageEvent("C1", "channel", allowedUser, e.nextTS(), "1700000000.000001", "other thread"))
	e.settle()
	assert.Equal(t, []string{"hello", "again"}, e.agent.Prompts())
}

func TestToolApprovalDeniedByTypedReason(t *testing.T) {
	e := start(t, envOpt{approvers: []string{}}) // a solo user: the approvers default to the allowed users
	e.dm(allowedUser, "tool")
	q := e.waitButtons("D1", "Tool approval")
	texts := slackfake.Texts(q.Blocks)
	assert.Contains(t, texts, "The agent wants to run a command")
	assert.Contains(t, texts, "rm -rf build &amp;&amp; make", "the command, escaped, in a code block")
	var labels []string
	for _, b := range slackfake.Buttons(q.Blocks) {
		labels = append(labels, b.Text)
	}
	assert.Equal(t, []string{"Allow", "Allow for this session", "Deny"}, labels)

	e.dm(allowedUser, "not in prod please")
	r := e.agent.WaitResponses(t, 1)
	assert.False(t, r[0].Allow)
	assert.Contains(t, r[0].Message, "not in prod please")
	e.waitText("D1", "Response received.")
	upd := e.waitMsg("D1", "denied", func(m slackfake.Message) bool { return m.TS == q.TS && m.Edits > 0 })
	assert.Contains(t, slackfake.Texts(upd.Blocks), "❌ *Deny* — <@U1>: not in prod please")
	assert.Equal(t, []string{"tool"}, e.agent.Prompts(), "the typed reason is not a prompt")
}

func TestToolAllowForSessionInDMBySoloUser(t *testing.T) {
	// No approvers configured: they default to the allowed users, so a
	// solo user decides in their own DM.
	e := start(t, envOpt{approvers: []string{}})
	e.dm(allowedUser, "tool")
	q := e.waitButtons("D1", "Tool approval")
	e.tap(allowedUser, q, "Allow for this session")
	r := e.agent.WaitResponses(t, 1)
	require.True(t, r[0].Allow)
	require.Len(t, r[0].UpdatedPermissions, 1)
	assert.Equal(t, "session", r[0].UpdatedPermissions[0].Destination)
	e.waitText("D1", "✅ *Allow for this session* — <@U1>")
}

// With approvers configured, an allowed user who is not one cannot decide
// plan reviews or tool approvals in their own DM either: otherwise they
// could approve their own commands by DMing the bot.
func TestDMNonApproverCannotDecide(t *testing.T) {
	e := start(t, envOpt{}) // U1 allowed, U2 the approver
	e.dm(allowedUser, "tool")
	q := e.waitButtons("D1", "Tool approval")
	assert.Contains(t, slackfake.Texts(q.Blocks), "Reply here to deny with a reason. Only approvers can decide.")
	e.tap(allowedUser, q, "Allow")
	eph := e.waitEphemeral(allowedUser, "You are not allowed to answer this: only approvers can decide plan reviews, tool approvals and approvals.")
	assert.Equal(t, "D1", eph.Channel)
	e.settle()
	assert.Empty(t, e.agent.Responses(), "the refused tap answers nothing")
	assert.Equal(t, 0, e.current(q).Edits, "the approval message is unchanged")
	assert.Len(t, slackfake.Buttons(e.current(q).Blocks), 3, "its buttons still wait for an approver")
	e.tap(approverUser, q, "Deny")
	r := e.agent.WaitResponses(t, 1)
	assert.False(t, r[0].Allow)
	e.waitText("D1", "❌ *Deny* — <@U2>")
	e.waitText("D1", "tool allow=false")

	// A plan review in the DM: the allowed user's typed text is not taken
	// as adjust feedback (nor as a prompt); it stays pending.
	e.dm(allowedUser, "plan")
	btn := e.waitButtons("D1", "Plan review")
	e.dm(allowedUser, "skip the tests, just ship")
	refused := func() int {
		n := 0
		for _, m := range e.fake.Messages("D1") {
			if strings.Contains(m.Text, "Your answer was not accepted: not allowed to answer this: only approvers can decide plan reviews, tool approvals and approvals") {
				n++
			}
		}
		return n
	}
	require.True(t, e.fake.WaitFor(wait, func() bool { return refused() == 1 }), "the typed text is refused with the reason: %s", e.dump("D1"))
	e.settle()
	assert.Len(t, e.agent.Responses(), 1, "the plan review got no answer")
	assert.Equal(t, []string{"tool", "plan"}, e.agent.Prompts(), "the typed text is not a prompt either")
	assert.Equal(t, 0, e.current(btn).Edits)
	e.tap(approverUser, btn, "Adjust")
	e.waitMsg("D1", "the adjust prompt", func(m slackfake.Message) bool {
		return m.TS == btn.TS && strings.Contains(slackfake.Texts(m.Blocks), "*Adjust* chosen")
	})
	e.dm(allowedUser, "still me")
	require.True(t, e.fake.WaitFor(wait, func() bool { return refused() == 2 }), "refused again: %s", e.dump("D1"))
	e.settle()
	assert.Len(t, e.agent.Responses(), 1, "the allowed user cannot give the adjust feedback")
	e.dm(approverUser, "split step 2")
	r = e.agent.WaitResponses(t, 2)
	assert.False(t, r[1].Allow)
	assert.Equal(t, "split step 2", r[1].Message)
}

func TestPlanAdjustThenFeedbackByApprover(t *testing.T) {
	e := start(t, envOpt{})
	root := e.mention("C1", allowedUser, "", "plan")
	btn := e.waitButtons("C1", "Plan review")
	e.tap(approverUser, btn, "Adjust")
	e.waitMsg("C1", "the adjust prompt", func(m slackfake.Message) bool {
		return m.TS == btn.TS && strings.Contains(slackfake.Texts(m.Blocks), "*Adjust* chosen: reply in this thread")
	})
	// An approver who is not an allowed user may give the feedback…
	e.push(slackfake.MessageEvent("C1", "channel", approverUser, e.nextTS(), root, "split step 2"))
	r := e.agent.WaitResponses(t, 1)
	assert.False(t, r[0].Allow)
	assert.Equal(t, "split step 2", r[0].Message)
	e.waitText("C1", "❌ *Adjust* — <@U2>: split step 2")
	// …but not prompt the agent.
	e.push(slackfake.MessageEvent("C1", "channel", approverUser, e.nextTS(), root, "now do more"))
	e.waitEphemeral(approverUser, "not prompt the agent")
	e.settle()
	assert.Equal(t, []string{"plan"}, e.agent.Prompts())
}

func TestStaleForgedAndDuplicateTaps(t *testing.T) {
	e := start(t, envOpt{})
	e.dm(allowedUser, "ask")
	q := e.waitButtons("D1", "Which database?")
	btns := slackfake.Buttons(q.Blocks)

	// Forged: action_id and value disagree; an unknown interaction.
	e.tapRaw(allowedUser, q, btns[0].ActionID, btns[1].Value)
	e.waitEphemeral(allowedUser, "This question has expired.")
	e.tapRaw(allowedUser, q, "leashd:zzzzzzzz:0", "zzzzzzzz:0")
	e.fake.WaitFor(wait, func() bool { return e.ephemeralsTo(allowedUser) >= 2 })
	// A tap on a message in another channel than the interaction's.
	other := q
	other.Channel = "D9"
	e.tapRaw(allowedUser, other, btns[0].ActionID, btns[0].Value)
	e.fake.WaitFor(wait, func() bool { return e.ephemeralsTo(allowedUser) >= 3 })
	e.settle()
	assert.Empty(t, e.agent.Responses())

	// Two taps racing: one answer; the other is told it expired.
	var wg sync.WaitGroup
	for _, label := range []string{"Postgres", "SQLite"} {
		wg.Go(func() { e.tap(allowedUser, q, label) })
	}
	wg.Wait()
	r := e.agent.WaitResponses(t, 1)
	e.fake.WaitFor(wait, func() bool { return e.ephemeralsTo(allowedUser) >= 4 })
	e.settle()
	assert.Len(t, e.agent.Responses(), 1)
	got := answers(t, r[0])["Which database?"]
	assert.Contains(t, []string{"Postgres", "SQLite"}, got)
	for _, x := range e.fake.Ephemerals() {
		assert.Equal(t, "This question has expired.", x.Text)
	}
	// A late tap after the answer.
	e.tap(allowedUser, q, "Postgres")
	e.fake.WaitFor(wait, func() bool { return e.ephemeralsTo(allowedUser) >= 5 })
	e.settle()
	assert.Len(t, e.agent.Responses(), 1)
}

func TestExpiredQuestionShowsExpired(t *testing.T) {
	e := start(t, envOpt{timeout: 300 * time.Millisecond})
	e.dm(allowedUser, "ask")
	q := e.waitText("D1", "Which database?") // maybe already expired
	upd := e.waitMsg("D1", "expired", func(m slackfake.Message) bool { return m.TS == q.TS && m.Edits > 0 })
	assert.Contains(t, slackfake.Texts(upd.Blocks), "⌛ *Expired*")
	assert.Empty(t, slackfake.Buttons(upd.Blocks))
	e.tap(allowedUser, q, "SQLite") // the old buttons, as a client may still show them
	e.waitEphemeral(allowedUser, "This question has expired.")
}

func TestRetriedEventsAndDoubleDeliveryDeduped(t *testing.T) {
	e := start(t, envOpt{})
	ts := e.nextTS()
	ev := slackfake.EventCallback("EvRetry", slackfake.MessageEvent("D1", "im", allowedUser, ts, "", "once"))
	e.deliver("events_api", ev, 0)
	e.deliver("events_api", ev, 1) // Slack's retry of the same event
	e.deliver("events_api", ev, 2)
	// The same message again under another event_id (as app_mention and
	// message deliver it) is still one message.
	e.push(slackfake.MessageEvent("D1", "im", allowedUser, ts, "", "once"))
	e.waitText("D1", "echo: once")
	e.settle()
	assert.Equal(t, []string{"once"}, e.agent.Prompts())
}

func TestStrangersAndBotsIgnored(t *testing.T) {
	e := start(t, envOpt{})
	e.dm(stranger, "hi")
	eph := e.waitEphemeral(stranger, "You are not allowed to use this bot")
	assert.Equal(t, "D1", eph.Channel)
	e.dm(stranger, "hello?") // told once, not on every message
	e.mention("C1", stranger, "", "do things")
	require.True(t, e.fake.WaitFor(wait, func() bool { return e.ephemeralsTo(stranger) == 2 }))
	for _, x := range e.fake.Ephemerals() {
		if x.Channel == "C1" {
			assert.Empty(t, x.ThreadTS, "a refused mention starts no thread")
			assert.Contains(t, x.Text, "LEASHD_SLACK_ALLOWED_USERS")
		}
	}
	// The bot's own posts and other bots' echo back as events.
	own := slackfake.MessageEvent("D1", "im", slackfake.BotUserID, e.nextTS(), "", "echo: x")
	e.push(own)
	bot := slackfake.MessageEvent("D1", "im", "U9", e.nextTS(), "", "beep")
	bot["bot_id"] = "B9"
	e.push(bot)
	edited := slackfake.MessageEvent("D1", "im", allowedUser, e.nextTS(), "", "edited")
	edited["subtype"] = "message_changed"
	e.push(edited)
	e.settle()
	assert.Empty(t, e.agent.Prompts())
	assert.Equal(t, 2, e.ephemeralsTo(stranger), "one note per chat")
	assert.Empty(t, e.fake.Messages(""), "nothing posted for strangers or bots")
}

func TestRateLimitHonoured(t *testing.T) {
	e := start(t, envOpt{})
	e.fake.RateLimit("chat.postMessage", 1)
	e.dm(allowedUser, "ask")
	e.waitButtons("D1", "Which database?")
	calls := e.fake.Calls("chat.postMessage")
	require.GreaterOrEqual(t, len(calls), 2)
	assert.Equal(t, 429, calls[0].Status)
	assert.Equal(t, 200, calls[1].Status)
	assert.GreaterOrEqual(t, calls[1].At.Sub(calls[0].At), time.Second, "waited for Retry-After")
	assert.Equal(t, int64(1), e.stats.limited.Load())
	assert.Eventually(t, func() bool { return e.stats.out.Load() > 0 }, wait, 5*time.Millisecond, "sent messages counted")
}

func TestLongPlanSplitUnderLimits(t *testing.T) {
	e := start(t, envOpt{approvers: []string{}})
	e.dm(allowedUser, "plan long")
	btn := e.waitButtons("D1", "Plan review")
	var planMsgs []slackfake.Message
	for _, m := range e.fake.Messages("D1") {
		if m.TS != btn.TS {
			planMsgs = append(planMsgs, m)
		}
	}
	require.GreaterOrEqual(t, len(planMsgs), 2, "160k characters need more than one message of 50 sections")
	var all strings.Builder
	for _, m := range planMsgs {
		var blocks []struct {
			Type string `json:"type"`
			Text struct {
				Text string `json:"text"`
			} `json:"text"`
		}
		require.NoError(t, json.Unmarshal(m.Blocks, &blocks))
		assert.LessOrEqual(t, len(blocks), slack.MaxBlocks)
		for _, b := range blocks {
			assert.Equal(t, "section", b.Type)
			assert.LessOrEqual(t, utf8.RuneCountInString(b.Text.Text), slack.MaxSection)
			all.WriteString(b.Text.Text + "\n")
		}
	}
	got := all.String()
	for _, step := range []string{"Step 0:", "Step 1000:", "&lt;the&gt; thing &amp; more"} {
		assert.Contains(t, got, step)
	}
	// The last step made it: nothing lost at the end.
	var last int
	for i := 0; ; i++ {
		if !strings.Contains(got, "Step "+itoa(i)+":") {
			last = i - 1
			break
		}
	}
	assert.Contains(t, longPlan(), "Step "+itoa(last)+":")
	assert.NotContains(t, longPlan(), "Step "+itoa(last+1)+":")
	// With no approvers configured they default to the allowed users: the
	// DM's allowed user decides.
	e.tap(allowedUser, btn, "Approve, review edits")
	r := e.agent.WaitResponses(t, 1)
	assert.True(t, r[0].Allow)
}

func itoa(i int) string { return strconv.Itoa(i) }

// streamLines makes the agent's next turn stream n numbered lines, each
// "line <i> <fill>".
func (a *scriptAgent) streamLines(n int, fill string) {
	chunks := make([]string, n)
	for i := range n {
		chunks[i] = "line " + itoa(i) + " " + fill + "\n"
	}
	a.mu.Lock()
	a.stream = chunks
	a.mu.Unlock()
}

func TestStreamingEditsAndContinues(t *testing.T) {
	e := start(t, envOpt{})
	e.agent.streamLines(300, strings.Repeat("y", 30))
	e.dm(allowedUser, "stream")
	e.waitText("D1", "Done")
	msgs := e.fake.Messages("D1")
	require.GreaterOrEqual(t, len(msgs), 4, "about 11k characters span several messages")
	var all strings.Builder
	edits := 0
	for _, m := range msgs[:len(msgs)-1] {
		assert.LessOrEqual(t, utf8.RuneCountInString(m.Text), slack.MaxMessage)
		all.WriteString(m.Text + "\n")
		edits += m.Edits
	}
	for i := range 300 {
		assert.Contains(t, all.String(), "line "+itoa(i)+" ")
	}
	assert.Positive(t, edits, "streamed text edits one message")
	// Edits of one message are throttled (50 ms in this test, 1 s by
	// default): never two closer together.
	last := map[string]time.Time{}
	for _, c := range e.fake.Calls("chat.update") {
		if prev, ok := last[c.Params["ts"]]; ok {
			assert.GreaterOrEqual(t, c.At.Sub(prev), 50*time.Millisecond, "edits of %s too close", c.Params["ts"])
		}
		last[c.Params["ts"]] = c.At
	}
	assert.NotContains(t, all.String(), "echo", "a streamed turn does not repeat its result")
}

func TestSlashCommandInDMAndChannel(t *testing.T) {
	e := start(t, envOpt{})
	e.deliver("slash_commands", slackfake.SlashCommand("D1", allowedUser, "status"), 0)
	e.waitText("D1", "idle")
	e.deliver("slash_commands", slackfake.SlashCommand("C1", allowedUser, "help"), 0)
	e.waitEphemeral(allowedUser, "No leashd thread here yet")
	root := e.mention("C1", allowedUser, "", "hello")
	e.waitText("C1", "echo: hello")
	e.deliver("slash_commands", slackfake.SlashCommand("C1", allowedUser, "bogus"), 0)
	m := e.waitText("C1", "Unknown command /bogus")
	assert.Equal(t, root, m.ThreadTS)
	e.deliver("slash_commands", slackfake.SlashCommand("D1", stranger, "clear"), 0)
	e.waitEphemeral(stranger, "not allowed")
}

func TestReadyAndBadTokens(t *testing.T) {
	c := slack.New("xoxb-wrong-SECRET", slack.WithAppToken(appToken))
	require.Error(t, c.Ready(), "not ready before Run")
	require.Error(t, slack.New(botToken).Run(t.Context(), nil), "neither Socket Mode nor HTTP mode configured")

	fake := slackfake.New(botToken, appToken)
	defer fake.Close()
	logs := &testenv.Buffer{}
	bad := slack.New("xoxb-wrong-SECRETTOKEN", slack.WithAppToken("xapp-SECRETAPP2"), slack.WithAPIURL(fake.APIURL()), slack.WithLogger(slogTo(logs)))
	err := bad.Run(t.Context(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "invalid_auth")
	assert.NotContains(t, err.Error(), "SECRETTOKEN")
	assert.NotContains(t, logs.String(), "SECRETTOKEN")
	assert.Error(t, bad.Ready())
}

// A 429 storm on chat.postMessage and chat.update while four chats stream
// at once: every line and every summary arrives, and no request of a
// paused method is sent before its Retry-After has passed — by the chat
// that got the 429 (exact: its requests are sequential) nor by the others
// (the pause is shared; only a request already on its way when the 429
// was answered may arrive in the first moments of the pause).
func TestRateLimitStormAcrossChats(t *testing.T) {
	e := start(t, envOpt{})
	e.agent.streamLines(120, strings.Repeat("z", 40))
	e.fake.RateLimit("chat.postMessage", 1, 1, 1)
	e.fake.RateLimit("chat.update", 1, 1, 1)
	chats := []string{"D1", "D2", "D3", "D4"}
	for _, ch := range chats {
		e.push(slackfake.MessageEvent(ch, "im", allowedUser, e.nextTS(), "", "stream"))
	}
	for _, ch := range chats {
		e.waitText(ch, "Done")
	}
	for _, ch := range chats {
		var all strings.Builder
		for _, m := range e.fake.Messages(ch) {
			all.WriteString(m.Text + "\n")
		}
		for i := range 120 {
			require.Contains(t, all.String(), "line "+itoa(i)+" ", "chat %s lost a line", ch)
		}
	}

	const inFlight = 300 * time.Millisecond // a request already sent when the 429 was answered
	calls := e.fake.Calls("")
	limited := 0
	for i, p := range calls {
		if p.Status != 429 {
			continue
		}
		limited++
		require.Equal(t, time.Second, p.RetryAfter)
		end := p.At.Add(p.RetryAfter)
		for _, c := range calls[i+1:] {
			if c.Method != p.Method || !c.At.Before(end) {
				continue
			}
			if c.Params["channel"] == p.Params["channel"] {
				t.Errorf("%s in %s retried %v after its 429 (Retry-After %v)", c.Method, c.Params["channel"], c.At.Sub(p.At), p.RetryAfter)
			}
			if c.At.Sub(p.At) >= inFlight {
				t.Errorf("%s in %s sent %v into %s's pause of %v", c.Method, c.Params["channel"], c.At.Sub(p.At), p.Params["channel"], p.RetryAfter)
			}
		}
	}
	assert.Equal(t, 6, limited, "the whole storm was answered")
	assert.Equal(t, int64(6), e.stats.limited.Load(), "each 429 counted")
}

// Extreme but possible inputs of every kind, end to end: Slack (the fake
// enforces Block Kit's limits) takes every message leashd sends, and
// nothing the person must read is cut off.
func TestExtremeInteractionsAllValidForSlack(t *testing.T) {
	e := start(t, envOpt{approvers: []string{}})
	raw := func(tool string, input any) string {
		b, err := json.Marshal(input)
		require.NoError(t, err)
		return "raw " + tool + " " + string(b)
	}

	// A command with code fences, long enough to need several sections.
	var cmd strings.Builder
	cmd.WriteString("cat > NOTES.md <<'EOF'\n```sh\nmake && make test\n```\nEOF\n")
	for i := range 150 {
		fmt.Fprintf(&cmd, "grep -q '<tag%d>' a.txt && echo \"`date`\" >> log%d\n", i, i)
	}
	cmd.WriteString("rm -rf ./build # the-last-line")
	e.dm(allowedUser, raw("Bash", map[string]string{"command": cmd.String()}))
	q := e.waitButtons("D1", "Tool approval")
	shown := strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "\u200b", "").Replace(slackfake.Texts(q.Blocks))
	assert.Contains(t, shown, "rm -rf ./build # the-last-line", "the end of a long command is shown")
	assert.Contains(t, shown, "grep -q '<tag149>' a.txt && echo \"`date`\" >> log149")
	reason := strings.Repeat("no <script> & no ``` please; ", 200)
	e.dm(allowedUser, reason)
	r := e.agent.WaitResponses(t, 1)
	assert.False(t, r[0].Allow)
	e.waitText("D1", "❌ *Deny* — <@U1>: no &lt;script&gt; &amp; no")

	// A question with four long descriptions (as long as the coordinator
	// lets them be) and over-long labels, multi-select.
	var opts []map[string]string
	for i := range 4 {
		opts = append(opts, map[string]string{
			"label":       fmt.Sprintf("Option %d ", i) + strings.Repeat("with a long label ", 6),
			"description": strings.Repeat("because & <reasons> ", 24) + fmt.Sprintf("end-%d", i),
		})
	}
	e.dm(allowedUser, raw("AskUserQuestion", map[string]any{"questions": []any{map[string]any{
		"question": strings.Repeat("Which? ", 600) + "last-words", "header": "Choose", "options": opts, "multiSelect": true}}}))
	mq := e.waitButtons("D1", "last-words")
	for i := range 4 {
		assert.Contains(t, slackfake.Texts(mq.Blocks), fmt.Sprintf("end-%d", i), "every description shown to its end")
	}
	btns := slackfake.Buttons(mq.Blocks)
	require.Len(t, btns, 5)
	e.tap(allowedUser, mq, btns[1].Text)
	e.waitMsg("D1", "ticked", func(m slackfake.Message) bool { return m.TS == mq.TS && m.Edits > 0 })
	e.tap(allowedUser, mq, "Done")
	r = e.agent.WaitResponses(t, 2)
	assert.True(t, r[1].Allow)

	// A plan with a code fence and one very long line.
	plan := "# Plan\n```go\nfunc main() {}\n```\n" + strings.Repeat("word&", 3000) + "\n- the-final-step"
	e.dm(allowedUser, "plan "+plan)
	btn := e.waitButtons("D1", "Plan review")
	e.waitText("D1", "the-final-step")
	e.tap(allowedUser, btn, "Approve, review edits")
	r = e.agent.WaitResponses(t, 3)
	assert.True(t, r[2].Allow)
	e.settle()
	assert.Empty(t, e.fake.Rejected(), "Slack refused something leashd sent")
}
