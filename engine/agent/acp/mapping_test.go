package acp

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/policy"
	"github.com/leashd/leashd/interactions"
)

func permissionParams(options string) map[string]any {
	var opts any
	_ = json.Unmarshal([]byte(options), &opts)
	return map[string]any{
		"sessionId": "sess-1",
		"toolCall": map[string]any{
			"toolCallId": "call-1", "title": "Run the build", "kind": "execute",
			"rawInput": map[string]any{"command": "make all"},
		},
		"options": opts,
	}
}

const fourOptions = `[{"optionId":"once","name":"Allow","kind":"allow_once"},{"optionId":"always","name":"Always allow make","kind":"allow_always"},{"optionId":"no","name":"Reject","kind":"reject_once"},{"optionId":"never","name":"Never","kind":"reject_always"}]`

// The agent's own options are the buttons, by their names and in its
// order; the one tapped goes back as its optionId.
func TestAgentOptionsAreTheButtons(t *testing.T) {
	answers := make(chan rpc, 1)
	s, _ := newScriptedStack(t, func(a *scripted, text string) string {
		answers <- a.call("session/request_permission", permissionParams(fourOptions))
		return "end_turn"
	})
	s.say("build it")
	m := s.botMessage("make all")
	assert.Equal(t, []string{"✅ Allow", "✅ Always allow make", "❌ Reject", "❌ Never"}, m.Buttons(), "allow-like options approve, reject-like ones deny")
	assert.Contains(t, m.Text, "Run the build")
	assert.Contains(t, m.Text, "Allow, and do not ask again for calls like it", "what each kind does is shown")
	s.tap(m, "✅ Always allow make")
	r := <-answers
	require.Nil(t, r.Error)
	assert.JSONEq(t, `{"outcome":{"outcome":"selected","optionId":"always"}}`, string(r.Result))
}

// Typed text at an approval picks the agent's reject_once option, with the
// reason in _meta and, since ACP v1 has no reason field, as a follow-up
// prompt when the turn ends.
func TestTypedTextRejectsWithReason(t *testing.T) {
	answers := make(chan rpc, 1)
	s, sa := newScriptedStack(t, func(a *scripted, text string) string {
		if strings.Contains(text, "build it") {
			answers <- a.call("session/request_permission", permissionParams(fourOptions))
		}
		return "end_turn"
	})
	s.say("build it")
	s.botMessage("make all")
	s.say("not on the release branch")
	r := <-answers
	require.Nil(t, r.Error)
	assert.JSONEq(t, `{"_meta":{"leashd":{"reason":"not on the release branch"}},"outcome":{"outcome":"selected","optionId":"no"}}`, string(r.Result))
	a := sa.agent()
	a.waitReceived("session/prompt", 2)
	p := a.promptTexts()
	assert.Equal(t, "build it", p[0])
	assert.Contains(t, p[1], "not on the release branch")
	assert.Contains(t, p[1], "rejected your Bash (Run the build) call")
}

// An approval nobody answers in time is "cancelled" for the agent.
func TestExpiredApprovalIsCancelled(t *testing.T) {
	answers := make(chan rpc, 1)
	s, _ := newScriptedStack(t, func(a *scripted, text string) string {
		answers <- a.call("session/request_permission", permissionParams(fourOptions))
		return "end_turn"
	}, interactions.WithTimeout(200*time.Millisecond))
	s.say("build it")
	r := <-answers
	require.Nil(t, r.Error)
	assert.JSONEq(t, `{"outcome":{"outcome":"cancelled"}}`, string(r.Result))
}

