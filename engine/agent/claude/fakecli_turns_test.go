package claude

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// fakeTurns are what the fake CLI does in a turn, by the prompt's first
// word; each gets the rest of the prompt and returns an exit code and
// whether to exit with it.
var fakeTurns = map[string]func(f *fakeClaude, rest string) (code int, exit bool){
	"echo":       (*fakeClaude).turnEcho,
	"args":       (*fakeClaude).turnArgs,
	"mode":       (*fakeClaude).turnMode,
	"garbage":    (*fakeClaude).turnGarbage,
	"flood":      (*fakeClaude).turnFlood,
	"die":        (*fakeClaude).turnDie,
	"signals":    (*fakeClaude).turnSignals,
	"cancel":     (*fakeClaude).turnCancel,
	"race":       (*fakeClaude).turnRace,
	"orphan":     (*fakeClaude).turnOrphan,
	"partial":    (*fakeClaude).turnPartial,
	"unknown":    (*fakeClaude).turnUnknown,
	"fields":     (*fakeClaude).turnFields,
	"elicit":     (*fakeClaude).turnElicit,
	"background": (*fakeClaude).turnBackground,
	"notices":    (*fakeClaude).turnNotices,
	"dialog":     (*fakeClaude).turnDialog,
	"shapes":     (*fakeClaude).turnShapes,
	"wait":       (*fakeClaude).turnWait,
	"deaf":       (*fakeClaude).turnDeaf,
}

func (f *fakeClaude) turnEcho(rest string) (int, bool) {
	f.assistantText("you said: " + rest)
	f.result("you said: "+rest, false, "success")
	return 0, false
}

func (f *fakeClaude) turnArgs(string) (int, bool) {
	cwd, _ := os.Getwd()
	f.result(strings.Join(os.Args[1:], " ")+"|cwd="+cwd+"|extra="+os.Getenv("FAKECLI_EXTRA"), false, "success")
	return 0, false
}

func (f *fakeClaude) turnMode(string) (int, bool) {
	f.result("mode="+f.permMode, false, "success")
	return 0, false
}

func (f *fakeClaude) turnGarbage(string) (int, bool) {
	f.raw("this is not JSON")
	f.raw("   ")
	f.raw(`{"broken": `)
	f.raw(`{"no_type": true}`)
	f.raw(`{"type":"control_request","request":{"subtype":"can_use_tool"}}`)
	f.raw(`{"type":"control_response","response":"not an object"}`)
	f.raw(`{"type":"assistant","message":{"content":42}}`)
	f.raw(`["an","array"]`)
	f.raw(`{"type":"some_future_type","x":1}`)
	f.raw(strings.Repeat("x", fakeLimit+10)) // over the limit: skipped
	// Written by hand: encoding 17 MiB under the race detector is slow.
	f.raw(`{"type":"assistant","parent_tool_use_id":null,"message":{"content":[{"type":"text","text":"` + strings.Repeat("h", hugeText) +
		`"},{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/x"}}]}}`)
	f.out(map[string]any{"type": "assistant", "parent_tool_use_id": "toolu_1", "message": map[string]any{"content": []any{map[string]any{"type": "text", "text": "a subagent's text"}}}})
	f.out(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{"content": "plain string content"}})
	f.result("survived", false, "success")
	return 0, false
}

// turnFlood is hostile output: huge lines of every kind that matters.
func (f *fakeClaude) turnFlood(string) (int, bool) {
	big := strings.Repeat("A", floodBytes())
	f.raw(`{"type":"assistant","parent_tool_use_id":null,"message":{"id":"msg_f","content":[{"type":"text","text":"` + big + `"}]}}`)
	f.raw(`{"type":"control_request","request_id":"big1","request":{"subtype":"can_use_tool","tool_name":"Write","input":{"file_path":"/tmp/x","content":"` + big + `"},"tool_use_id":"toolu_big1"}}`)
	r, ok := f.waitResponse("big1", time.Minute)
	if !ok {
		r = "no response to big1"
	}
	f.assistantText("big1 answered: " + r)
	f.raw(`{"type":"result","subtype":"success","is_error":false,"session_id":"` + fakeSID + `","num_turns":1,"total_cost_usd":0.5,"result":"` + big + `"}`)
	return 0, false
}

func (f *fakeClaude) turnDie(string) (int, bool) {
	f.askTool("q1", "AskUserQuestion", map[string]any{"questions": []any{}})
	time.Sleep(200 * time.Millisecond)
	fmt.Fprintln(os.Stderr, "fatal: the model exploded")
	return 3, true
}

// turnSignals sends can_use_tool with the newer CLI's "a person must
// decide" fields.
func (f *fakeClaude) turnSignals(string) (int, bool) {
	for _, r := range []string{
		`{"type":"control_request","request_id":"s1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"t1","requires_user_interaction":true}}`,
		`{"type":"control_request","request_id":"s2","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"t2","matched_ask_rule":{"source":"userSettings","tool_name":"Bash","rule_content":"ls"}}}`,
		`{"type":"control_request","request_id":"s3","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"t3","matched_ask_rule":null,"requires_user_interaction":false}}`,
	} {
		f.raw(r)
		id := r[strings.Index(r, `"request_id":"`)+14:][:2]
		if _, ok := f.waitResponse(id, time.Minute); !ok {
			f.result("no response to "+id, true, "error_during_execution")
			continue
		}
	}
	f.result("signals done", false, "success")
	return 0, false
}

