package claude_test

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
	"github.com/leashd/leashd/interactions"
)

func TestE2EStopInterruptsTheTurn(t *testing.T) {
	s := newStack(t)
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	s.api.Reply(fakeapi.Reply{Hold: hold}, fakeapi.Text("after the stop"))
	s.send(t, "think for a long time")
	s.api.WaitCalls(t, 1, 30*time.Second)
	start := time.Now()
	s.send(t, "/stop")
	s.conn.WaitSaid(t, "Stopped.")
	sum := s.conn.WaitDone(t, 1)
	t.Logf("stopped after %s; result %+v", time.Since(start).Round(time.Millisecond), sum)
	assert.True(t, sum.IsError, "an interrupted turn ends as an error result")
	s.send(t, "and now?")
	assert.Equal(t, "after the stop", s.conn.WaitDone(t, 2).Result)
	assert.Len(t, s.starts(t), 1, "the same process goes on after an interrupt")
}

func TestE2EResumeAfterIdleClose(t *testing.T) {
	s := newStack(t, func(_ *engine.Deps, c *engine.Config) { c.IdleTimeout = 300 * time.Millisecond })
	s.api.Reply(fakeapi.Text("first answer"), fakeapi.Text("second answer"))
	s.send(t, "remember the word pelican")
	assert.Equal(t, "first answer", s.conn.WaitDone(t, 1).Result)
	require.Eventually(t, func() bool { return s.e.SessionsActive() == 0 }, 20*time.Second, 20*time.Millisecond, "the idle process is closed")
	s.send(t, "what was the word?")
	assert.Equal(t, "second answer", s.conn.WaitDone(t, 2).Result)
	starts := s.starts(t)
	require.Len(t, starts, 2)
	calls := s.api.Calls()
	require.Len(t, calls, 2)
	id := calls[0].Header.Get("X-Claude-Code-Session-Id")
	require.NotEmpty(t, id)
	assert.Contains(t, starts[1], "--resume "+id)
	assert.Equal(t, id, calls[1].Header.Get("X-Claude-Code-Session-Id"), "--resume keeps the session ID")
	assert.True(t, calls[1].HasUserText("remember the word pelican"), "the resumed conversation carries the first prompt")
	assert.True(t, calls[1].HasUserText("what was the word?"))
}

func TestE2EKilledMidQuestion(t *testing.T) {
	s := newStack(t)
	s.api.Reply(fakeapi.Text("first turn done"), fakeapi.Tool("AskUserQuestion", twoQuestions), fakeapi.Text("back again"))
	s.send(t, "remember the word pelican")
	s.conn.WaitDone(t, 1)
	s.send(t, "ask me")
	it := s.conn.WaitShown(t, 1)
	// The CLI writes its transcript in the background; a kill before that
	// loses the conversation (TestE2EKilledInItsFirstTurn covers that).
	s.waitTranscript(t, "remember the word pelican")
	s.killLast(t)
	s.conn.WaitSaid(t, "The agent stopped unexpectedly")
	s.conn.WaitFor(t, "the question cancelled", func() bool {
		for _, ev := range s.conn.Updates {
			if ev.Interaction.ID == it.ID && ev.Resolution.Status == interactions.StatusCancelled {
				return true
			}
		}
		return false
	})
	assert.Empty(t, s.coord.Pending("c1"))
	assert.Contains(t, s.conn.SaidText(), "claude exited (signal: killed)")
	s.send(t, "hello again")
	assert.Equal(t, "back again", s.conn.WaitDone(t, 2).Result)
	starts := s.starts(t)
	require.Len(t, starts, 2)
	assert.Contains(t, starts[1], "--resume ")
	last := s.api.Calls()[len(s.api.Calls())-1]
	assert.True(t, last.HasUserText("remember the word pelican"), "the resumed conversation carries the first turn")
}

func TestE2ETurnTimeout(t *testing.T) {
	s := newStack(t, func(_ *engine.Deps, c *engine.Config) { c.TurnTimeout = 1500 * time.Millisecond })
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	s.api.Reply(fakeapi.Reply{Hold: hold}, fakeapi.Text("quick one"))
	s.send(t, "take forever")
	held := s.api.WaitCalls(t, 1, 30*time.Second)[0]
	s.conn.WaitSaid(t, "The turn took longer than 1.5s")
	assert.True(t, s.conn.WaitDone(t, 1).IsError, "a timed-out turn ends as an error result")
	// hold is never released: the stream ends only because the CLI, told
	// to interrupt, dropped the call
	select {
	case <-held.Abandoned():
	case <-time.After(20 * time.Second):
		t.Fatal("the CLI kept waiting on the model call after the turn timed out")
	}
	s.send(t, "something quick")
	assert.Equal(t, "quick one", s.conn.WaitDone(t, 2).Result)

	calls := s.api.Calls()
	require.Len(t, calls, 2, "no model call between the timeout and the next prompt")
	next := calls[1]
	assert.Equal(t, held.Header.Get("X-Claude-Code-Session-Id"), next.Header.Get("X-Claude-Code-Session-Id"), "the same conversation goes on")
	var prompts []string
	for _, m := range next.Messages {
		assert.NotEqual(t, "assistant", m.Role, "nothing of the abandoned reply reached the conversation")
		if m.Role != "user" {
			continue
		}
		for _, b := range m.Content {
			if text := strings.TrimSpace(b.Text); b.Type == "text" && !strings.HasPrefix(text, "<system-reminder>") {
				prompts = append(prompts, text)
			}
		}
	}
	// what the CLI sends after an interrupted turn: the old prompt, its
	// interruption, then the new prompt
	assert.Equal(t, []string{"take forever", "[Request interrupted by user]", "something quick"}, prompts)
	assert.Equal(t, 1, len(s.starts(t)), "the timeout interrupts the turn; the process goes on")
	assert.Equal(t, 0, s.api.Unscripted())
}

