package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

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
	tg := tgfake.New()
	t.Cleanup(tg.Close)
	f := startFleetWith(t, &fleet{}, askPlanBash, "LEASHD_RUNNER_GRACE_SECONDS=30",
		"LEASHD_TELEGRAM_BOT_TOKEN="+tg.Token(), "LEASHD_TELEGRAM_API_URL="+tg.URL(),
		fmt.Sprintf("LEASHD_TELEGRAM_ALLOWED_USERS=%d", tgFleetUser))
	return f, tg
}

// runnerPlan is the plan the fake model has reviewed; %s is the chat's tag.
const runnerPlan = "# Plan\n1. Write %s.txt on the runner."

// askPlanBash is the fake model of these tests, for a chat whose prompts
// start with a tag ("tg:", "web:"): "<tag> ask me" is answered with an
// AskUserQuestion, its answer with text; "<tag> make a plan" with
// ExitPlanMode, the approval with a Bash call writing <tag>.txt, its
// output with the last words; "<tag> send me the log" with send_file of
// out/<tag>-log.txt; a file captioned "<tag> read my notes" with a Bash
// call reading it from the inbox. The newest step of the conversation decides (a
// later turn carries the earlier ones).
func askPlanBash(req *fakeapi.Request) fakeapi.Reply {
	for _, tag := range []string{"tg", "web"} {
		id := func(step string) string { return "toolu_" + tag + "_" + step }
		switch {
		case has(req, id("read")):
			return fakeapi.Text(tag + ": read your notes")
		case req.HasUserText(tag + " read my notes"):
			return fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: id("read"), Name: "Bash", Input: map[string]string{
				"command": "cat .leashd/inbox/*/notes.txt > seen.txt && cat seen.txt", "description": "read the notes"}}}}
		case has(req, id("send")):
			return fakeapi.Text(tag + ": sent the log")
		case req.HasUserText(tag + " send me the log"):
			return fakeapi.Reply{Tools: []fakeapi.ToolUse{{ID: id("send"), Name: sendFileTool,
				Input: map[string]string{"path": "out/" + tag + "-log.txt", "caption": "the build log"}}}}
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
// reach Telegram, and so does a file the agent sends from there
// (send_file, read on the runner); a document sent in Telegram lands on
// the runner, where the agent reads it. A web chat then does the same on the other runner,
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

	byName := map[string]*runnerProc{"r1": r1, "r2": r2}
	tgSendFile(t, f, tg, byName[on])
	tgFileToRunner(t, f, tg, byName[on])

	webQuestionPlanBash(t, f)
	assert.NotEqual(t, on, f.runnerOf(t, "web:w"), "the web chat took the other runner's one slot")
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

// tgSendFile: the agent's send_file, approved in Telegram, reads the
// file in its runner's working directory (the server has none) and the
// file reaches the Telegram chat with its bytes and caption, through the
// runner's connection; the model reads that it was sent.
func tgSendFile(t *testing.T, f *fleet, tg *tgfake.Server, r *runnerProc) {
	t.Helper()
	log := []byte("build ok on the runner: 42 tests passed\n")
	require.NoError(t, os.MkdirAll(filepath.Join(r.workdir, "out"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(r.workdir, "out", "tg-log.txt"), log, 0o644))
	tg.Text(tgFleetUser, tgFleetUser, "tg send me the log")
	tgTap(t, tg, "tg-log.txt", "Allow")
	res := toolResult(t, f.api, "toolu_tg_send")
	assert.False(t, res.IsError, "%s", res.ResultText())
	assert.Contains(t, res.ResultText(), "Sent tg-log.txt", "the model reads that it was sent")
	tgSays(t, tg, "tg: sent the log")
	sent := tg.SentFiles(tgFleetUser)
	require.Len(t, sent, 1, "one file reached the chat")
	assert.Equal(t, "tg-log.txt", sent[0].Name)
	assert.Equal(t, log, sent[0].Data, "the runner's file, byte for byte")
	assert.Equal(t, "the build log", sent[0].Caption)
}

// tgFileToRunner: a document sent in Telegram lands in the inbox of the
// runner's working directory, where the agent (a command run there)
// reads it.
func tgFileToRunner(t *testing.T, f *fleet, tg *tgfake.Server, r *runnerProc) {
	t.Helper()
	notes := []byte("standup at 10, deploy at 4")
	tg.Document(tgFleetUser, tgFleetUser, "notes.txt", "text/plain", notes, len(notes), "tg read my notes")
	tgTap(t, tg, "cat .leashd/inbox", "Allow")
	assert.Equal(t, string(notes), strings.TrimSpace(toolOutput(t, f.api, "toolu_tg_read")), "the agent read the file on its runner")
	tgSays(t, tg, "tg: read your notes")
	matches, _ := filepath.Glob(filepath.Join(r.workdir, ".leashd", "inbox", "*", "notes.txt"))
	assert.Len(t, matches, 1, "saved in the runner's inbox")
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
		p := waitPendingWithin(t, f.url, "web:w", 90*time.Second, func(p pendingView) bool { return p.Kind == kind && !p.Interrupted })
		code, body := postJSON(t, f.url+"/api/interactions/"+p.ID+"/reply", `{"answers":[["`+answer+`"]]}`)
		require.Equal(t, 204, code, body)
	}
	send("web ask me which database")
	answer("question", "Postgres")
	assert.Contains(t, toolResult(t, f.api, "toolu_web_ask").ResultText(), `"Which database?"="Postgres"`)
	waitEventWithin(t, f.url, "web:w", "web: noted your database", 90*time.Second)
	send("/plan web make a plan")
	answer("plan_review", "default")
	plan := toolResult(t, f.api, "toolu_web_plan")
	assert.False(t, plan.IsError, "%s", plan.ResultText())
	assert.Contains(t, plan.ResultText(), "approved your plan")
	answer("tool_approval", "allow")
	assert.Equal(t, "planned", strings.TrimSpace(toolOutput(t, f.api, "toolu_web_bash")))
	waitEventWithin(t, f.url, "web:w", "web: plan carried out", 90*time.Second)
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
