package mcpserver_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/mcpserver"
	"github.com/leashd/leashd/interactions"
)

// serveHTTP serves the MCP handler for every chat, asking through coord,
// and returns its /mcp address.
func serveHTTP(t *testing.T, coord *interactions.Coordinator, l mcpserver.Limits) string {
	t.Helper()
	h := mcpserver.Handler(coord, func(string) error { return nil }, mcpserver.Options{PermissionResult: claude.PermissionResult, Limits: l})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp?chat=c"
}

// connectHTTP is a real MCP client (the Go SDK's) over streamable HTTP.
func connectHTTP(t *testing.T, url string) (*mcp.ClientSession, error) {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

// resolved waits for the resolved event of interaction id: what the chat
// is sent to update its message.
func resolved(t *testing.T, events <-chan interactions.Event, id string) interactions.Resolution {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.Type == interactions.EventResolved && ev.Interaction.ID == id {
				return ev.Resolution
			}
		case <-deadline:
			t.Fatalf("%s did not end", id)
		}
	}
}

func assertWithdrawn(t *testing.T, coord *interactions.Coordinator, events <-chan interactions.Event, id string) {
	t.Helper()
	res := resolved(t, events, id)
	assert.Equal(t, interactions.StatusCancelled, res.Status)
	assert.Equal(t, interactions.AskerGoneText, res.Text, "the chat says why it ended")
	_, pending := coord.Get(id)
	assert.False(t, pending, "no longer answerable")
}

// A client that cancels its call (the Go SDK sends notifications/cancelled)
// withdraws the request: the chat sees it ended, and why.
func TestHTTPCancelledCallIsWithdrawn(t *testing.T) {
	coord, shown := newCoord()
	events, unsub := coord.Subscribe()
	defer unsub()
	cs, err := connectHTTP(t, serveHTTP(t, coord, mcpserver.Limits{}))
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpserver.ToolRequestApproval, Arguments: map[string]any{"action": "deploy"}})
		errc <- err
	}()
	it := next(t, shown)
	cancel()
	assert.ErrorIs(t, <-errc, context.Canceled)
	assertWithdrawn(t, coord, events, it.ID)
}

// rawMCP speaks streamable HTTP by hand, so that nothing but the
// connection tells the server the client left.
type rawMCP struct {
	t   *testing.T
	url string
	sid string
}

func (c *rawMCP) post(ctx context.Context, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", c.url, strings.NewReader(body))
	require.NoError(c.t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	}
	return http.DefaultClient.Do(req)
}

