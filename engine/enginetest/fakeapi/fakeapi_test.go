package fakeapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

type sse struct {
	event string
	data  map[string]any
}

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url+"/v1/messages?beta=true", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func readSSE(t *testing.T, resp *http.Response) []sse {
	t.Helper()
	var out []sse
	sc := bufio.NewScanner(resp.Body)
	var ev string
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			ev = name
		} else if data, ok := strings.CutPrefix(line, "data: "); ok {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(data), &m))
			require.Equal(t, ev, m["type"], "event name and data type agree")
			out = append(out, sse{ev, m})
		}
	}
	return out
}

const callBody = `{"model":"claude-x","stream":true,"tools":[{"name":"Bash"}],"messages":[
 {"role":"user","content":"hello"},
 {"role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]},
 {"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":[{"type":"text","text":"a.txt"},{"type":"text","text":"b.txt"}],"is_error":true}]},
 {"role":"system","content":"a reminder"}]}`

func TestStreamsTextAndToolUseAsTheAPIDoes(t *testing.T) {
	api := fakeapi.New(t)
	api.Reply(fakeapi.Reply{Text: "Let me check — ✓", Tools: []fakeapi.ToolUse{{Name: "Bash", Input: map[string]string{"command": "echo hi"}}}})
	evs := readSSE(t, post(t, api.URL, callBody))
	var names []string
	text, input := "", ""
	for _, e := range evs {
		names = append(names, e.event)
		if d, ok := e.data["delta"].(map[string]any); ok {
			switch d["type"] {
			case "text_delta":
				text += d["text"].(string)
			case "input_json_delta":
				input += d["partial_json"].(string)
			}
		}
	}
	assert.Equal(t, []string{"message_start", "ping",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
		"message_delta", "message_stop"}, names)
	assert.Equal(t, "Let me check — ✓", text)
	assert.JSONEq(t, `{"command":"echo hi"}`, input)
	stop := evs[len(evs)-2].data["delta"].(map[string]any)["stop_reason"]
	assert.Equal(t, "tool_use", stop)
	start := evs[7].data["content_block"].(map[string]any)
	assert.Equal(t, "toolu_fake0001", start["id"])

	calls := api.Calls()
	require.Len(t, calls, 1)
	c := calls[0]
	assert.Equal(t, "claude-x", c.Model)
	assert.Equal(t, []string{"Bash"}, c.Tools)
	assert.True(t, c.HasUserText("hello"))
	res, ok := c.ToolResult("toolu_1")
	require.True(t, ok)
	assert.True(t, res.IsError)
	assert.Equal(t, "a.txt\nb.txt", res.ResultText())
	assert.Equal(t, "toolu_fake0001", c.Reply.Tools[0].ID)
	assert.Equal(t, 0, api.Unscripted())
}

func TestEmptyScriptOtherwiseAndSideRequests(t *testing.T) {
	api := fakeapi.New(t)
	evs := readSSE(t, post(t, api.URL, callBody))
	require.NotEmpty(t, evs)
	assert.Equal(t, 1, api.Unscripted(), "an unscripted call is counted")
	api.Otherwise(func(r *fakeapi.Request) fakeapi.Reply { return fakeapi.Text("fallback") })
	readSSE(t, post(t, api.URL, callBody))
	assert.Equal(t, 1, api.Unscripted())
	assert.Equal(t, "fallback", api.Calls()[1].Reply.Text)

	// a call without tools (a side call) is not scripted
	resp := post(t, api.URL, `{"model":"m","messages":[{"role":"user","content":"title?"}]}`)
	var m map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	assert.Equal(t, "message", m["type"])
	r, err := http.Post(api.URL+"/v1/messages/count_tokens", "application/json", strings.NewReader(`{}`))
	require.NoError(t, err)
	r.Body.Close()
	assert.Len(t, api.Side(), 2)
	assert.Len(t, api.Calls(), 2)
}

func TestAPIErrorAndHold(t *testing.T) {
	api := fakeapi.New(t)
	hold := make(chan struct{})
	api.Reply(fakeapi.Reply{Status: 529, Error: "Overloaded"}, fakeapi.Reply{Hold: hold, Text: "late"})
	resp := post(t, api.URL, callBody)
	assert.Equal(t, 529, resp.StatusCode)
	var m map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	assert.Equal(t, "overloaded_error", m["error"].(map[string]any)["type"])

	got := make(chan []byte, 1)
	go func() {
		resp, err := http.Post(api.URL+"/v1/messages", "application/json", strings.NewReader(callBody))
		if err != nil {
			got <- nil
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body) // until the stream ends
		got <- b
	}()
	api.WaitCalls(t, 2, 10*time.Second)
	select {
	case <-got:
		t.Fatal("a held reply finished before it was released")
	case <-time.After(100 * time.Millisecond):
	}
	close(hold)
	body := <-got
	evs := readSSE(t, &http.Response{Body: io.NopCloser(bytes.NewReader(body))})
	require.NotEmpty(t, evs)
	assert.Equal(t, "message_stop", evs[len(evs)-1].event)
}