func TestE2EClearDuringQuestion(t *testing.T) {
	s := newStack(t)
	s.api.Reply(fakeapi.Tool("AskUserQuestion", twoQuestions), fakeapi.Text("fresh start"))
	s.send(t, "ask me")
	s.conn.WaitShown(t, 1)
	s.send(t, "/clear")
	require.Eventually(t, func() bool { return len(s.coord.Pending("c1")) == 0 }, 10*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return s.e.SessionsActive() == 0 }, 20*time.Second, 20*time.Millisecond)
	s.send(t, "new topic")
	s.conn.WaitFor(t, "the fresh answer", func() bool {
		for _, d := range s.conn.Summaries {
			if d.Result == "fresh start" {
				return true
			}
		}
		return false
	})
	starts := s.starts(t)
	require.Len(t, starts, 2)
	assert.NotContains(t, starts[1], "--resume")
	last := s.api.Calls()[len(s.api.Calls())-1]
	assert.False(t, last.HasUserText("ask me"), "the cleared conversation is gone")
}

func TestE2EKilledInItsFirstTurn(t *testing.T) {
	// The CLI writes the conversation to disk in the background: a process
	// killed in its first turn may or may not be resumable. Either the
	// resume works, or it fails, the chat is told, and a fresh session
	// answers; never a hang.
	s := newStack(t)
	s.api.Reply(fakeapi.Tool("AskUserQuestion", twoQuestions), fakeapi.Text("answered after the crash"))
	s.send(t, "ask me")
	s.conn.WaitShown(t, 1)
	s.killLast(t)
	s.conn.WaitSaid(t, "The agent stopped unexpectedly")
	s.send(t, "hello again")
	assert.Equal(t, "answered after the crash", s.conn.WaitDone(t, 1).Result)
	starts := s.starts(t)
	t.Logf("starts: %q", starts)
	require.Contains(t, starts[1], "--resume", "the next prompt tries to resume")
	switch len(starts) {
	case 2: // resumed
	case 3:
		assert.NotContains(t, starts[2], "--resume")
		s.conn.WaitSaid(t, "Could not resume the previous agent session")
		assert.Contains(t, s.conn.SaidText(), "No conversation found", "the CLI's own reason is shown")
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
	sum := s.conn.WaitDone(t, 1)
	t.Logf("summary: %+v", sum)
	assert.True(t, sum.IsError)
	assert.Contains(t, sum.Result, "fakeapi refuses: messages.0.content is malformed", "the API's reason reaches the chat")
	s.send(t, "shorter")
	assert.Equal(t, "recovered", s.conn.WaitDone(t, 2).Result)
}

func TestE2EShutdownWithAPendingQuestion(t *testing.T) {
	s, stop := newStoppableStack(t, nil)
	s.api.Reply(fakeapi.Tool("AskUserQuestion", twoQuestions))
	s.send(t, "ask me")
	it := s.conn.WaitShown(t, 1)
	st := s.starts(t)
	pidText, _, _ := strings.Cut(st[0], " ")
	pid, err := strconv.Atoi(pidText)
	require.NoError(t, err)
	start := time.Now()
	require.NoError(t, stop())
	t.Logf("engine stopped in %s", time.Since(start).Round(time.Millisecond))
	s.conn.Lock()
	var res interactions.Resolution
	for _, ev := range s.conn.Updates {
		if ev.Interaction.ID == it.ID && ev.Type == interactions.EventResolved {
			res = ev.Resolution
		}
	}
	s.conn.Unlock()
	assert.Equal(t, interactions.StatusInterrupted, res.Status, "the question's message says leashd restarted")
	assert.Equal(t, interactions.InterruptedNotice, res.Text, "and that a tap still reaches the agent")
	assert.Error(t, syscall.Kill(pid, 0), "the CLI process is gone after shutdown")
}

func TestE2EUnansweredQuestionExpires(t *testing.T) {
	s := newStackWith(t, []interactions.Opt{interactions.WithTimeout(time.Second)})
	s.api.Reply(fakeapi.Tool("AskUserQuestion", twoQuestions), fakeapi.Text("I'll pick myself."))
	s.send(t, "ask me")
	it := s.conn.WaitShown(t, 1)
	assert.False(t, it.Deadline.IsZero(), "the question shows its deadline")
	assert.Equal(t, "I'll pick myself.", s.conn.WaitDone(t, 1).Result)
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
	it := s.conn.WaitShown(t, 1)
	s.send(t, "/stop")
	s.conn.WaitSaid(t, "Stopped. 1 pending request(s) cancelled.")
	s.conn.WaitFor(t, "the question's message updated", func() bool {
		for _, ev := range s.conn.Updates {
			if ev.Interaction.ID == it.ID && ev.Resolution.Status == interactions.StatusCancelled {
				return strings.Contains(ev.Resolution.Text, "/stop")
			}
		}
		return false
	})
	s.conn.WaitDone(t, 1)
	assert.Empty(t, s.coord.Pending("c1"))
	s.send(t, "next topic")
	s.conn.WaitFor(t, "the next answer", func() bool {
		for _, d := range s.conn.Summaries {
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