// A form elicitation is asked field by field (i of N): a oneOf string is a
// single-select with titles and descriptions, an array of anyOf a
// multi-select, a boolean a yes/no, an integer free text read as a number,
// a plain string free text; the content carries each field's value.
func TestFormElicitationAskedFieldByField(t *testing.T) {
	answers := make(chan rpc, 1)
	schema := `{"type":"object","properties":{
		"db":{"type":"string","title":"Database","description":"Which database?","oneOf":[{"const":"pg","title":"Postgres","description":"Relational"},{"const":"lite","title":"SQLite","description":"One file"}]},
		"features":{"type":"array","title":"Features","description":"Which features?","items":{"anyOf":[{"const":"auth","title":"Auth"},{"const":"search","title":"Search"}]}},
		"tests":{"type":"boolean","description":"Write tests?"},
		"replicas":{"type":"integer","description":"How many replicas?"},
		"name":{"type":"string","description":"Service name?"}}}`
	s, _ := newScriptedStack(t, func(a *scripted, text string) string {
		answers <- a.call("elicitation/create", map[string]any{"sessionId": "sess-1", "mode": "form", "message": "Set up", "requestedSchema": json.RawMessage(schema)})
		return "end_turn"
	})
	s.say("set up")
	m := s.botMessage("Which database?")
	assert.Contains(t, m.Text, "1/5")
	assert.Contains(t, m.Text, "One file")
	assert.Equal(t, []string{"Postgres", "SQLite"}, m.Buttons())
	s.tap(m, "SQLite")
	m = s.botMessage("Which features?")
	assert.Equal(t, []string{"Auth", "Search", "Done"}, m.Buttons())
	s.tap(m, "Search")
	m = s.waitMessage(m.ID, "Search checked", func(m tgfake.Message) bool { return strings.Contains(strings.Join(m.Buttons(), ","), "✅ Search") })
	s.tap(m, "Done")
	m = s.botMessage("Write tests?")
	assert.Equal(t, []string{"Yes", "No"}, m.Buttons())
	s.tap(m, "No")
	s.botMessage("How many replicas?")
	s.say("3")
	s.botMessage("Service name?")
	s.say("billing-api")
	r := <-answers
	require.Nil(t, r.Error)
	assert.JSONEq(t, `{"action":"accept","content":{"db":"lite","features":["search"],"tests":false,"replicas":3,"name":"billing-api"}}`, string(r.Result))
}

// Rejecting a form declines it; a form nobody answers is cancelled.
func TestFormDeclinedAndCancelled(t *testing.T) {
	answers := make(chan rpc, 2)
	params := map[string]any{"sessionId": "sess-1", "mode": "form", "message": "Name?", "requestedSchema": json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)}
	s, _ := newScriptedStack(t, func(a *scripted, text string) string {
		answers <- a.call("elicitation/create", params)
		return "end_turn"
	})
	s.say("first")
	s.botMessage("Name?")
	var id string
	s.waitFor("the pending question", func() bool {
		p := s.coord.Pending("telegram:42")
		if len(p) == 1 {
			id = p[0].ID
		}
		return id != ""
	})
	_, err := s.coord.Reply(id, interactions.Reply{By: "42", Reject: true})
	require.NoError(t, err)
	r := <-answers
	assert.JSONEq(t, `{"action":"decline"}`, string(r.Result))
	s.botMessage("Done")

	s.say("second")
	s.waitFor("the second question", func() bool { return len(s.coord.Pending("telegram:42")) == 1 })
	s.say("/stop")
	r = <-answers
	assert.JSONEq(t, `{"action":"cancel"}`, string(r.Result))
}

// The Claude adapter's AskUserQuestion form: the "Other" field beside each
// question is not asked; typed text at the question fills it.
func TestClaudeAdapterOtherFieldFilledByTypedText(t *testing.T) {
	fs, err := formFields(json.RawMessage(`{"type":"object","properties":{
		"question_0":{"type":"string","title":"DB","oneOf":[{"const":"Postgres","title":"Postgres"},{"const":"SQLite","title":"SQLite"}]},
		"question_0_custom":{"type":"string","title":"Other"},
		"question_1":{"type":"array","title":"Features","description":"Which features?","items":{"anyOf":[{"const":"Auth","title":"Auth"},{"const":"Billing, v2","title":"Billing, v2"}]}},
		"question_1_custom":{"type":"string","title":"Other"}}}`), "Please answer the following questions.")
	require.NoError(t, err)
	require.Len(t, fs, 2)
	assert.Equal(t, "question_0_custom", fs[0].Custom)
	assert.Equal(t, "DB", fs[0].Question.Question, "no description: the title asks")
	content := map[string]any{}
	require.NoError(t, fs[0].Fill("MariaDB", content))
	require.NoError(t, fs[1].Fill("Auth, Billing, v2", content))
	assert.Equal(t, map[string]any{"question_0_custom": "MariaDB", "question_1": []any{"Auth", "Billing, v2"}}, content)
	content = map[string]any{}
	require.NoError(t, fs[1].Fill("Something else", content))
	assert.Equal(t, map[string]any{"question_1": []any{}, "question_1_custom": "Something else"}, content)
}