func TestAbandonedHold(t *testing.T) {
	api := fakeapi.New(t)
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	api.Reply(fakeapi.Reply{Hold: hold}, fakeapi.Text("answered in full"))

	ctx, cancel := context.WithCancel(t.Context())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, api.URL+"/v1/messages", strings.NewReader(callBody))
	require.NoError(t, err)
	go func() {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	held := api.WaitCalls(t, 1, 10*time.Second)[0]
	select {
	case <-held.Abandoned():
		t.Fatal("a held call is abandoned before the client went away")
	default:
	}
	cancel()
	select {
	case <-held.Abandoned():
	case <-time.After(10 * time.Second):
		t.Fatal("the client went away but the held call is not marked abandoned")
	}

	readSSE(t, post(t, api.URL, callBody))
	full := api.Calls()[1]
	select {
	case <-full.Abandoned():
		t.Fatal("a call answered in full is marked abandoned")
	default:
	}
}

// sseTools are the tool_use blocks of a streamed reply: name and input.
func sseTools(t *testing.T, evs []sse) (ids, names []string, inputs []string) {
	t.Helper()
	for _, e := range evs {
		if cb, ok := e.data["content_block"].(map[string]any); ok && cb["type"] == "tool_use" {
			ids = append(ids, cb["id"].(string))
			names = append(names, cb["name"].(string))
			inputs = append(inputs, "")
		}
		if d, ok := e.data["delta"].(map[string]any); ok && d["type"] == "input_json_delta" {
			inputs[len(inputs)-1] += d["partial_json"].(string)
		}
	}
	return ids, names, inputs
}

// newCLIBody is a request as the current CLI sends it in plan mode:
// ExitPlanMode deferred (listed in a system message, not in tools), the
// plan file named in the prompt; results are the turn's messages so far.
func newCLIBody(t *testing.T, planPath string, results ...string) string {
	t.Helper()
	msgs := []any{
		map[string]any{"role": "user", "content": "make a plan"},
		map[string]any{"role": "system", "content": "The following deferred tools are now available via ToolSearch. Use ToolSearch with query \"select:<name>[,<name>...]\" to load tool schemas before calling them:\nEnterPlanMode\nExitPlanMode\nWebFetch\n\nAvailable agent types: …"},
	}
	for i := 0; i+1 < len(results); i += 2 {
		msgs = append(msgs,
			map[string]any{"role": "assistant", "content": []any{map[string]any{"type": "tool_use", "id": results[i], "name": "X", "input": map[string]any{}}}},
			map[string]any{"role": "user", "content": []any{
				map[string]any{"type": "tool_result", "tool_use_id": results[i], "content": results[i+1]},
				map[string]any{"type": "text", "text": "Tool loaded."}}},
			map[string]any{"role": "system", "content": "a reminder after the result"})
	}
	b, err := json.Marshal(map[string]any{
		"model": "m", "stream": true,
		"system":   []any{map[string]any{"type": "text", "text": "## Plan File Info:\nNo plan file exists yet. You should create your plan at " + planPath + " using the Write tool.\n"}},
		"tools":    []any{map[string]any{"name": "Write"}, map[string]any{"name": "Read"}, map[string]any{"name": "ToolSearch"}},
		"messages": msgs,
	})
	require.NoError(t, err)
	return string(b)
}

