package discordfake_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/discord/discordfake"
)

const token = "fake-token"

func do(t *testing.T, f *discordfake.Server, method, path string, body any) (*http.Response, string) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, err := http.NewRequest(method, f.URL()+"api/v10/"+path, bytes.NewReader(raw))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bot "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var b bytes.Buffer
	_, _ = b.ReadFrom(resp.Body)
	return resp, b.String()
}

func buttons(n int, idLen int) []any {
	var out []any
	for i := range n {
		out = append(out, map[string]any{"type": 2, "style": 1, "label": "b", "custom_id": fmt.Sprintf("%0*d", idLen, i)})
	}
	return out
}

func row(items ...any) any { return map[string]any{"type": 1, "components": items} }

// What breaks Discord's limits is refused with 400 and recorded; what
// keeps them is posted.
func TestMessageLimits(t *testing.T) {
	f := discordfake.New(token)
	defer f.Close()
	ok := map[string]any{"content": strings.Repeat("x", 2000), "components": []any{row(buttons(5, 100)...)}}
	resp, _ := do(t, f, "POST", "channels/1/messages", ok)
	assert.Equal(t, 200, resp.StatusCode)
	for name, body := range map[string]any{
		"2001 characters":  map[string]any{"content": strings.Repeat("x", 2001)},
		"6 rows":           map[string]any{"content": "x", "components": []any{row(buttons(1, 1)...), row(buttons(1, 2)...), row(buttons(1, 3)...), row(buttons(1, 4)...), row(buttons(1, 5)...), row(buttons(1, 6)...)}},
		"6 buttons a row":  map[string]any{"content": "x", "components": []any{row(buttons(6, 3)...)}},
		"custom_id of 101": map[string]any{"content": "x", "components": []any{row(buttons(1, 101)...)}},
		"repeated id":      map[string]any{"content": "x", "components": []any{row(buttons(1, 3)...), row(buttons(1, 3)...)}},
		"empty":            map[string]any{"content": " "},
	} {
		before := len(f.Rejected())
		resp, body := do(t, f, "POST", "channels/1/messages", body)
		assert.Equal(t, 400, resp.StatusCode, name)
		assert.Contains(t, body, "Invalid Form Body", name)
		assert.Len(t, f.Rejected(), before+1, name)
	}
	assert.Len(t, f.Messages("1"), 1)
	resp, _ = do(t, f, "GET", "users/@me", nil)
	assert.Equal(t, 200, resp.StatusCode)
	req, _ := http.NewRequest("GET", f.URL()+"api/v10/users/@me", nil)
	req.Header.Set("Authorization", "Bot wrong")
	r2, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	r2.Body.Close()
	assert.Equal(t, 401, r2.StatusCode)
}

// A 429 carries retry_after and the X-RateLimit headers; a request before
// it has passed is a violation.
func TestRateLimits(t *testing.T) {
	f := discordfake.New(token)
	defer f.Close()
	f.RateLimit("POST channels/{id}/messages", 500*time.Millisecond, true)
	resp, body := do(t, f, "POST", "channels/1/messages", map[string]any{"content": "x"})
	assert.Equal(t, 429, resp.StatusCode)
	assert.Contains(t, body, `"retry_after":0.5`)
	assert.Equal(t, "true", resp.Header.Get("X-RateLimit-Global"))
	assert.Equal(t, "0.500", resp.Header.Get("X-RateLimit-Reset-After"))
	resp, _ = do(t, f, "GET", "users/@me", nil)
	assert.Equal(t, 200, resp.StatusCode)
	assert.Len(t, f.Violations(), 1, "sent during a global 429's retry_after")

}

// A bucket's limit answers 429 by itself once it is used up.
func TestBucketLimit(t *testing.T) {
	f := discordfake.New(token)
	defer f.Close()
	f.SetBucket(2, time.Minute)
	for i, want := range []int{200, 200, 429} {
		resp, _ := do(t, f, "GET", "users/@me", nil)
		assert.Equal(t, want, resp.StatusCode, "request %d", i)
		if want == 200 {
			assert.Equal(t, fmt.Sprint(1-i), resp.Header.Get("X-RateLimit-Remaining"))
		}
	}
	assert.Empty(t, f.Violations())
}

