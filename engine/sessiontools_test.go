package engine_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/engine/stt"
	"github.com/leashd/leashd/engine/stt/stttest"
)

// grants records the credentials SessionTools minted and the chat each
// was tied to.
type grants struct {
	mu    sync.Mutex
	n     int
	bound map[string]string // credential → chat
}

func (g *grants) Session() ([]agent.MCPServer, func(string)) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.n++
	tok := fmt.Sprintf("cred-%d", g.n)
	return []agent.MCPServer{{Name: "leashd", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"Authorization": "Bearer " + tok}}},
		func(chat string) {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.bound[tok] = chat
		}
}

func (g *grants) chatOf(tok string) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.bound[tok]
}

// TestEverySessionGetsItsChatsCredential: each session is opened with
// leashd's MCP server and a credential of its own, tied to the chat it
// serves — a spare's when a chat claims it.
func TestEverySessionGetsItsChatsCredential(t *testing.T) {
	a, _ := newWarmAgent()
	g := &grants{bound: map[string]string{}}
	e, conn, _ := start(t, a, nil, func(d *engine.Deps, c *engine.Config) { d.SessionTools = g; c.Prewarm = 1; c.MaxConcurrent = 3 })
	eventually(t, "a spare", func() bool { return len(a.Opened()) == 1 })
	send(t, e, "c1", "first")
	conn.WaitDone(t, 1)
	send(t, e, "c2", "second")
	conn.WaitDone(t, 2)
	opened := a.Opened()
	require.GreaterOrEqual(t, len(opened), 2)
	chats := map[string]bool{}
	for _, o := range opened {
		require.Len(t, o.MCPServers, 1, "every session gets leashd's MCP server")
		tok := o.MCPServers[0].Headers["Authorization"][len("Bearer "):]
		if c := g.chatOf(tok); c != "" {
			assert.False(t, chats[c], "one credential per session")
			chats[c] = true
		}
	}
	assert.Equal(t, map[string]bool{"c1": true, "c2": true}, chats, "the spare's credential went to the chat that claimed it")
}

// TestVoiceNoteTranscribed: a voice note is transcribed, shown with 🎤,
// and with its caption is the prompt.
func TestVoiceNoteTranscribed(t *testing.T) {
	fake := stttest.New()
	defer fake.Close()
	audio := []byte("OggS hello")
	fake.Say(audio, "run the tests")
	client, err := stt.New(fake.URL, "", "")
	require.NoError(t, err)
	ag := &enginetest.ScriptAgent{}
	e, conn, _ := start(t, ag, nil, fast(t.TempDir()), func(d *engine.Deps, _ *engine.Config) { d.Transcriber = client })
	voice := file("", "audio/ogg", audio)
	voice.Voice = true
	_, err = e.HandleMessage(context.Background(), connectors.Incoming{ChatID: "c1", UserID: "u1", Files: []connectors.File{voice}})
	require.NoError(t, err)
	conn.WaitSaid(t, "🎤 run the tests")
	conn.WaitDone(t, 1)
	assert.Equal(t, []string{"run the tests"}, ag.Prompts())
}