func (f *fakeClaude) turnCancel(string) (int, bool) {
	f.askTool("A", "Bash", map[string]string{"command": "rm -rf build"})
	time.Sleep(150 * time.Millisecond)
	f.out(map[string]any{"type": "control_cancel_request", "request_id": "A"})
	f.askTool("B", "Bash", map[string]string{"command": "ls"})
	var got []string
	if _, ok := f.waitResponse("B", time.Minute); ok {
		got = append(got, "B")
	}
	if _, ok := f.waitResponse("A", 500*time.Millisecond); ok {
		got = append(got, "A")
	}
	f.result("responses="+strings.Join(got, ","), false, "success")
	return 0, false
}

// turnRace withdraws requests as soon as they are asked.
func (f *fakeClaude) turnRace(string) (int, bool) {
	for i := range 50 {
		id := fmt.Sprintf("r%d", i)
		f.askTool(id, "Bash", map[string]string{"command": "touch " + id})
		f.out(map[string]any{"type": "control_cancel_request", "request_id": id})
	}
	f.askTool("final", "Bash", map[string]string{"command": "ls"})
	r, ok := f.waitResponse("final", time.Minute)
	if !ok {
		r = "no response to final"
	}
	f.result(r, false, "success")
	return 0, false
}

// turnOrphan leaves a background process holding stdout and exits.
func (f *fakeClaude) turnOrphan(string) (int, bool) {
	bg := exec.Command("sleep", "60")
	bg.Stdout = os.Stdout
	if err := bg.Start(); err != nil {
		f.result("cannot start sleep: "+err.Error(), true, "success")
		return 0, false
	}
	f.result(strconv.Itoa(bg.Process.Pid), false, "success")
	return 0, true
}

