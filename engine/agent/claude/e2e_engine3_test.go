package claude_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
	"github.com/leashd/leashd/interactions"
)

// lastPrompt is the newest user text of a call that is not a system
// reminder.
func lastPrompt(r *fakeapi.Request) string {
	texts := r.UserTexts()
	for i := len(texts) - 1; i >= 0; i-- {
		if !strings.HasPrefix(strings.TrimSpace(texts[i]), "<system-reminder>") {
			return texts[i]
		}
	}
	return ""
}

func TestE2ESeveralChatsAtOnce(t *testing.T) {
	const limit = 2
	s := newStack(t, func(_ *engine.Deps, c *engine.Config) { c.MaxConcurrent = limit })
	peak := s.countProcesses(t)
	s.api.Otherwise(func(r *fakeapi.Request) fakeapi.Reply {
		p := lastPrompt(r)
		if strings.Contains(p, "ask") {
			if _, ok := r.ToolResult(askID(r)); !ok {
				return fakeapi.Tool("AskUserQuestion", map[string]any{"questions": []map[string]any{
					{"question": "Colour for " + p + "?", "header": "Colour", "multiSelect": false,
						"options": []map[string]string{{"label": "Red", "description": "r"}, {"label": "Blue", "description": "b"}}},
				}})
			}
		}
		return fakeapi.Text("answer to " + p)
	})
	chats := []string{"c1", "c2", "c3", "c4"}
	var wg sync.WaitGroup
	for _, c := range chats {
		wg.Go(func() {
			_, err := s.e.HandleMessage(context.Background(), connectors.Incoming{ChatID: c, UserID: "u-" + c, Text: "ask " + c})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	// answer each chat's question as it comes; two chats wait for a slot
	for range chats {
		var it interactions.Interaction
		s.conn.waitFor(t, "an unanswered question", func() bool {
			for _, x := range s.conn.shown {
				if !answered(s.conn.updates, x.ID) && len(s.coord.Pending(x.ChatID)) > 0 {
					it = x
					return true
				}
			}
			return false
		})
		_, err := s.e.Reply(context.Background(), it.ID, interactions.Reply{By: "u-" + it.ChatID, Answers: []string{"Blue"}})
		require.NoError(t, err)
		s.conn.waitFor(t, "the answer to be resolved", func() bool { return answered(s.conn.updates, it.ID) })
	}
	s.conn.waitFor(t, "four summaries", func() bool { return len(s.conn.done) == len(chats) })
	var results []string
	queued := map[string]string{} // chat → what it was told about the queue
	s.conn.mu.Lock()
	for _, d := range s.conn.done {
		results = append(results, d.Result)
	}
	for i, said := range s.conn.said {
		if strings.Contains(said, "agent slots are busy") {
			assert.NotContains(t, queued, s.conn.saidIn[i], "a chat is told its place once")
			queued[s.conn.saidIn[i]] = said
		}
	}
	s.conn.mu.Unlock()
	assert.ElementsMatch(t, []string{"answer to ask c1", "answer to ask c2", "answer to ask c3", "answer to ask c4"}, results)
	assert.LessOrEqual(t, s.e.SessionsActive(), limit)
	// every chat had its own CLI, never more than limit alive at once
	assert.Len(t, s.starts(t), len(chats))
	assert.Equal(t, limit, peak(), "CLI processes alive at once")
	// the two chats beyond the limit were told their place
	var told []string
	for _, said := range queued {
		told = append(told, said)
	}
	assert.ElementsMatch(t, []string{
		"All 2 agent slots are busy; you are number 1 in the queue. Your prompt runs as soon as one frees up.",
		"All 2 agent slots are busy; you are number 2 in the queue. Your prompt runs as soon as one frees up.",
	}, told, "queued chats: %v", queued)
	for _, c := range s.api.Calls() {
		if res, ok := c.ToolResult(askID(c)); ok {
			assert.Contains(t, res.ResultText(), `"="Blue"`)
		}
	}
}

func askID(r *fakeapi.Request) string {
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_use" && b.Name == "AskUserQuestion" {
				return b.ID
			}
		}
	}
	return ""
}

func answered(evs []interactions.Event, id string) bool {
	for _, ev := range evs {
		if ev.Interaction.ID == id && ev.Type == interactions.EventResolved {
			return true
		}
	}
	return false
}