// The Gateway: HELLO, then a bad token or missing intents are closed
// with Discord's codes; a good IDENTIFY gets READY, heartbeats their ACK.
func TestGatewayHandshake(t *testing.T) {
	f := discordfake.New(token)
	defer f.Close()
	url := "ws" + strings.TrimPrefix(f.URL(), "http") + "gateway/?v=10&encoding=json"
	dial := func(identify map[string]any) (*websocket.Conn, error) {
		c, _, err := websocket.DefaultDialer.Dial(url, nil)
		require.NoError(t, err)
		var hello map[string]any
		require.NoError(t, c.ReadJSON(&hello))
		assert.EqualValues(t, 10, hello["op"])
		require.NoError(t, c.WriteJSON(map[string]any{"op": 2, "d": identify}))
		return c, nil
	}
	all := 1<<9 | 1<<12 | 1<<15
	for code, id := range map[int]map[string]any{
		4004: {"token": "Bot wrong", "intents": all},
		4014: {"token": "Bot " + token, "intents": 1 << 9},
	} {
		c, _ := dial(id)
		_, _, err := c.ReadMessage()
		var ce *websocket.CloseError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, code, ce.Code)
		c.Close()
	}
	c, _ := dial(map[string]any{"token": "Bot " + token, "intents": all})
	defer c.Close()
	var ready map[string]any
	require.NoError(t, c.ReadJSON(&ready))
	assert.Equal(t, "READY", ready["t"])
	require.NoError(t, c.WriteJSON(map[string]any{"op": 1, "d": 1}))
	var ack map[string]any
	require.NoError(t, c.ReadJSON(&ack))
	assert.EqualValues(t, 11, ack["op"])
}

// An interaction answered after 3 s, or twice, is refused as Discord
// refuses it ("Unknown interaction", "already acknowledged").
func TestInteractionDeadline(t *testing.T) {
	f := discordfake.New(token)
	defer f.Close()
	url := "ws" + strings.TrimPrefix(f.URL(), "http") + "gateway/"
	c, _, err := websocket.DefaultDialer.Dial(url, nil)
	require.NoError(t, err)
	defer c.Close()
	var m map[string]any
	require.NoError(t, c.ReadJSON(&m))
	require.NoError(t, c.WriteJSON(map[string]any{"op": 2, "d": map[string]any{"token": token, "intents": 1<<9 | 1<<12 | 1<<15}}))
	require.NoError(t, c.ReadJSON(&m))
	callback := func(id string) int {
		var it discordfake.Interaction
		for _, x := range f.Interactions() {
			if x.ID == id {
				it = x
			}
		}
		resp, _ := do(t, f, "POST", "interactions/"+it.ID+"/"+it.Token+"/callback", map[string]any{"type": 6})
		return resp.StatusCode
	}
	late, err := f.Click("7", discordfake.Message{ID: "1", ChannelID: "2"}, "leashd:q1:0")
	require.NoError(t, err)
	require.NoError(t, c.ReadJSON(&m))
	f.Backdate(late, 4*time.Second)
	assert.Equal(t, 404, callback(late))
	fresh, err := f.Click("7", discordfake.Message{ID: "1", ChannelID: "2"}, "leashd:q1:0")
	require.NoError(t, err)
	require.NoError(t, c.ReadJSON(&m))
	assert.Equal(t, 204, callback(fresh))
	assert.Equal(t, 400, callback(fresh))
}

// The global limit counts every request of the bot, whatever its route.
func TestGlobalLimit(t *testing.T) {
	f := discordfake.New(token)
	defer f.Close()
	f.SetGlobal(2, time.Minute)
	do(t, f, "GET", "users/@me", nil)
	do(t, f, "POST", "channels/1/messages", map[string]any{"content": "x"})
	resp, body := do(t, f, "GET", "gateway", nil)
	assert.Equal(t, 429, resp.StatusCode)
	assert.Equal(t, "global", resp.Header.Get("X-RateLimit-Scope"))
	assert.Contains(t, body, `"global":true`)
	assert.Equal(t, 1, f.Served429())
}