// turnPartial is --include-partial-messages output.
func (f *fakeClaude) turnPartial(string) (int, bool) {
	ev := func(parent any, e map[string]any) {
		f.out(map[string]any{"type": "stream_event", "event": e, "parent_tool_use_id": parent, "session_id": fakeSID})
	}
	delta := func(parent any, text string) {
		ev(parent, map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": text}})
	}
	assistant := func(id, text string) {
		f.out(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{"id": id, "content": []any{map[string]any{"type": "text", "text": text}}}})
	}
	ev(nil, map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_a"}})
	delta(nil, "Hel")
	delta("toolu_sub", "a subagent's delta")
	delta(nil, "lo")
	ev(nil, map[string]any{"type": "content_block_delta", "index": 1, "delta": map[string]any{"type": "input_json_delta", "partial_json": "{}"}})
	assistant("msg_a", "Hello") // already streamed
	assistant("msg_b", "not streamed")
	f.result("Hello", false, "success")
	return 0, false
}

func (f *fakeClaude) turnUnknown(string) (int, bool) {
	f.out(map[string]any{"type": "control_request", "request_id": "m1", "request": map[string]any{"subtype": "mystery_subtype"}})
	r, ok := f.waitResponse("m1", time.Minute)
	if !ok {
		r = "no response"
	}
	f.result(r, false, "success")
	return 0, false
}

// turnFields sends can_use_tool as CLI 2.1.332 does, with every new field.
func (f *fakeClaude) turnFields(string) (int, bool) {
	f.out(map[string]any{"type": "control_request", "request_id": "f1", "request": map[string]any{
		"subtype": "can_use_tool", "tool_name": "mcp__github__create_issue", "display_name": "create_issue",
		"input": map[string]any{"title": "x"}, "tool_use_id": "toolu_f1",
		"mcp_server":      map[string]any{"name": "github", "source": "user"},
		"decision_reason": "Creates a public issue", "blocked_path": "/etc/hosts", "decision_reason_type": "rule",
		"requires_user_interaction": true, "suppress_always_allow_rule": true, "default_to_no": true,
		"matched_ask_rule": map[string]any{"source": "userSettings", "tool_name": "mcp__github__create_issue"},
	}})
	r1, _ := f.waitResponse("f1", time.Minute)
	f.out(map[string]any{"type": "control_request", "request_id": "f2", "request": map[string]any{
		"subtype": "can_use_tool", "tool_name": "Bash", "input": map[string]any{"command": "rm -rf x"}, "tool_use_id": "toolu_f2",
		"matched_ask_rule": "Bash(rm:*)", "mcp_server": "not an object",
	}})
	r2, _ := f.waitResponse("f2", time.Minute)
	f.askTool("f3", "Bash", map[string]any{"command": "ls"})
	r3, _ := f.waitResponse("f3", time.Minute)
	f.result(r1+"\n"+r2+"\n"+r3, false, "success")
	return 0, false
}

// turnElicit sends elicitations as CLI 2.1.332 does: a form, a link, one
// withdrawn.
func (f *fakeClaude) turnElicit(string) (int, bool) {
	f.out(map[string]any{"type": "control_request", "request_id": "e1", "request": map[string]any{
		"subtype": "elicitation", "mcp_server_name": "deployer", "message": "Configure", "mode": "form",
		"requested_schema": map[string]any{"type": "object", "properties": map[string]any{"env": map[string]any{"type": "string", "enum": []string{"stg", "prd"}}}},
		"property_order":   []string{"env"},
	}})
	r1, _ := f.waitResponse("e1", time.Minute)
	f.out(map[string]any{"type": "control_request", "request_id": "e2", "request": map[string]any{
		"subtype": "elicitation", "mcp_server_name": "auth", "message": "Sign in", "mode": "url", "url": "https://auth.example/x", "elicitation_id": "el-1",
	}})
	r2, _ := f.waitResponse("e2", time.Minute)
	f.out(map[string]any{"type": "control_request", "request_id": "e3", "request": map[string]any{
		"subtype": "elicitation", "mcp_server_name": "slow", "message": "never mind", "requested_schema": map[string]any{"properties": map[string]any{"x": map[string]any{"type": "string"}}},
	}})
	time.Sleep(100 * time.Millisecond)
	f.out(map[string]any{"type": "control_cancel_request", "request_id": "e3"})
	got := "none"
	if r3, ok := f.waitResponse("e3", 500*time.Millisecond); ok {
		got = r3
	}
	f.result(r1+"\n"+r2+"\n"+got, false, "success")
	return 0, false
}

// turnBackground is 2.1.3xx with state events: a background agent asks
// after the result, then the session goes idle.
func (f *fakeClaude) turnBackground(string) (int, bool) {
	state := func(st string) {
		f.out(map[string]any{"type": "system", "subtype": "session_state_changed", "state": st, "uuid": "u", "session_id": fakeSID})
	}
	state("running")
	f.result("main done", false, "success")
	f.askTool("bg1", "Bash", map[string]any{"command": "make bg"})
	r, ok := f.waitResponse("bg1", time.Minute)
	if !ok {
		r = "no response"
	}
	f.assistantText("bg: " + r)
	state("idle")
	return 0, false
}

func (f *fakeClaude) turnNotices(string) (int, bool) {
	f.out(map[string]any{"type": "system", "subtype": "permission_denied", "tool_name": "Bash", "tool_use_id": "toolu_9",
		"decision_reason_type": "rule", "decision_reason": "Bash(rm:*) is denied by your settings", "message": "Permission to use Bash has been denied.", "uuid": "u", "session_id": fakeSID})
	f.out(map[string]any{"type": "conversation_reset", "new_conversation_id": "c2", "uuid": "u", "session_id": "fake-session-2", "trigger": "clear"})
	f.out(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": "ok"}) // no session_id: the reset said it
	f.out(map[string]any{"type": "system", "subtype": "session_writes_lost", "error_code": "ENOSPC", "lost": []string{"transcript"}, "transcript_session_ids": []string{fakeSID}, "uuid": "u", "session_id": fakeSID})
	return 0, false
}

// turnDialog sends a user dialog of a kind leashd never declared: the
// CLI says not to answer it.
func (f *fakeClaude) turnDialog(string) (int, bool) {
	f.out(map[string]any{"type": "control_request", "request_id": "d1", "request": map[string]any{"subtype": "request_user_dialog", "dialog_kind": "refusal_fallback_prompt", "payload": map[string]any{}}})
	f.out(map[string]any{"type": "control_request", "request_id": "d2", "request": map[string]any{"subtype": "mystery_subtype"}})
	got := []string{}
	if _, ok := f.waitResponse("d2", time.Minute); ok {
		got = append(got, "d2")
	}
	if _, ok := f.waitResponse("d1", 500*time.Millisecond); ok {
		got = append(got, "d1")
	}
	f.result("responses="+strings.Join(got, ","), false, "success")
	return 0, false
}

func (f *fakeClaude) turnShapes(string) (int, bool) {
	f.askTool("s1", "Write", map[string]any{"file_path": "/tmp/x", "content": "y"})
	r1, _ := f.waitResponse("s1", time.Minute)
	f.askTool("s2", "Bash", map[string]any{"command": "rm x"})
	r2, _ := f.waitResponse("s2", time.Minute)
	f.result(r1+"\n"+r2, false, "success")
	return 0, false
}

// turnWait works until interrupted.
func (f *fakeClaude) turnWait(string) (int, bool) {
	f.assistantText("working")
	for {
		select {
		case <-f.interrupted:
			f.result("", true, "error_during_execution")
			return 0, false
		case m, ok := <-f.in:
			if !ok {
				return 0, true
			}
			f.handleControl(m)
		}
	}
}

// turnDeaf ignores interrupts.
func (f *fakeClaude) turnDeaf(string) (int, bool) {
	for m := range f.in {
		if m.Type == "control_request" && fakeSubtype(m) == "interrupt" {
			continue
		}
		f.handleControl(m)
	}
	return 0, true
}
