package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"
)

// fakeRunners answers /runner and /status as cmd's hub adapter would.
// Chats in remote run on a runner: files put for them are kept in put
// (path → bytes), and refused when refuse says why.
type fakeRunners struct {
	args   []string
	slots  atomic.Int64
	remote map[string]bool
	refuse string

	mu  sync.Mutex
	put map[string][]byte
}

func (f *fakeRunners) OnRunner(chat string) bool { return f.remote[chat] }

func (f *fakeRunners) PutFile(_ context.Context, chat, p string, data []byte) error {
	if !f.remote[chat] {
		return errors.New("PutFile for a chat on no runner: " + chat)
	}
	if f.refuse != "" {
		return errors.New(f.refuse)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.put == nil {
		f.put = map[string][]byte{}
	}
	f.put[p] = data
	return nil
}

func (f *fakeRunners) Slots() int { return int(f.slots.Load()) }

func (f *fakeRunners) Where(chat string) string { return "Runner: box1 for " + chat }
func (f *fakeRunners) Command(chat, args string) string {
	f.args = append(f.args, args)
	return "runner set to " + args + " for " + chat
}

// TestRunnerCommandAndStatus: without runners /runner says so; with them,
// /runner goes to them and /status names the chat's runner; Tell reaches
// the chat.
func TestRunnerCommandAndStatus(t *testing.T) {
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		return agent.Result{}, nil
	}}
	e, conn, _ := start(t, ag, nil)
	send(t, e, "c1", "/runner gpu1")
	conn.WaitSaid(t, "c1|Agents run on this server only: no runners are set up (LEASHD_RUNNER_TOKENS).")

	rs := &fakeRunners{}
	e.SetRunners(rs)
	send(t, e, "c1", "/runner labels gpu")
	conn.WaitSaid(t, "c1|runner set to labels gpu for c1")
	send(t, e, "c1", "/status")
	conn.WaitSaid(t, "Runner: box1 for c1")
	e.Tell(t.Context(), "c1", "Runner box1 was lost")
	conn.WaitSaid(t, "c1|Runner box1 was lost")
	assert.Equal(t, []string{"labels gpu"}, rs.args)
	assert.Empty(t, ag.Prompts(), "no command reached the agent")
}

// TestFullRunnersQueueTheChat: when the runners have no free slot a new
// chat queues and is told its place, as with local slots; a runner
// connecting (more slots) starts it.
func TestFullRunnersQueueTheChat(t *testing.T) {
	release := make(chan struct{})
	ag := &enginetest.ScriptAgent{Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
		if prompt == "long job" {
			<-release
		}
		return agent.Result{}, nil
	}}
	defer close(release)
	e, conn, _ := start(t, ag, nil)
	rs := &fakeRunners{}
	e.SetRunners(rs)

	send(t, e, "c0", "hello")
	conn.WaitSaid(t, "c0|No runner is connected to run an agent; you are number 1 in the queue. Your prompt runs as soon as one connects.")
	rs.slots.Store(1)
	e.SlotsChanged()
	waitPrompt(t, ag, "hello")

	send(t, e, "c1", "long job")
	waitPrompt(t, ag, "long job")
	send(t, e, "c2", "second")
	conn.WaitSaid(t, "c2|All 1 agent slots (on the runners and this server) are busy; you are number 1 in the queue. Your prompt runs as soon as one frees up or another runner connects.")
	assert.NotContains(t, ag.Prompts(), "second")
	rs.slots.Store(2)
	e.SlotsChanged()
	waitPrompt(t, ag, "second")
}

func waitPrompt(t *testing.T, ag *enginetest.ScriptAgent, prompt string) {
	t.Helper()
	require.Eventually(t, func() bool { return slices.Contains(ag.Prompts(), prompt) },
		30*time.Second, 10*time.Millisecond, "the agent never got %q; it got %q", prompt, ag.Prompts())
}

// TestFilesForAnAgentOnARunnerAreSavedThere: a document sent in a chat
// whose agent runs on a runner goes to that runner's inbox (the agent
// reads it on that machine), at the path the prompt names, and nothing
// is saved on the server; a chat whose agent runs here saves it here. A
// runner that cannot take it is named to the person.
func TestFilesForAnAgentOnARunnerAreSavedThere(t *testing.T) {
	dir := t.TempDir()
	ag := &enginetest.ScriptAgent{}
	e, conn, _ := start(t, ag, nil, fast(dir))
	rs := &fakeRunners{remote: map[string]bool{"remote": true}}
	rs.slots.Store(8)
	e.SetRunners(rs)

	notes := []byte("meeting notes")
	sendFiles(t, e, "remote", "read this", file("notes.txt", "text/plain", notes))
	conn.WaitDone(t, 1)
	rs.mu.Lock()
	require.Len(t, rs.put, 1)
	var at string
	for p, data := range rs.put {
		at = p
		assert.Equal(t, notes, data)
	}
	rs.mu.Unlock()
	assert.True(t, strings.HasPrefix(at, ".leashd/inbox/") && strings.HasSuffix(at, "/notes.txt"), at)
	assert.Contains(t, ag.Prompts()[0], at, "the prompt names where it is on the runner")
	assert.NoDirExists(t, filepath.Join(dir, ".leashd"), "nothing saved on the server")

	sendFiles(t, e, "local", "and this", file("todo.txt", "text/plain", []byte("todo")))
	conn.WaitDone(t, 2)
	matches, _ := filepath.Glob(filepath.Join(dir, ".leashd", "inbox", "*", "todo.txt"))
	require.Len(t, matches, 1, "a chat whose agent runs here saves here")
	got, err := os.ReadFile(matches[0])
	require.NoError(t, err)
	assert.Equal(t, []byte("todo"), got)

	rs.refuse = "runner box1 is disconnected"
	sendFiles(t, e, "remote", "and again", file("more.txt", "text/plain", []byte("x")))
	conn.WaitSaid(t, "remote|Not sent to the agent:\n• more.txt could not be saved on the agent's runner: runner box1 is disconnected")
}
