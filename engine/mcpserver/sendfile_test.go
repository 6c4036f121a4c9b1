package mcpserver_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/mcpserver"
)

// sends records send_file calls.
type sends struct {
	mu    sync.Mutex
	calls []string // chat + " " + path + " " + caption
}

func (s *sends) SendFile(_ context.Context, chat, path, caption string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, chat+" "+path+" "+caption)
	return "Sent " + path, nil
}

// headerClient adds the session's headers to every request.
type headerClient struct{ h map[string]string }

func (c headerClient) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range c.h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connectAs opens an MCP session with a session's server entry.
func connectAs(t *testing.T, m agent.MCPServer) (*mcp.ClientSession, error) {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent"}, nil).Connect(t.Context(),
		&mcp.StreamableClientTransport{Endpoint: m.URL, HTTPClient: &http.Client{Transport: headerClient{m.Headers}}, MaxRetries: -1}, nil)
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

// TestSendServerCredentialSendsToItsChatOnly: a session's credential
// offers send_file alone (nothing that asks, answers or lists), sends to
// the chat it was tied to only, does nothing before it is tied, and is
// retired when the chat's next session is tied.
func TestSendServerCredentialSendsToItsChatOnly(t *testing.T) {
	rec := &sends{}
	srv, err := mcpserver.NewSendServer(rec, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	assert.True(t, strings.HasPrefix(srv.URL(), "http://127.0.0.1:"), "loopback only: %s", srv.URL())

	servers, bind := srv.Session()
	require.Len(t, servers, 1)
	_, err = connectAs(t, servers[0])
	require.Error(t, err, "a credential tied to no chat (a spare's) does nothing")

	bind("telegram:42")
	cs, err := connectAs(t, servers[0])
	require.NoError(t, err)
	tools, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	require.Len(t, tools.Tools, 1)
	assert.Equal(t, mcpserver.ToolSendFile, tools.Tools[0].Name, "it cannot ask, answer or list")
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcpserver.ToolSendFile, Arguments: map[string]any{"path": "out/a.txt", "caption": "hi"}})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, []string{"telegram:42 out/a.txt hi"}, rec.calls, "sent to its own chat")

	next, bindNext := srv.Session()
	bindNext("telegram:42")
	_, err = connectAs(t, servers[0])
	require.Error(t, err, "the chat's previous session's credential is retired")
	_, err = connectAs(t, next[0])
	require.NoError(t, err)

	forged := agent.MCPServer{URL: servers[0].URL, Headers: map[string]string{"Authorization": "Bearer guess"}}
	_, err = connectAs(t, forged)
	require.Error(t, err)
}

// FuzzParseSendFile: any input is parsed or refused with an error, never
// accepted without a path or with a caption over Telegram's 1024.
func FuzzParseSendFile(f *testing.F) {
	for _, s := range []string{`{"path":"a.txt"}`, `{"path":"a","caption":"c"}`, `{}`, `{"path":""}`, `{"path":1}`, `{"other":1}`, `null`, `[`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		in, err := mcpserver.ParseSendFile(json.RawMessage(b))
		if err != nil {
			return
		}
		if strings.TrimSpace(in.Path) == "" || len([]rune(in.Caption)) > 1024 {
			t.Fatalf("accepted %q as %+v", b, in)
		}
	})
}
