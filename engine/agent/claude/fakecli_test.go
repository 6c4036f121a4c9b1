package claude

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as a fake Claude Code CLI: with
// LEASHD_FAKE_CLAUDE set it speaks the stream-json protocol instead of
// running tests. LEASHD_FAKE_CLAUDE selects start-up behaviour; what a turn
// does is chosen by its prompt's first word.
func TestMain(m *testing.M) {
	if mode := os.Getenv("LEASHD_FAKE_CLAUDE"); mode != "" {
		os.Exit(fakeCLI(mode))
	}
	os.Exit(m.Run())
}

// Size of the huge (but acceptable) line the "garbage" turn prints.
const hugeText = 16<<20 + 1

// fakeLimit is the line limit the tests give the driver, so that the
// over-long line need not be 64 MiB.
const fakeLimit = 16<<20 + 64<<10

// floodBytes is the size of each huge line the "flood" turn prints
// (LEASHD_FAKE_FLOOD_BYTES, default 50 MB).
func floodBytes() int {
	if n, err := strconv.Atoi(os.Getenv("LEASHD_FAKE_FLOOD_BYTES")); err == nil && n > 0 {
		return n
	}
	return 50 << 20
}

func fakeCLI(mode string) int {
	w := bufio.NewWriterSize(os.Stdout, 1<<20)
	out := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		w.Write(b)
		w.WriteByte('\n')
		w.Flush()
	}
	raw := func(s string) {
		w.WriteString(s)
		w.WriteByte('\n')
		w.Flush()
	}
	switch mode {
	case "exit-early":
		fmt.Fprintln(os.Stderr, "error: unknown option '--bogus'\nRun claude --help for usage.")
		return 2
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
	case "close-stdin": // answers the handshake, then stops reading but lives on
		line, _ := bufio.NewReader(os.Stdin).ReadBytes('\n')
		var m struct {
			RequestID string `json:"request_id"`
		}
		json.Unmarshal(line, &m)
		out(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": m.RequestID, "response": map[string]any{}}})
		os.Stdin.Close()
		select {}
	}

	type msg struct {
		Type      string          `json:"type"`
		RequestID string          `json:"request_id"`
		Request   json.RawMessage `json:"request"`
		Response  json.RawMessage `json:"response"`
		Message   struct {
			Content string `json:"content"`
		} `json:"message"`
		raw string
	}
	in := make(chan msg)
	go func() {
		defer close(in)
		sc := bufio.NewScanner(os.Stdin)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var m msg
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				fmt.Fprintln(os.Stderr, "fake claude: bad input line:", err)
				continue
			}
			m.raw = sc.Text()
			in <- m
		}
	}()
	subtype := func(m msg) string {
		var r struct {
			Subtype string `json:"subtype"`
			Mode    string `json:"mode"`
		}
		json.Unmarshal(m.Request, &r)
		return r.Subtype
	}
	respond := func(id string, body any) {
		out(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": id, "response": body}})
	}
	const sid = "fake-session-1"
	result := func(text string, isErr bool, sub string) {
		out(map[string]any{"type": "result", "subtype": sub, "is_error": isErr, "result": text, "session_id": sid, "total_cost_usd": 0.25, "num_turns": 2, "duration_ms": 7})
	}
	askTool := func(id, tool string, input any) {
		out(map[string]any{"type": "control_request", "request_id": id, "request": map[string]any{
			"subtype": "can_use_tool", "tool_name": tool, "input": input, "tool_use_id": "toolu_" + id,
			"permission_suggestions": []any{map[string]any{"type": "addRules", "rules": []any{map[string]string{"toolName": tool}}, "behavior": "allow", "destination": "localSettings"}},
		}})
	}
	// waitResponse waits for the control_response to id, handling other
	// control requests meanwhile; it returns the raw response body.
	mode2 := "default"
	var handleControl func(m msg)
	waitResponse := func(id string, d time.Duration) (string, bool) {
		timeout := time.After(d)
		for {
			select {
			case m, ok := <-in:
				if !ok {
					return "", false
				}
				if m.Type == "control_response" {
					var r struct {
						RequestID string `json:"request_id"`
					}
					json.Unmarshal(m.Response, &r)
					if r.RequestID == id {
						return string(m.Response), true
					}
					continue
				}
				handleControl(m)
			case <-timeout:
				return "", false
			}
		}
	}
	interrupted := make(chan struct{}, 1)
	handleControl = func(m msg) {
		if m.Type != "control_request" {
			return
		}
		switch subtype(m) {
		case "initialize":
			if mode == "no-init" {
				return
			}
			respond(m.RequestID, map[string]any{"commands": []any{}, "models": []any{}})
		case "set_permission_mode":
			var r struct {
				Mode string `json:"mode"`
			}
			json.Unmarshal(m.Request, &r)
			if r.Mode == "bogus" {
				out(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "error", "request_id": m.RequestID, "error": "Invalid permission mode: bogus"}})
				return
			}
			mode2 = r.Mode
			respond(m.RequestID, map[string]any{})
		case "interrupt":
			respond(m.RequestID, map[string]any{})
			select {
			case interrupted <- struct{}{}:
			default:
			}
		}
	}
	if mode == "garbage-at-start" {
		raw("Debugger listening on ws://127.0.0.1:9229")
		raw("{not json")
	}
	for m := range in {
		if m.Type != "user" {
			handleControl(m)
			continue
		}
		out(map[string]any{"type": "system", "subtype": "init", "session_id": sid, "cwd": "ignored"})
		prompt := m.Message.Content
		word, rest, _ := strings.Cut(prompt, " ")
		switch word {
		case "echo":
			out(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{"content": []any{map[string]any{"type": "text", "text": "you said: " + rest}}}})
			result("you said: "+rest, false, "success")
		case "args":
			cwd, _ := os.Getwd()
			result(strings.Join(os.Args[1:], " ")+"|cwd="+cwd+"|extra="+os.Getenv("LEASHD_FAKE_EXTRA"), false, "success")
		case "mode":
			result("mode="+mode2, false, "success")
		case "garbage":
			raw("this is not JSON")
			raw("   ")
			raw(`{"broken": `)
			raw(`{"no_type": true}`)
			raw(`{"type":"control_request","request":{"subtype":"can_use_tool"}}`)
			raw(`{"type":"control_response","response":"not an object"}`)
			raw(`{"type":"assistant","message":{"content":42}}`)
			raw(`["an","array"]`)
			raw(`{"type":"some_future_type","x":1}`)
			raw(strings.Repeat("x", fakeLimit+10)) // over the limit: skipped
			// Written by hand: encoding 17 MiB under the race detector is slow.
			raw(`{"type":"assistant","parent_tool_use_id":null,"message":{"content":[{"type":"text","text":"` + strings.Repeat("h", hugeText) +
				`"},{"type":"tool_use","id":"toolu_1","name":"Read","input":{"file_path":"/x"}}]}}`)
			out(map[string]any{"type": "assistant", "parent_tool_use_id": "toolu_1", "message": map[string]any{"content": []any{map[string]any{"type": "text", "text": "a subagent's text"}}}})
			out(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{"content": "plain string content"}})
			result("survived", false, "success")
		case "flood": // hostile output: huge lines of every kind that matters
			n := floodBytes()
			big := strings.Repeat("A", n)
			raw(`{"type":"assistant","parent_tool_use_id":null,"message":{"id":"msg_f","content":[{"type":"text","text":"` + big + `"}]}}`)
			raw(`{"type":"control_request","request_id":"big1","request":{"subtype":"can_use_tool","tool_name":"Write","input":{"file_path":"/tmp/x","content":"` + big + `"},"tool_use_id":"toolu_big1"}}`)
			r, ok := waitResponse("big1", 10*time.Second)
			if !ok {
				r = "no response to big1"
			}
			out(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{"content": []any{map[string]any{"type": "text", "text": "big1 answered: " + r}}}})
			raw(`{"type":"result","subtype":"success","is_error":false,"session_id":"` + sid + `","num_turns":1,"total_cost_usd":0.5,"result":"` + big + `"}`)
		case "die":
			askTool("q1", "AskUserQuestion", map[string]any{"questions": []any{}})
			time.Sleep(200 * time.Millisecond)
			fmt.Fprintln(os.Stderr, "fatal: the model exploded")
			return 3
		case "signals": // can_use_tool with the newer CLI's "a person must decide" fields
			for _, r := range []string{
				`{"type":"control_request","request_id":"s1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"t1","requires_user_interaction":true}}`,
				`{"type":"control_request","request_id":"s2","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"t2","matched_ask_rule":{"source":"userSettings","tool_name":"Bash","rule_content":"ls"}}}`,
				`{"type":"control_request","request_id":"s3","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"t3","matched_ask_rule":null,"requires_user_interaction":false}}`,
			} {
				raw(r)
				id := r[strings.Index(r, `"request_id":"`)+14:][:2]
				if _, ok := waitResponse(id, 10*time.Second); !ok {
					result("no response to "+id, true, "error_during_execution")
					continue
				}
			}
			result("signals done", false, "success")
		case "cancel":
			askTool("A", "Bash", map[string]string{"command": "rm -rf build"})
			time.Sleep(150 * time.Millisecond)
			out(map[string]any{"type": "control_cancel_request", "request_id": "A"})
			askTool("B", "Bash", map[string]string{"command": "ls"})
			var got []string
			if _, ok := waitResponse("B", 10*time.Second); ok {
				got = append(got, "B")
			}
			if _, ok := waitResponse("A", 500*time.Millisecond); ok {
				got = append(got, "A")
			}
			result("responses="+strings.Join(got, ","), false, "success")
		case "race": // requests withdrawn as soon as they are asked
			for i := range 50 {
				id := fmt.Sprintf("r%d", i)
				askTool(id, "Bash", map[string]string{"command": "touch " + id})
				out(map[string]any{"type": "control_cancel_request", "request_id": id})
			}
			askTool("final", "Bash", map[string]string{"command": "ls"})
			r, ok := waitResponse("final", 10*time.Second)
			if !ok {
				r = "no response to final"
			}
			result(r, false, "success")
		case "orphan": // leaves a background process holding stdout and exits
			bg := exec.Command("sleep", "60")
			bg.Stdout = os.Stdout
			if err := bg.Start(); err != nil {
				result("cannot start sleep: "+err.Error(), true, "success")
				continue
			}
			result(strconv.Itoa(bg.Process.Pid), false, "success")
			return 0
		case "partial": // --include-partial-messages output
			ev := func(parent any, e map[string]any) {
				out(map[string]any{"type": "stream_event", "event": e, "parent_tool_use_id": parent, "session_id": sid})
			}
			delta := func(parent any, text string) {
				ev(parent, map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": text}})
			}
			assistant := func(id, text string) {
				out(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{"id": id, "content": []any{map[string]any{"type": "text", "text": text}}}})
			}
			ev(nil, map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_a"}})
			delta(nil, "Hel")
			delta("toolu_sub", "a subagent's delta")
			delta(nil, "lo")
			ev(nil, map[string]any{"type": "content_block_delta", "index": 1, "delta": map[string]any{"type": "input_json_delta", "partial_json": "{}"}})
			assistant("msg_a", "Hello") // already streamed
			assistant("msg_b", "not streamed")
			result("Hello", false, "success")
		case "unknown":
			out(map[string]any{"type": "control_request", "request_id": "m1", "request": map[string]any{"subtype": "mystery_subtype"}})
			r, ok := waitResponse("m1", 10*time.Second)
			if !ok {
				r = "no response"
			}
			result(r, false, "success")
		case "fields": // can_use_tool as CLI 2.1.332 sends it, with every new field
			out(map[string]any{"type": "control_request", "request_id": "f1", "request": map[string]any{
				"subtype": "can_use_tool", "tool_name": "mcp__github__create_issue", "display_name": "create_issue",
				"input": map[string]any{"title": "x"}, "tool_use_id": "toolu_f1",
				"mcp_server":      map[string]any{"name": "github", "source": "user"},
				"decision_reason": "Creates a public issue", "blocked_path": "/etc/hosts", "decision_reason_type": "rule",
				"requires_user_interaction": true, "suppress_always_allow_rule": true, "default_to_no": true,
				"matched_ask_rule": map[string]any{"source": "userSettings", "tool_name": "mcp__github__create_issue"},
			}})
			r1, _ := waitResponse("f1", 10*time.Second)
			out(map[string]any{"type": "control_request", "request_id": "f2", "request": map[string]any{
				"subtype": "can_use_tool", "tool_name": "Bash", "input": map[string]any{"command": "rm -rf x"}, "tool_use_id": "toolu_f2",
				"matched_ask_rule": "Bash(rm:*)", "mcp_server": "not an object",
			}})
			r2, _ := waitResponse("f2", 10*time.Second)
			askTool("f3", "Bash", map[string]any{"command": "ls"})
			r3, _ := waitResponse("f3", 10*time.Second)
			result(r1+"\n"+r2+"\n"+r3, false, "success")
		case "elicit": // elicitations as CLI 2.1.332 sends them: a form, a link, one withdrawn
			out(map[string]any{"type": "control_request", "request_id": "e1", "request": map[string]any{
				"subtype": "elicitation", "mcp_server_name": "deployer", "message": "Configure", "mode": "form",
				"requested_schema": map[string]any{"type": "object", "properties": map[string]any{"env": map[string]any{"type": "string", "enum": []string{"stg", "prd"}}}},
				"property_order":   []string{"env"},
			}})
			r1, _ := waitResponse("e1", 10*time.Second)
			out(map[string]any{"type": "control_request", "request_id": "e2", "request": map[string]any{
				"subtype": "elicitation", "mcp_server_name": "auth", "message": "Sign in", "mode": "url", "url": "https://auth.example/x", "elicitation_id": "el-1",
			}})
			r2, _ := waitResponse("e2", 10*time.Second)
			out(map[string]any{"type": "control_request", "request_id": "e3", "request": map[string]any{
				"subtype": "elicitation", "mcp_server_name": "slow", "message": "never mind", "requested_schema": map[string]any{"properties": map[string]any{"x": map[string]any{"type": "string"}}},
			}})
			time.Sleep(100 * time.Millisecond)
			out(map[string]any{"type": "control_cancel_request", "request_id": "e3"})
			got := "none"
			if r3, ok := waitResponse("e3", 500*time.Millisecond); ok {
				got = r3
			}
			result(r1+"\n"+r2+"\n"+got, false, "success")
		case "background": // 2.1.3xx with state events: a background agent asks after the result, then idle
			state := func(st string) {
				out(map[string]any{"type": "system", "subtype": "session_state_changed", "state": st, "uuid": "u", "session_id": sid})
			}
			state("running")
			result("main done", false, "success")
			askTool("bg1", "Bash", map[string]any{"command": "make bg"})
			r, ok := waitResponse("bg1", 10*time.Second)
			if !ok {
				r = "no response"
			}
			out(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{"content": []any{map[string]any{"type": "text", "text": "bg: " + r}}}})
			state("idle")
		case "notices":
			out(map[string]any{"type": "system", "subtype": "permission_denied", "tool_name": "Bash", "tool_use_id": "toolu_9",
				"decision_reason_type": "rule", "decision_reason": "Bash(rm:*) is denied by your settings", "message": "Permission to use Bash has been denied.", "uuid": "u", "session_id": sid})
			out(map[string]any{"type": "conversation_reset", "new_conversation_id": "c2", "uuid": "u", "session_id": "fake-session-2", "trigger": "clear"})
			out(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": "ok"}) // no session_id: the reset said it
			out(map[string]any{"type": "system", "subtype": "session_writes_lost", "error_code": "ENOSPC", "lost": []string{"transcript"}, "transcript_session_ids": []string{sid}, "uuid": "u", "session_id": sid})
		case "dialog": // a user dialog of a kind leashd never declared: the CLI says not to answer it
			out(map[string]any{"type": "control_request", "request_id": "d1", "request": map[string]any{"subtype": "request_user_dialog", "dialog_kind": "refusal_fallback_prompt", "payload": map[string]any{}}})
			out(map[string]any{"type": "control_request", "request_id": "d2", "request": map[string]any{"subtype": "mystery_subtype"}})
			got := []string{}
			if _, ok := waitResponse("d2", 10*time.Second); ok {
				got = append(got, "d2")
			}
			if _, ok := waitResponse("d1", 500*time.Millisecond); ok {
				got = append(got, "d1")
			}
			result("responses="+strings.Join(got, ","), false, "success")
		case "shapes":
			askTool("s1", "Write", map[string]any{"file_path": "/tmp/x", "content": "y"})
			r1, _ := waitResponse("s1", 10*time.Second)
			askTool("s2", "Bash", map[string]any{"command": "rm x"})
			r2, _ := waitResponse("s2", 10*time.Second)
			result(r1+"\n"+r2, false, "success")
		case "wait":
			out(map[string]any{"type": "assistant", "parent_tool_use_id": nil, "message": map[string]any{"content": []any{map[string]any{"type": "text", "text": "working"}}}})
			for {
				select {
				case <-interrupted:
					result("", true, "error_during_execution")
				case m, ok := <-in:
					if !ok {
						return 0
					}
					handleControl(m)
					continue
				}
				break
			}
		case "deaf": // ignores interrupts
			for m := range in {
				if m.Type == "control_request" && subtype(m) == "interrupt" {
					continue
				}
				handleControl(m)
			}
			return 0
		default:
			result("unknown prompt", true, "success")
		}
	}
	// stdin closed
	if mode == "ignore-term" || mode == "term-exits" {
		select {} // only a signal ends this
	}
	return 0
}