// Forms leashd cannot ask are refused with an error naming the field and
// what is accepted, never left hanging.
func TestUnaskableFormIsAnsweredWithAnError(t *testing.T) {
	answers := make(chan rpc, 1)
	s, _ := newScriptedStack(t, func(a *scripted, text string) string {
		answers <- a.call("elicitation/create", map[string]any{"sessionId": "sess-1", "mode": "form", "message": "x",
			"requestedSchema": json.RawMessage(`{"type":"object","properties":{"cfg":{"type":"object"}}}`)})
		return "end_turn"
	})
	s.say("go")
	r := <-answers
	require.NotNil(t, r.Error)
	assert.Equal(t, -32602, r.Error.Code)
	assert.Contains(t, string(r.Error.Data), `field \"cfg\": type \"object\" cannot be asked (accepted: string, number, integer, boolean, array of options)`)
}

// Every request the agent sends is answered: methods leashd does not offer
// get "method not found", never silence.
func TestUnknownMethodsAreAnsweredMethodNotFound(t *testing.T) {
	got := make(chan []rpc, 1)
	s, _ := newScriptedStack(t, func(a *scripted, text string) string {
		var rs []rpc
		for _, m := range []string{"fs/read_text_file", "terminal/create", "acme/frobnicate", "_acme/frobnicate"} {
			rs = append(rs, a.call(m, map[string]any{"sessionId": "sess-1", "path": "/etc/passwd"}))
		}
		got <- rs
		return "end_turn"
	})
	s.say("go")
	for _, r := range <-got {
		require.NotNil(t, r.Error, "answered with an error")
		assert.Equal(t, -32601, r.Error.Code)
	}
	s.botMessage("Done")
}

// A permission asked while no turn runs cannot reach anyone: cancelled.
func TestPermissionOutsideATurnIsCancelled(t *testing.T) {
	s, sa := newScriptedStack(t, nil)
	s.say("hello")
	s.botMessage("Done")
	r := sa.agent().call("session/request_permission", permissionParams(fourOptions))
	require.Nil(t, r.Error)
	assert.JSONEq(t, `{"outcome":{"outcome":"cancelled"}}`, string(r.Result))
}

// Text streams, a tool call is counted by its Claude name, a plan shows as
// a checklist.
func TestUpdatesAreShown(t *testing.T) {
	s, _ := newScriptedStack(t, func(a *scripted, text string) string {
		a.update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "Hello "}})
		a.update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "there."}})
		a.update(map[string]any{"sessionUpdate": "tool_call", "toolCallId": "c1", "title": "`ls`", "kind": "execute", "rawInput": map[string]any{"command": "ls"}})
		a.update(map[string]any{"sessionUpdate": "plan", "entries": []map[string]any{
			{"content": "Read the code", "priority": "high", "status": "completed"},
			{"content": "Fix the bug", "priority": "high", "status": "pending"}}})
		return "end_turn"
	})
	s.say("hi")
	s.botMessage("Hello there.")
	m := s.botMessage("Plan:")
	assert.Contains(t, m.Text, "☑ Read the code")
	assert.Contains(t, m.Text, "☐ Fix the bug")
	s.botMessage("Done · ran 1 command")
}

// /plan and /default map onto the agent's own modes; a mode it lacks is
// refused, naming the modes it has, and the chat keeps its mode.
func TestModesMapOntoTheAgents(t *testing.T) {
	s, sa := newScriptedStack(t, nil)
	s.say("hello")
	s.botMessage("Done")
	a := sa.agent()
	sets := a.waitReceived("session/set_mode", 1)
	assert.JSONEq(t, `{"sessionId":"sess-1","modeId":"default"}`, string(sets[0].Params), "a new session is put in the chat's mode (the adapter starts in auto)")
	s.say("/plan")
	s.botMessage("Mode: plan")
	sets = a.waitReceived("session/set_mode", 2)
	assert.JSONEq(t, `{"sessionId":"sess-1","modeId":"plan"}`, string(sets[1].Params))
	s.say("/edit")
	m := s.botMessage("Mode not changed")
	assert.Contains(t, m.Text, "the agent has no acceptEdits mode; its modes are Auto (auto), Default (default), Plan (plan)")
	s.say("/status")
	st := s.botMessage("Working directory")
	assert.Contains(t, st.Text, "Mode: plan", "the chat stays in plan mode")
	assert.Len(t, a.received("session/set_mode"), 2)
}

