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

	"github.com/leashd/leashd/engine/claude/fakeapi"
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
