package main

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// tgFleetUser is the allowed Telegram user (and private chat) of the
// runner tests driven from Telegram.
const tgFleetUser = int64(1001)

// startTGFleet is startFleet with Telegram too: the server talks to a
// tgfake bot API that lets tgFleetUser in, and the fake model plays
// askPlanBash for every chat.
func startTGFleet(t *testing.T) (*fleet, *tgfake.Server) {
	t.Helper()
	claudePath := testenv.Claude(t)
	tg := tgfake.New()
	t.Cleanup(tg.Close)
	f := &fleet{api: fakeapi.New(t), claude: claudePath}
	f.api.Otherwise(askPlanBash)
	url, logs, stop := startServe(t, testenv.PrivateDir(t),
		"LEASHD_AGENT=claude", "LEASHD_CLAUDE_PATH=claude-is-on-the-runners",
		"LEASHD_WEB_ADDR=0.0.0.0:0", "LEASHD_WEB_TOKEN="+runnersWebAuth,
		"LEASHD_RUNNER_TOKENS="+runnerToken, "LEASHD_LOCAL_AGENTS=0",
		"LEASHD_RUNNER_GRACE_SECONDS=30", "LEASHD_MAX_CONCURRENT_AGENTS=8",
		"LEASHD_TELEGRAM_BOT_TOKEN="+tg.Token(), "LEASHD_TELEGRAM_API_URL="+tg.URL(),
		fmt.Sprintf("LEASHD_TELEGRAM_ALLOWED_USERS=%d", tgFleetUser))
	t.Cleanup(func() { _ = stop() })
	_, f.port, _ = net.SplitHostPort(strings.TrimPrefix(url, "http://"))
	f.url = "http://127.0.0.1:" + f.port
	tokens.Set(f.url, runnersWebAuth)
	f.logs, f.stop = logs, stop
	return f, tg
}

// runnerPlan is the plan the fake model has reviewed; %s is the chat's tag.
const runnerPlan = "# Plan\n1. Write %s.txt on the runner."

// askPlanBash is the fake model of these tests, for a chat whose prompts
// start with a tag ("tg:", "web:"): "<tag> ask me" is answered with an
// AskUserQuestion, its answer with text; "<tag> make a plan" with
// ExitPlanMode, the approval with a Bash call writing <tag>.txt, its
// output with the last words. The newest step of the conversation
// decides (a later turn carries the earlier ones).
func askPlanBash(req *fakeapi.Request) fakeapi.Reply {
	for _, tag := range []string{"tg", "web"} {
		id := func(step string) string { return "toolu_" + tag + "_" + step }
		switch {
		case has(req, id("bash")):
			return fakeapi.Text(tag + ": plan carried out")
		case has(req, id("plan")):
			return fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: id("bash"), Name: "Bash", Input: map[string]string{
				"command": "echo planned > " + tag + ".txt && cat " + tag + ".txt", "description": "carry out the plan"}}}}
		case req.HasUserText(tag + " make a plan"):
			return fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: id("plan"), Name: "ExitPlanMode",
				Input: map[string]string{"plan": fmt.Sprintf(runnerPlan, tag)}}}}
		case has(req, id("ask")):
			return fakeapi.Text(tag + ": noted your database")
		case req.HasUserText(tag + " ask me"):
			return fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: id("ask"), Name: "AskUserQuestion", Input: dbQuestionInput}}}
		}
	}
	return fakeapi.Text("ok")
}

// dbQuestionInput is AskUserQuestion's input: one question, two options.
var dbQuestionInput = map[string]any{"questions": []map[string]any{
	{"question": "Which database?", "header": "Database", "multiSelect": false,
		"options": []map[string]string{{"label": "Postgres", "description": "a server"}, {"label": "SQLite", "description": "a file"}}},
}}

// TestRunnerQuestionAndPlanFromTelegram: with no local agents and two
// real runners (one agent each, own network namespaces), a Telegram
// chat's question, plan review and Bash approval, each tapped in
// Telegram, reach the Claude Code CLI on its runner: the model reads the
// tapped answer, that the plan was approved, and the output of the
// command, which ran in that runner's working directory; the last words
// reach Telegram. A web chat then does the same on the other runner,
// answered through the web API.
func TestRunnerQuestionAndPlanFromTelegram(t *testing.T) {
	f, tg := startTGFleet(t)
	r1 := f.runner(t, "r1", 1, runnerToken)
	r2 := f.runner(t, "r2", 1, runnerToken)
	f.waitRunner(t, "r1", connected, "connected")
	f.waitRunner(t, "r2", connected, "connected")
	chat := fmt.Sprintf("telegram:%d", tgFleetUser)

	tgQuestion(t, f, tg)
	on := f.runnerOf(t, chat)
	require.NotEmpty(t, on, "the Telegram chat's agent runs on a runner; runners: %+v", f.runners(t))
	tgPlanAndBash(t, f, tg)
	assert.Equal(t, on, f.runnerOf(t, chat), "the whole conversation stayed on one runner")

	webQuestionPlanBash(t, f)
	assert.NotEqual(t, on, f.runnerOf(t, "web:w"), "the web chat took the other runner's one slot")
	byName := map[string]*runnerProc{"r1": r1, "r2": r2}
	for tag, name := range map[string]string{"tg": on, "web": f.runnerOf(t, "web:w")} {
		r := byName[name]
		require.NotNil(t, r, "%s chat on an unknown runner %q", tag, name)
		b, err := os.ReadFile(filepath.Join(r.workdir, tag+".txt"))
		require.NoError(t, err, "%s.txt is in %s's working directory", tag, name)
		assert.Equal(t, "planned\n", string(b))
		for _, other := range byName {
			if other != r {
				assert.NoFileExists(t, filepath.Join(other.workdir, tag+".txt"), "not on %s", other.name)
			}
		}
		assert.Regexp(t, `msg="agent started" id=\S+ chat=`+map[string]string{"tg": chat, "web": "web:w"}[tag], r.logs.String())
	}
	assert.Equal(t, 0, f.api.Unscripted())
}