func TestE2EKilledInItsFirstTurn(t *testing.T) {
	// The CLI writes the conversation to disk in the background: a process
	// killed in its first turn may or may not be resumable. Either the
	// resume works, or it fails, the chat is told, and a fresh session
	// answers; never a hang.
	s := newStack(t)
	s.api.Reply(fakeapi.Tool("AskUserQuestion", twoQuestions), fakeapi.Text("answered after the crash"))
	s.send(t, "ask me")
	s.conn.waitShown(t, 1)
	s.killLast(t)
	s.conn.waitSaid(t, "The agent stopped unexpectedly")
	s.send(t, "hello again")
	assert.Equal(t, "answered after the crash", s.conn.waitDone(t, 1).Result)
	starts := s.starts(t)
	t.Logf("starts: %q", starts)
	require.Contains(t, starts[1], "--resume", "the next prompt tries to resume")
	switch len(starts) {
	case 2: // resumed
	case 3:
		assert.NotContains(t, starts[2], "--resume")
		s.conn.waitSaid(t, "Could not resume the previous agent session")
		assert.Contains(t, s.conn.saidText(), "No conversation found", "the CLI's own reason is shown")
	default:
		t.Fatalf("unexpected starts: %q", starts)
	}
}

func TestE2EAPIErrorIsShownAsAnErrorResult(t *testing.T) {
	s := newStack(t)
	// Newer CLIs try a refused call again (six times in all), so the
	// refusal answers every call of the first turn, not just one.
	s.api.Otherwise(func(r *fakeapi.Request) fakeapi.Reply {
		if r.HasUserText("shorter") {
			return fakeapi.Text("recovered")
		}
		return fakeapi.Reply{Status: 400, Error: "fakeapi refuses: messages.0.content is malformed"}
	})
	s.send(t, "a very long prompt")
	sum := s.conn.waitDone(t, 1)
	t.Logf("summary: %+v", sum)
	assert.True(t, sum.IsError)
	assert.Contains(t, sum.Result, "fakeapi refuses: messages.0.content is malformed", "the API's reason reaches the chat")
	s.send(t, "shorter")
	assert.Equal(t, "recovered", s.conn.waitDone(t, 2).Result)
}

// BenchmarkRealCLIStart measures starting the CLI and its initialize
// handshake, then closing it.
func BenchmarkRealCLIStart(b *testing.B) {
	c := newRealCLI(b)
	var open, closing time.Duration
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		t0 := time.Now()
		s, err := c.agent.Open(ctx, agent.SessionOptions{ChatID: "b", WorkDir: c.dir})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := s.Close(ctx); err != nil {
			b.Fatal(err)
		}
		open += t1.Sub(t0)
		closing += time.Since(t1)
		cancel()
	}
	b.ReportMetric(float64(open.Milliseconds())/float64(b.N), "open-ms/op")
	b.ReportMetric(float64(closing.Milliseconds())/float64(b.N), "close-ms/op")
}

// BenchmarkRealCLITurn measures one prompt's round trip through a live CLI
// and the fake API.
func BenchmarkRealCLITurn(b *testing.B) {
	c := newRealCLI(b)
	c.api.Otherwise(func(*fakeapi.Request) fakeapi.Reply { return fakeapi.Text("ok") })
	ctx := context.Background()
	s, err := c.agent.Open(ctx, agent.SessionOptions{ChatID: "b", WorkDir: c.dir})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close(context.Background()) })
	i := 0
	for b.Loop() {
		i++
		res, err := s.Turn(ctx, fmt.Sprintf("prompt %d", i), nopHandler{})
		if err != nil || res.Text != "ok" {
			b.Fatal(res, err)
		}
	}
}

type nopHandler struct{}

func (nopHandler) Text(string)                     {}
func (nopHandler) ToolUse(string, json.RawMessage) {}
func (nopHandler) Permission(context.Context, agent.PermissionRequest) agent.PermissionResponse {
	return agent.PermissionResponse{}
}

func TestE2EShutdownWithAPendingQuestion(t *testing.T) {
	s, stop := newStoppableStack(t, nil)
	s.api.Reply(fakeapi.Tool("AskUserQuestion", twoQuestions))
	s.send(t, "ask me")
	it := s.conn.waitShown(t, 1)
	st := s.starts(t)
	pidText, _, _ := strings.Cut(st[0], " ")
	pid, err := strconv.Atoi(pidText)
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, stop())
	t.Logf("engine stopped in %s", time.Since(start).Round(time.Millisecond))
	s.conn.mu.Lock()
	var res interactions.Resolution
	for _, ev := range s.conn.updates {
		if ev.Interaction.ID == it.ID && ev.Type == interactions.EventResolved {
			res = ev.Resolution
		}
	}
	s.conn.mu.Unlock()
	assert.Equal(t, interactions.StatusInterrupted, res.Status, "the question's message says leashd restarted")
	assert.Equal(t, interactions.InterruptedNotice, res.Text, "and that a tap still reaches the agent")
	assert.Error(t, syscall.Kill(pid, 0), "the CLI process is gone after shutdown")
}