// A URL elicitation shows the link and ends when the agent says it is
// complete (elicitation/complete) — or when the person taps Done.
func TestURLElicitation(t *testing.T) {
	answers := make(chan rpc, 1)
	s, _ := newScriptedStack(t, func(a *scripted, text string) string {
		answers <- a.call("elicitation/create", map[string]any{"sessionId": "sess-1", "mode": "url", "message": "Sign in to GitHub", "url": "https://github.com/login/device", "elicitationId": "e1"})
		return "end_turn"
	})
	s.say("connect")
	m := s.botMessage("https://github.com/login/device")
	assert.Contains(t, m.Text, "Sign in to GitHub")
	assert.Equal(t, []string{"Done"}, m.Buttons())
	s.tap(m, "Done")
	r := <-answers
	assert.JSONEq(t, `{"action":"accept"}`, string(r.Result))
}

func TestURLElicitationCompletedByTheAgent(t *testing.T) {
	answers := make(chan rpc, 1)
	shown := make(chan struct{})
	s, _ := newScriptedStack(t, func(a *scripted, text string) string {
		go func() {
			<-shown
			a.notify("elicitation/complete", map[string]any{"elicitationId": "e2"})
		}()
		answers <- a.call("elicitation/create", map[string]any{"sessionId": "sess-1", "mode": "url", "message": "Authorize", "url": "https://example.com/auth", "elicitationId": "e2"})
		return "end_turn"
	})
	s.say("connect")
	m := s.botMessage("https://example.com/auth")
	close(shown)
	r := <-answers
	assert.JSONEq(t, `{"action":"accept"}`, string(r.Result))
	s.waitMessage(m.ID, "the link to lose its button", func(m tgfake.Message) bool { return m.Markup == nil })
}

// Vendor question extensions of a known shape are asked; an unknown shape
// gets an error saying what was expected.
func TestVendorQuestions(t *testing.T) {
	answers := make(chan rpc, 2)
	s, _ := newScriptedStack(t, func(a *scripted, text string) string {
		answers <- a.call("cursor/ask_question", map[string]any{"questions": []map[string]any{{"question": "Which port?", "options": []string{"8080", "9090"}}}})
		answers <- a.call("_sandboxagent/session/request_question", map[string]any{"nothing": true})
		return "end_turn"
	})
	s.say("go")
	m := s.botMessage("Which port?")
	assert.Equal(t, []string{"8080", "9090"}, m.Buttons())
	s.tap(m, "9090")
	r := <-answers
	require.Nil(t, r.Error)
	assert.JSONEq(t, `{"outcome":"answered","answers":{"Which port?":"9090"}}`, string(r.Result))
	r = <-answers
	require.NotNil(t, r.Error)
	assert.Equal(t, -32602, r.Error.Code)
	assert.Contains(t, string(r.Error.Data), "no questions")
}

// /status names the ACP agent, and a missing agent program is reported
// with what to fix (not Claude Code's install hint).
func TestStatusAndMissingAgent(t *testing.T) {
	logs := &testenv.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, nil))
	m := buildStack(t, New([]string{"/nonexistent/gemini", "--acp"}), logs, log, nil)
	m.say("/status")
	st := m.botMessage("Working directory")
	assert.Contains(t, st.Text, "Agent: the ACP agent gemini (not running)")
	m.say("hello")
	msg := m.botMessage("Could not start the agent")
	assert.Contains(t, msg.Text, "/nonexistent/gemini")
	assert.Contains(t, msg.Text, "fix LEASHD_ACP_COMMAND")
	assert.NotContains(t, msg.Text, "claude-code")
}