// Against the current CLI the scripted ExitPlanMode {"plan"} becomes what
// its model does: ToolSearch loads the deferred tool, Write puts the plan
// in the plan file, ExitPlanMode goes without "plan" — under the script's
// own tool_use ID, and Calls holds only the scripted call.
func TestScriptedPlanIsPreparedLikeTheCurrentModel(t *testing.T) {
	api := fakeapi.New(t)
	api.Reply(fakeapi.Tool("ExitPlanMode", map[string]string{"plan": "# Plan\n1. x"}), fakeapi.Text("after"))
	plan := "/home/u/.claude/plans/plan-odd-fox.md"

	ids, names, inputs := sseTools(t, readSSE(t, post(t, api.URL, newCLIBody(t, plan))))
	require.Equal(t, []string{"ToolSearch"}, names)
	assert.JSONEq(t, `{"query":"select:ExitPlanMode","max_results":1}`, inputs[0])
	search := ids[0]

	ids, names, inputs = sseTools(t, readSSE(t, post(t, api.URL, newCLIBody(t, plan, search, "loaded"))))
	require.Equal(t, []string{"Write"}, names)
	assert.JSONEq(t, `{"file_path":"`+plan+`","content":"# Plan\n1. x"}`, inputs[0])
	write := ids[0]

	ids, names, inputs = sseTools(t, readSSE(t, post(t, api.URL, newCLIBody(t, plan, search, "loaded", write, "File created"))))
	require.Equal(t, []string{"ExitPlanMode"}, names)
	assert.JSONEq(t, `{}`, inputs[0])
	assert.Equal(t, "toolu_fake0001", ids[0], "the script's own ID")

	evs := readSSE(t, post(t, api.URL, newCLIBody(t, plan, search, "loaded", write, "File created", ids[0], "approved")))
	text := ""
	for _, e := range evs {
		if d, ok := e.data["delta"].(map[string]any); ok && d["type"] == "text_delta" {
			text += d["text"].(string)
		}
	}
	assert.Equal(t, "after", text)
	calls := api.Calls()
	require.Len(t, calls, 2, "preparation steps are not the script's calls")
	assert.Equal(t, "toolu_fake0001", calls[0].Reply.Tools[0].ID)
	res, ok := calls[1].ToolResult("toolu_fake0001")
	require.True(t, ok, "the result is found though text and a system message follow it")
	assert.Equal(t, "approved", res.ResultText())
	assert.Len(t, api.Prepared(), 2)
	assert.Equal(t, 0, api.Unscripted())
}

// An old CLI offers ExitPlanMode directly and names no plan file: the
// scripted call goes out as written.
func TestScriptedPlanGoesAsIsToAnOldCLI(t *testing.T) {
	api := fakeapi.New(t)
	api.Reply(fakeapi.Tool("ExitPlanMode", map[string]string{"plan": "# Plan"}))
	body := `{"model":"m","stream":true,"tools":[{"name":"ExitPlanMode"},{"name":"Write"}],"messages":[{"role":"user","content":"plan"}]}`
	_, names, inputs := sseTools(t, readSSE(t, post(t, api.URL, body)))
	assert.Equal(t, []string{"ExitPlanMode"}, names)
	assert.JSONEq(t, `{"plan":"# Plan"}`, inputs[0])
	assert.Empty(t, api.Prepared())
}

func TestDeferredToolsAndPlanFile(t *testing.T) {
	r := &fakeapi.Request{
		System: json.RawMessage(`"A plan file already exists at /h/.claude/plans/p-q.md. You can read it."`),
		Messages: []fakeapi.Message{{Role: "system", Content: []fakeapi.Block{{Type: "text",
			Text: "The following deferred tools are now available via ToolSearch:\nExitPlanMode\nmcp__srv__do_it\n\nNot a tool: here"}}}},
	}
	assert.Equal(t, []string{"ExitPlanMode", "mcp__srv__do_it"}, r.DeferredTools())
	assert.Equal(t, "/h/.claude/plans/p-q.md", r.PlanFile())
	assert.Empty(t, (&fakeapi.Request{}).DeferredTools())
	assert.Empty(t, (&fakeapi.Request{}).PlanFile())
}

func FuzzDeferredToolsAndPlanFile(f *testing.F) {
	f.Add("The following deferred tools are now available via ToolSearch:\nA\nB\n\nx", "create your plan at /p/x.md using the Write tool")
	f.Add("deferred tools:\n", "plan file already exists at .md")
	f.Add("deferred tools", "")
	f.Fuzz(func(t *testing.T, text, sys string) {
		b, _ := json.Marshal(sys)
		r := &fakeapi.Request{System: b, Messages: []fakeapi.Message{{Role: "user", Content: []fakeapi.Block{{Type: "text", Text: text}}}}}
		for _, n := range r.DeferredTools() {
			if n == "" || strings.ContainsAny(n, " \n:") {
				t.Fatalf("not a tool name: %q", n)
			}
		}
		if p := r.PlanFile(); p != "" && !strings.HasSuffix(p, ".md") {
			t.Fatalf("plan file %q", p)
		}
	})
}