func TestE2EUnansweredQuestionExpires(t *testing.T) {
	s := newStackWith(t, []interactions.Opt{interactions.WithTimeout(time.Second)})
	s.api.Reply(fakeapi.Tool("AskUserQuestion", twoQuestions), fakeapi.Text("I'll pick myself."))
	s.send(t, "ask me")
	it := s.conn.waitShown(t, 1)
	assert.False(t, it.Deadline.IsZero(), "the question shows its deadline")
	assert.Equal(t, "I'll pick myself.", s.conn.waitDone(t, 1).Result)
	calls := s.api.Calls()
	require.Len(t, calls, 2)
	res, ok := calls[1].ToolResult(calls[0].Reply.Tools[0].ID)
	require.True(t, ok)
	assert.True(t, res.IsError)
	assert.Contains(t, res.ResultText(), "No answer came within 1s", "the model learns nobody answered")
	t.Logf("tool_result the model read: %s", res.ResultText())
}

func TestE2EStopDuringAPendingQuestion(t *testing.T) {
	s := newStack(t)
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	s.api.Reply(fakeapi.Tool("AskUserQuestion", twoQuestions))
	s.api.Otherwise(func(r *fakeapi.Request) fakeapi.Reply {
		if strings.Contains(lastPrompt(r), "next topic") {
			return fakeapi.Text("on to the next topic")
		}
		// the model going on after /stop: only an interrupt ends this
		return fakeapi.Reply{Hold: hold}
	})
	s.send(t, "ask me")
	it := s.conn.waitShown(t, 1)
	s.send(t, "/stop")
	s.conn.waitSaid(t, "Stopped. 1 pending request(s) cancelled.")
	s.conn.waitFor(t, "the question's message updated", func() bool {
		for _, ev := range s.conn.updates {
			if ev.Interaction.ID == it.ID && ev.Resolution.Status == interactions.StatusCancelled {
				return strings.Contains(ev.Resolution.Text, "/stop")
			}
		}
		return false
	})
	s.conn.waitDone(t, 1)
	assert.Empty(t, s.coord.Pending("c1"))
	s.send(t, "next topic")
	s.conn.waitFor(t, "the next answer", func() bool {
		for _, d := range s.conn.done {
			if d.Result == "on to the next topic" {
				return true
			}
		}
		return false
	})
	assert.Len(t, s.starts(t), 1, "the same CLI process goes on")

	// What the model received: the question withdrawn, never answered, and
	// the next prompt in the same conversation.
	calls := s.api.Calls()
	require.GreaterOrEqual(t, len(calls), 2)
	askedID := calls[0].Reply.Tools[0].ID
	session := calls[0].Header.Get("X-Claude-Code-Session-Id")
	require.NotEmpty(t, session)
	for i, c := range calls {
		assert.Equal(t, session, c.Header.Get("X-Claude-Code-Session-Id"), "call %d is in the same session", i)
		if res, ok := c.ToolResult(askedID); ok {
			assert.True(t, res.IsError, "call %d: the withdrawn question's tool_result is a denial", i)
			for _, answer := range []string{"have been answered", "Postgres", "SQLite", "Auth", "Search", "Billing"} {
				assert.NotContains(t, res.ResultText(), answer, "call %d: no answer reached the model", i)
			}
		}
	}
	last := calls[len(calls)-1]
	assert.Equal(t, "next topic", lastPrompt(last))
	res, ok := last.ToolResult(askedID)
	require.True(t, ok, "the conversation carries the withdrawn question's tool_result")
	t.Logf("tool_result the model read: %s", res.ResultText())
	assert.True(t, last.HasUserText("[Request interrupted by user for tool use]"), "the model reads that the turn was interrupted")
	// /stop both denies the question ("Cancelled by /stop.") and interrupts
	// the turn; the CLI takes the interrupt first (in every run seen) and
	// the model reads the CLI's own rejection. Should the denial win the
	// race, the model reads it and the CLI calls the model again: that call
	// must then have been cut off by the interrupt.
	if strings.Contains(res.ResultText(), "Cancelled by /stop.") {
		t.Log("the denial reached the CLI before the interrupt")
	} else {
		assert.Contains(t, res.ResultText(), "The user doesn't want to proceed with this tool use.")
		assert.Len(t, calls, 2, "the interrupted turn made no further model call")
	}
	for i, c := range calls[1 : len(calls)-1] {
		select {
		case <-c.Abandoned():
		case <-time.After(10 * time.Second):
			t.Errorf("model call %d after /stop was not interrupted", i+1)
		}
	}
}

// BenchmarkE2EPromptToSummary measures a prompt's way through the engine,
// a live CLI and the fake API until the chat shows the turn's summary.
func BenchmarkE2EPromptToSummary(b *testing.B) {
	s := newStack(b)
	s.api.Otherwise(func(*fakeapi.Request) fakeapi.Reply { return fakeapi.Text("ok") })
	s.send(b, "warm up")
	s.conn.waitDone(b, 1)
	n := 1
	for b.Loop() {
		n++
		s.send(b, fmt.Sprintf("prompt %d", n))
		s.conn.waitDone(b, n)
	}
}