// After an idle shutdown the next prompt resumes the agent's session:
// session/resume when it offers it, else session/load (whose replayed
// history is not shown again); an agent offering neither starts anew and
// the chat is told.
func TestResumeAfterIdleShutdown(t *testing.T) {
	for _, c := range []struct {
		name, caps, method string
	}{
		{"resume", `{"sessionCapabilities":{"resume":{}}}`, "session/resume"},
		{"load", `{"loadSession":true}`, "session/load"},
		{"neither", `{}`, "session/new"},
	} {
		t.Run(c.name, func(t *testing.T) {
			sa := &scriptedAgent{caps: c.caps, onPrompt: func(a *scripted, text string) string {
				a.update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "re: " + text}})
				return "end_turn"
			}}
			s, _ := newScriptedStackWith(t, sa, nil, func(_ *engine.Deps, c *engine.Config) { c.IdleTimeout = 50 * time.Millisecond })
			s.say("first")
			s.botMessage("re: first")
			s.waitFor("the idle agent to be shut down", func() bool {
				sa.mu.Lock()
				defer sa.mu.Unlock()
				return len(sa.all) == 1 && sa.all[0].closed()
			})
			s.say("second")
			s.botMessage("re: second")
			sa.mu.Lock()
			second := sa.all[len(sa.all)-1]
			sa.mu.Unlock()
			got := second.received(c.method)
			require.Len(t, got, 1, "the second process was opened with %s", c.method)
			if c.method != "session/new" {
				assert.JSONEq(t, `"sess-1"`, string(mustField(t, got[0].Params, "sessionId")))
				for _, m := range s.fake.BotMessages(me) {
					assert.NotContains(t, m.Text, "OLD REPLY", "replayed history is not shown again")
				}
			} else {
				s.botMessage("Could not resume the previous agent session (the agent can neither resume nor load sessions")
			}
		})
	}
}

func mustField(t *testing.T, raw json.RawMessage, key string) json.RawMessage {
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(raw, &m))
	return m[key]
}

// /stop while an approval waits: the agent reads session/cancel before the
// approval's "cancelled" answer, as ACP orders it (else an agent takes the
// answer for a failed tool and goes on).
func TestStopSendsCancelBeforeTheCancelledAnswer(t *testing.T) {
	answers := make(chan rpc, 1)
	s, sa := newScriptedStack(t, func(a *scripted, text string) string {
		answers <- a.call("session/request_permission", permissionParams(fourOptions))
		a.waitReceived("session/cancel", 1)
		return "cancelled"
	})
	s.say("build it")
	s.botMessage("make all")
	s.say("/stop")
	r := <-answers
	assert.JSONEq(t, `{"outcome":{"outcome":"cancelled"}}`, string(r.Result))
	order := sa.agent().order()
	cancel, answer := slices.Index(order, "session/cancel"), slices.Index(order, "(answer)")
	require.GreaterOrEqual(t, cancel, 0, "%q", order)
	assert.Less(t, cancel, answer, "session/cancel first: %q", order)
}

// An approval policy decides an ACP agent's permission requests before
// anyone is asked, as for every backend: a deny rule picks the agent's
// reject option (the chat is told which rule), an allow rule its
// allow_once option (never "always": the policy keeps deciding).
func TestPolicyDecidesTheAgentsOptions(t *testing.T) {
	for _, tc := range []struct {
		rule, want, said string
	}{
		{"decision: deny\n    reason: No builds here.", `{"outcome":{"outcome":"selected","optionId":"no"}}`, "Denied by policy rule 1 (line 2): No builds here."},
		{"decision: allow", `{"outcome":{"outcome":"selected","optionId":"once"}}`, ""},
	} {
		t.Run(tc.want, func(t *testing.T) {
			p, err := policy.Parse("policy.yaml", []byte("rules:\n  - tool: Bash\n    command: '^make '\n    "+tc.rule+"\n"))
			require.NoError(t, err)
			answers := make(chan rpc, 1)
			sa := &scriptedAgent{onPrompt: func(a *scripted, text string) string {
				answers <- a.call("session/request_permission", permissionParams(fourOptions))
				return "end_turn"
			}}
			s, _ := newScriptedStackWith(t, sa, nil, func(d *engine.Deps, _ *engine.Config) { d.Policy = policy.NewHolder("", p) })
			s.say("build it")
			r := <-answers
			require.Nil(t, r.Error)
			assert.JSONEq(t, tc.want, string(r.Result))
			if tc.said != "" {
				s.botMessage(tc.said)
			}
			for _, m := range s.fake.BotMessages(me) {
				assert.Empty(t, m.Buttons(), "nobody was asked: %s", m.Text)
			}
		})
	}
}
