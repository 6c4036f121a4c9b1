package acp

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
)

// fakeGemini is a fake of the Gemini API (generativelanguage v1beta) the
// real Gemini CLI runs against offline (GOOGLE_GEMINI_BASE_URL): each
// streamed model call takes the next scripted reply and is recorded; the
// CLI's other calls (model routing and the like) get an empty answer.
type fakeGemini struct {
	srv *httptest.Server

	mu      sync.Mutex
	script  []geminiReply
	calls   []string // the bodies of streamed model calls
	changed chan struct{}
}

// geminiReply is text, or a function call when Call is set.
type geminiReply struct {
	Text string
	Call string
	Args map[string]any
}

func newFakeGemini(t *testing.T) *fakeGemini {
	f := &fakeGemini{changed: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeGemini) reply(rs ...geminiReply) {
	f.mu.Lock()
	f.script = append(f.script, rs...)
	f.mu.Unlock()
}

func (f *fakeGemini) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if !strings.Contains(r.URL.Path, ":streamGenerateContent") {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"candidates":[{"content":{"parts":[{"text":"{}"}],"role":"model"},"finishReason":"STOP","index":0}]}`)
		return
	}
	f.mu.Lock()
	f.calls = append(f.calls, string(body))
	next := geminiReply{Text: "(no scripted reply left)"}
	if len(f.script) > 0 {
		next, f.script = f.script[0], f.script[1:]
	}
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
	part := map[string]any{"text": next.Text}
	if next.Call != "" {
		part = map[string]any{"functionCall": map[string]any{"name": next.Call, "args": next.Args}}
	}
	chunk, _ := json.Marshal(map[string]any{
		"candidates":    []any{map[string]any{"content": map[string]any{"parts": []any{part}, "role": "model"}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]any{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
	})
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\r\n\r\n", chunk)
}

// waitCall waits for a streamed model call whose body holds text.
func (f *fakeGemini) waitCall(t *testing.T, text string) string {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		f.mu.Lock()
		for _, c := range f.calls {
			if strings.Contains(c, text) {
				f.mu.Unlock()
				return c
			}
		}
		ch := f.changed
		f.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no Gemini model call contains %q", text)
		}
	}
}

// newGeminiStack runs the real Gemini CLI (gemini --acp) against the fake
// Gemini API behind the engine, in Telegram.
func newGeminiStack(t *testing.T) (*stack, *fakeGemini) {
	t.Helper()
	bin := testenv.Gemini(t)
	api := newFakeGemini(t)
	logs := &testenv.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ag := New([]string{bin, "--acp"}, WithLogger(log), WithCloseTimeout(3*time.Second), WithEnv(
		"HOME="+t.TempDir(), "GEMINI_API_KEY=fake-gemini-key", "GOOGLE_GEMINI_BASE_URL="+api.srv.URL,
		"GEMINI_CLI_NO_RELAUNCH=true", "NO_PROXY=127.0.0.1,localhost", "HTTPS_PROXY=", "HTTP_PROXY="))
	return buildStack(t, ag, logs, log, nil), api
}

// The real Gemini CLI over ACP: its text streams, its shell tool asks with
// Gemini's own options, a tap lets the command run, a typed reason rejects
// the next and reaches the model; /edit maps onto its autoEdit mode.
func TestRealGeminiOverACP(t *testing.T) {
	s, api := newGeminiStack(t)
	api.reply(
		geminiReply{Call: "run_shell_command", Args: map[string]any{"command": "touch made-by-gemini.txt", "description": "Create a file"}},
		geminiReply{Text: "Created it."},
	)
	s.say("make a file")
	m := s.botMessage("touch made-by-gemini.txt")
	assert.Contains(t, m.Text, "The agent wants to use the tool Shell")
	assert.Equal(t, []string{"✅ Allow for this session", "✅ Allow", "❌ Reject"}, m.Buttons(), "Gemini's own options")
	s.tap(m, "✅ Allow")
	s.botMessage("Created it.")
	s.botMessage("Done")
	_, err := os.Stat(filepath.Join(s.dir, "made-by-gemini.txt"))
	require.NoError(t, err, "the command ran in LEASHD_WORKDIR")

	api.reply(
		geminiReply{Call: "run_shell_command", Args: map[string]any{"command": "rm made-by-gemini.txt"}},
		geminiReply{Text: "Leaving it."},
		geminiReply{Text: "Understood, keeping the file."},
	)
	s.say("remove it")
	s.botMessage("rm made-by-gemini.txt")
	s.say("we still need it")
	call := api.waitCall(t, "we still need it")
	assert.Contains(t, call, "The user rejected your Shell", "the reason arrives as a follow-up prompt")
	s.botMessage("Understood, keeping the file.")
	_, err = os.Stat(filepath.Join(s.dir, "made-by-gemini.txt"))
	require.NoError(t, err, "the rejected command did not run")

	s.say("/edit")
	s.botMessage("Mode: acceptEdits (the agent's Auto Edit mode)")
}
