package acp

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/telegram/tgfake"
)

// An ACP agent's request is held to the coordinator's limits: 10,000
// options are refused (the agent gets its reject option, the chat is told,
// nothing with buttons is shown), and a title of 240 KB is shown cut to
// 16 KiB: a few messages, not 61.
func TestAgentRequestOverTheLimitsIsRefusedOrCut(t *testing.T) {
	var many []map[string]string
	for i := range 10_000 {
		many = append(many, map[string]string{"optionId": fmt.Sprint("o", i), "name": fmt.Sprint("Option ", i), "kind": "allow_once"})
	}
	many = append(many, map[string]string{"optionId": "no", "name": "Reject", "kind": "reject_once"})
	b, err := json.Marshal(many)
	require.NoError(t, err)
	answers := make(chan rpc, 1)
	s, _ := newScriptedStack(t, func(a *scripted, text string) string {
		if strings.Contains(text, "many") {
			answers <- a.call("session/request_permission", permissionParams(string(b)))
			return "end_turn"
		}
		p := permissionParams(fourOptions)
		p["toolCall"].(map[string]any)["title"] = strings.Repeat("é", 120_000)
		answers <- a.call("session/request_permission", p)
		return "end_turn"
	})
	s.say("many options")
	select {
	case r := <-answers:
		require.Nil(t, r.Error)
		assert.JSONEq(t, `{"outcome":{"outcome":"selected","optionId":"no"}}`, string(r.Result))
	case <-time.After(waitLimit):
		t.Fatalf("the request was not refused; chat:\n%s", s.dump())
	}
	s.botMessage("options: 10001 options; at most 10")
	for _, m := range s.fake.BotMessages(me) {
		assert.Empty(t, m.Buttons(), "nothing to tap was shown: %q", lastN(m.Text, 200))
	}

	s.say("long title")
	var m tgfake.Message
	s.waitFor("the approval's buttons", func() bool {
		for _, b := range s.fake.BotMessages(me) {
			if len(b.Buttons()) > 0 {
				m = b
				return true
			}
		}
		return false
	})
	assert.Equal(t, []string{"✅ Allow", "✅ Always allow make", "❌ Reject", "❌ Never"}, m.Buttons())
	parts := 0
	for _, b := range s.fake.BotMessages(me) {
		if strings.Contains(b.Text, "éé") {
			parts++
		}
	}
	assert.LessOrEqual(t, parts, 5, "a few Telegram messages, not 61")
	s.tap(m, "❌ Reject")
	r := <-answers
	assert.JSONEq(t, `{"outcome":{"outcome":"selected","optionId":"no"}}`, string(r.Result))
}

// The agent's options are never blank buttons, and a name too long for a
// button is cut yet still picks its own option.
func TestAgentOptionNamesBlankOrLong(t *testing.T) {
	long := strings.Repeat("Always allow ", 40)
	opts := `[{"optionId":"","name":"","kind":"allow_once"},{"optionId":"always","name":"` + long + `","kind":"allow_always"},{"optionId":"no","name":" ","kind":"reject_once"}]`
	answers := make(chan rpc, 1)
	s, _ := newScriptedStack(t, func(a *scripted, text string) string {
		answers <- a.call("session/request_permission", permissionParams(opts))
		return "end_turn"
	})
	s.say("build it")
	m := s.botMessage("make all")
	require.Len(t, m.Buttons(), 3)
	assert.Equal(t, "✅ Option 1", m.Buttons()[0])
	assert.Equal(t, "❌ no", m.Buttons()[2])
	assert.True(t, strings.HasSuffix(m.Buttons()[1], "…"), m.Buttons()[1])
	s.tap(m, m.Buttons()[1])
	r := <-answers
	assert.JSONEq(t, `{"outcome":{"outcome":"selected","optionId":"always"}}`, string(r.Result))
}

// /stop with an agent that ignores session/cancel: the person is told the
// turn ended and why, and the chat's next message gets a fresh agent
// instead of waiting behind the stuck one for good.
func TestStopWithAnAgentIgnoringCancelFreesTheChat(t *testing.T) {
	hold, prompted := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() { close(hold) })
	s, sa := newScriptedStack(t, func(a *scripted, text string) string {
		if strings.Contains(text, "stuck") {
			close(prompted)
			<-hold // ignores session/cancel
			return "end_turn"
		}
		a.update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "fresh answer"}})
		return "end_turn"
	})
	s.say("get stuck")
	<-prompted
	s.say("/stop")
	s.botMessage("Stopped.")
	s.botMessage("did not end its turn within 1s of being stopped")
	s.say("again")
	s.botMessage("fresh answer")
	sa.mu.Lock()
	defer sa.mu.Unlock()
	assert.Len(t, sa.all, 2, "a new agent session")
}