// tgTap waits for a bot message in the Telegram chat showing text with a
// button label, and taps it.
func tgTap(t *testing.T, tg *tgfake.Server, text, label string) tgfake.Message {
	t.Helper()
	m, ok := waitBotMessage(tg, tgFleetUser, 180*time.Second, func(m tgfake.Message) bool {
		return strings.Contains(m.Text, text) && slices.Contains(m.Buttons(), label)
	})
	require.True(t, ok, "no %q button under %q in Telegram; messages: %q", label, text, botButtons(tg.BotMessages(tgFleetUser)))
	_, err := tg.TapButton(tgFleetUser, tgFleetUser, m.ID, label)
	require.NoError(t, err)
	return m
}

// tgSays waits for a bot message in the Telegram chat containing text.
func tgSays(t *testing.T, tg *tgfake.Server, text string) {
	t.Helper()
	_, ok := waitBotMessage(tg, tgFleetUser, 180*time.Second, func(m tgfake.Message) bool { return strings.Contains(m.Text, text) })
	require.True(t, ok, "%q never shown in Telegram; messages: %q", text, botButtons(tg.BotMessages(tgFleetUser)))
}

// tgQuestion: the question's buttons in Telegram; the tapped option is
// what the model reads.
func tgQuestion(t *testing.T, f *fleet, tg *tgfake.Server) {
	t.Helper()
	tg.Text(tgFleetUser, tgFleetUser, "tg ask me which database")
	q := tgTap(t, tg, "Which database?", "SQLite")
	assert.Contains(t, q.Buttons(), "Postgres")
	res := toolResult(t, f.api, "toolu_tg_ask")
	assert.False(t, res.IsError, "%s", res.ResultText())
	assert.Contains(t, res.ResultText(), `"Which database?"="SQLite"`, "the tapped answer reaches the agent on its runner")
	tgSays(t, tg, "tg: noted your database")
}

// tgPlanAndBash: in plan mode, the plan review's buttons in Telegram;
// approved, the model reads so and calls Bash, whose approval (Allow,
// tapped) lets the command run on the runner.
func tgPlanAndBash(t *testing.T, f *fleet, tg *tgfake.Server) {
	t.Helper()
	tg.Text(tgFleetUser, tgFleetUser, "/plan tg make a plan")
	tgSays(t, tg, "Mode: plan")
	tgTap(t, tg, "Write tg.txt on the runner.", "Approve, review edits")
	res := toolResult(t, f.api, "toolu_tg_plan")
	assert.False(t, res.IsError, "the plan was approved: %s", res.ResultText())
	assert.Contains(t, res.ResultText(), "approved your plan", "the model reads that the plan was approved")
	assert.Contains(t, res.ResultText(), "Write tg.txt on the runner.", "the approved plan is the one shown")
	t.Logf("ExitPlanMode's tool_result: %s", res.ResultText())
	tgTap(t, tg, "cat tg.txt", "Allow")
	assert.Equal(t, "planned", strings.TrimSpace(toolOutput(t, f.api, "toolu_tg_bash")))
	tgSays(t, tg, "tg: plan carried out")
}

// webQuestionPlanBash is the same conversation in a web chat, answered
// through the web API.
func webQuestionPlanBash(t *testing.T, f *fleet) {
	t.Helper()
	send := func(text string) {
		code, body := postJSON(t, f.url+"/api/chats/web:w/messages", `{"text":"`+text+`"}`)
		require.Equal(t, 202, code, body)
	}
	answer := func(kind, answer string) {
		p := waitPendingLong(t, f.url, "web:w", func(p pendingView) bool { return p.Kind == kind && !p.Interrupted })
		code, body := postJSON(t, f.url+"/api/interactions/"+p.ID+"/reply", `{"answers":[["`+answer+`"]]}`)
		require.Equal(t, 204, code, body)
	}
	send("web ask me which database")
	answer("question", "Postgres")
	assert.Contains(t, toolResult(t, f.api, "toolu_web_ask").ResultText(), `"Which database?"="Postgres"`)
	waitEventLong(t, f.url, "web:w", "web: noted your database")
	send("/plan web make a plan")
	answer("plan_review", "default")
	plan := toolResult(t, f.api, "toolu_web_plan")
	assert.False(t, plan.IsError, "%s", plan.ResultText())
	assert.Contains(t, plan.ResultText(), "approved your plan")
	answer("tool_approval", "allow")
	assert.Equal(t, "planned", strings.TrimSpace(toolOutput(t, f.api, "toolu_web_bash")))
	waitEventLong(t, f.url, "web:w", "web: plan carried out")
}

// toolResult waits for the model to receive the tool's result block.
func toolResult(t *testing.T, api *fakeapi.Server, id string) fakeapi.Block {
	t.Helper()
	var out fakeapi.Block
	require.Eventually(t, func() bool {
		for _, c := range api.Calls() {
			if b, ok := c.ToolResult(id); ok {
				out = b
				return true
			}
		}
		return false
	}, 180*time.Second, 50*time.Millisecond, "the model never got %s's result", id)
	return out
}