// initialize starts a session; the response's status and body.
func (c *rawMCP) initialize() (int, string) {
	resp, err := c.post(c.t.Context(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	require.NoError(c.t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, string(b)
	}
	c.sid = resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(c.t, c.sid)
	resp, err = c.post(c.t.Context(), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.NoError(c.t, err)
	resp.Body.Close()
	require.Equal(c.t, http.StatusAccepted, resp.StatusCode)
	return http.StatusOK, string(b)
}

// callApproval starts request_approval; the POST stays open until ctx ends
// or the answer comes.
func (c *rawMCP) callApproval(ctx context.Context) {
	go func() {
		resp, err := c.post(ctx, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"request_approval","arguments":{"action":"deploy"}}}`)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
}

// ping asks whether the session is there: 200, or 404 once it is closed.
func (c *rawMCP) ping() int {
	resp, err := c.post(c.t.Context(), `{"jsonrpc":"2.0","id":9,"method":"ping"}`)
	require.NoError(c.t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// do sends a request of the session with a method other than POST.
func (c *rawMCP) do(method string) int {
	req, err := http.NewRequest(method, c.url, nil)
	require.NoError(c.t, err)
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("Accept", "application/json, text/event-stream")
	hc := &http.Client{Timeout: 30 * time.Second} // on a hang, fail instead of waiting for the test's end
	resp, err := hc.Do(req)
	require.NoError(c.t, err, "%s of the session did not return", method)
	resp.Body.Close()
	return resp.StatusCode
}

// A killed client, or one whose connection is cut, leaves its call's POST:
// nothing can carry the answer any more, so the request is withdrawn.
func TestHTTPCutConnectionWithdrawsTheCall(t *testing.T) {
	coord, shown := newCoord()
	events, unsub := coord.Subscribe()
	defer unsub()
	c := &rawMCP{t: t, url: serveHTTP(t, coord, mcpserver.Limits{})}
	st, body := c.initialize()
	require.Equal(t, http.StatusOK, st, body)
	ctx, cut := context.WithCancel(t.Context())
	c.callApproval(ctx)
	it := next(t, shown)
	cut() // closes the connection; no notifications/cancelled is sent
	assertWithdrawn(t, coord, events, it.ID)
}

// DELETE of a session whose call waits for a person returns (the call is
// withdrawn first), where the SDK alone waits for the call to end.
func TestHTTPDeleteOfASessionWithACallReturns(t *testing.T) {
	coord, shown := newCoord()
	events, unsub := coord.Subscribe()
	defer unsub()
	c := &rawMCP{t: t, url: serveHTTP(t, coord, mcpserver.Limits{})}
	st, body := c.initialize()
	require.Equal(t, http.StatusOK, st, body)
	c.callApproval(t.Context())
	it := next(t, shown)
	assert.Equal(t, http.StatusNoContent, c.do("DELETE"))
	assertWithdrawn(t, coord, events, it.ID)
	assert.Equal(t, http.StatusNotFound, c.ping(), "the session is gone")
}

// Past LEASHD_MCP_MAX_SESSIONS a new client is refused with a message that
// names it; a session that ends makes room.
func TestHTTPSessionsAreCapped(t *testing.T) {
	coord, _ := newCoord()
	url := serveHTTP(t, coord, mcpserver.Limits{MaxSessions: 2})
	first, err := connectHTTP(t, url)
	require.NoError(t, err)
	_, err = connectHTTP(t, url)
	require.NoError(t, err)
	const refused = "too many MCP sessions: at most 2 are open at once (LEASHD_MCP_MAX_SESSIONS)"
	_, err = connectHTTP(t, url)
	require.Error(t, err, "a third session")
	assert.Contains(t, err.Error(), refused, "the client reads why")
	resp, err := (&rawMCP{t: t, url: url}).post(t.Context(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Contains(t, string(b), `"id":1,"error"`, "a JSON-RPC error answering the initialize")
	assert.Contains(t, string(b), refused)
	require.NoError(t, first.Close()) // DELETE
	_, err = connectHTTP(t, url)
	assert.NoError(t, err, "room again")
}

// A session nobody uses for LEASHD_MCP_SESSION_IDLE_SECONDS is closed and
// no longer counts against the cap; one with a call waiting for a person
// is in use however long the person takes.
func TestHTTPIdleSessionsExpire(t *testing.T) {
	coord, shown := newCoord()
	const idle = 100 * time.Millisecond
	url := serveHTTP(t, coord, mcpserver.Limits{MaxSessions: 2, SessionIdle: idle})
	idler := &rawMCP{t: t, url: url}
	st, body := idler.initialize()
	require.Equal(t, http.StatusOK, st, body)
	busy := &rawMCP{t: t, url: url}
	st, body = busy.initialize()
	require.Equal(t, http.StatusOK, st, body)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	done := make(chan string, 1)
	go func() {
		resp, err := busy.post(ctx, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"request_approval","arguments":{"action":"deploy"}}}`)
		if err != nil {
			done <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		done <- string(b)
	}()
	it := next(t, shown)
	// Each ping is a use: look less often than the idle time.
	require.Eventually(t, func() bool { return idler.ping() == http.StatusNotFound }, 20*time.Second, 5*idle,
		"the idle session is closed")
	st, body = (&rawMCP{t: t, url: url}).initialize()
	assert.Equal(t, http.StatusOK, st, "the closed session makes room: %s", body)
	time.Sleep(10 * idle) // the person takes their time
	_, pending := coord.Get(it.ID)
	require.True(t, pending, "the call in progress keeps its session")
	_, err := coord.Reply(it.ID, interactions.Reply{Answers: []string{mcpserver.Approve}})
	require.NoError(t, err)
	assert.Contains(t, <-done, `approved`)
}
