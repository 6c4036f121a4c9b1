package terminal_test

// In-process tests: the terminal connector in front of the real engine and
// coordinator, with a scripted agent for what the demo agent never does (a
// list of one, a free-text question, parallel approvals, requests cancelled
// while a key is on its way).

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/terminal"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/interactions"
)

// turnFunc is one scripted turn.
type turnFunc func(ctx context.Context, prompt string, h agent.TurnHandler) (agent.Result, error)

// scriptAgent runs each prompt with the turn registered for it and
// echoes any other; an interrupt cancels the turn's ctx.
func scriptAgent(turns map[string]turnFunc) *enginetest.ScriptAgent {
	return &enginetest.ScriptAgent{IDPrefix: "script", CancelOnInterrupt: true,
		Turn: func(ctx context.Context, s *enginetest.ScriptSession, prompt string, h agent.TurnHandler) (agent.Result, error) {
			if f := turns[prompt]; f != nil {
				return f(ctx, prompt, h)
			}
			return enginetest.Echo(ctx, s, prompt, h)
		}}
}

// screenWriter feeds a vt under a lock.
type screenWriter struct {
	mu sync.Mutex
	vt *vt
}

func (w *screenWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.vt.Write(p)
}

type inproc struct {
	t     *testing.T
	in    *io.PipeWriter
	scr   *screenWriter
	coord *interactions.Coordinator
	conn  *terminal.Connector
	agent *enginetest.ScriptAgent
}

func startInproc(t *testing.T, turns map[string]turnFunc, topts ...terminal.Option) *inproc {
	t.Helper()
	inR, inW := io.Pipe()
	scr := &screenWriter{vt: newVT(rows, cols)}
	conn := terminal.New(inR, scr, append([]terminal.Option{terminal.WithTTY(true), terminal.WithRawInput(true), terminal.WithColor(true),
		terminal.WithWidth(func() int { return cols }), terminal.WithSpinnerInterval(10 * time.Millisecond), terminal.WithChat("t")}, topts...)...)
	ag := scriptAgent(turns)
	coord := interactions.New()
	e := enginetest.New(ag, coord, func(_ *engine.Deps, c *engine.Config) { c.CloseTimeout = 5 * time.Second })
	e.AddConnector(conn)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Run(ctx) }()
	p := &inproc{t: t, in: inW, scr: scr, coord: coord, conn: conn, agent: ag}
	t.Cleanup(func() {
		cancel()
		inW.Close()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Error("the engine did not stop")
		}
		if t.Failed() {
			t.Logf("screen:\n%s", p.screen())
		}
		scr.mu.Lock()
		assert.Empty(t, scr.vt.Unknown, "only known escape sequences")
		scr.mu.Unlock()
	})
	p.waitCursor(">")
	return p
}

func (p *inproc) send(keys ...string) {
	p.t.Helper()
	for _, k := range keys {
		_, err := p.in.Write([]byte(k))
		require.NoError(p.t, err)
	}
}

func (p *inproc) screen() string {
	p.scr.mu.Lock()
	defer p.scr.mu.Unlock()
	return p.scr.vt.Text()
}

func (p *inproc) cursorLine() string {
	p.scr.mu.Lock()
	defer p.scr.mu.Unlock()
	return p.scr.vt.CursorLine()
}

func (p *inproc) waitFor(what string, cond func(string) bool) string {
	p.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := p.screen()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("timed out waiting for %s; screen:\n%s", what, s)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func (p *inproc) waitText(sub string) string {
	p.t.Helper()
	return p.waitFor(fmt.Sprintf("%q", sub), func(s string) bool { return strings.Contains(s, sub) })
}

func (p *inproc) waitCursor(line string) {
	p.t.Helper()
	p.waitFor(fmt.Sprintf("cursor line %q", line), func(string) bool { return p.cursorLine() == line })
}

// ask returns a turn asking one AskUserQuestion and sending what it got
// back on got.
func ask(q map[string]any, got chan<- agent.PermissionResponse) turnFunc {
	return func(ctx context.Context, _ string, h agent.TurnHandler) (agent.Result, error) {
		in, _ := json.Marshal(map[string]any{"questions": []any{q}})
		resp := h.Permission(ctx, agent.PermissionRequest{ToolName: agent.ToolAskUserQuestion, Input: in})
		got <- resp
		return agent.Result{Text: "asked", NumTurns: 1}, nil
	}
}

func answers(t *testing.T, resp agent.PermissionResponse) map[string]string {
	t.Helper()
	require.True(t, resp.Allow, "denied: %s", resp.Message)
	var in struct {
		Answers map[string]string `json:"answers"`
	}
	require.NoError(t, json.Unmarshal(resp.UpdatedInput, &in))
	return in.Answers
}

func TestListOfOneIsStillAList(t *testing.T) {
	got := make(chan agent.PermissionResponse, 1)
	p := startInproc(t, map[string]turnFunc{"go": ask(map[string]any{
		"question": "Ready?", "options": []map[string]string{{"label": "Continue", "description": "Go on"}},
	}, got)})
	p.send("go\r")
	s := p.waitText("Choose 1 (↑/↓ Enter, r rejects) or type your answer:")
	assert.Contains(t, s, "Ready?\n❯ 1) Continue — Go on\n  r) Reject\nChoose 1 (↑/↓ Enter, r rejects) or type your answer:")
	p.send("2\r")
	p.waitText("2 is out of range: type 1 (or ↑/↓ and Enter), r rejects.")
	p.send("1\r")
	assert.Equal(t, map[string]string{"Ready?": "Continue"}, answers(t, <-got))
	p.waitText("  → Continue")
	p.waitCursor(">")
}

// TestRequestInputWithTwoOptionsIsAnApproval: a request made through the
// InputHandler API with two options has no kind to go by: it is a yes/no
// approval (a/1 the first option, r/2 the second).
func TestRequestInputWithTwoOptionsIsAnApproval(t *testing.T) {
	p := startInproc(t, nil)
	type result struct {
		resp interactions.InputResponse
		err  error
	}
	got := make(chan result, 1)
	go func() {
		r, err := p.coord.RequestInput(context.Background(), interactions.InputRequest{
			ChatID: "terminal:t", Prompt: "Push to main?", Options: []interactions.Choice{{Label: "Push"}, {Label: "Wait"}},
		})
		got <- result{r, err}
	}()
	s := p.waitText("[a/r]")
	assert.Contains(t, s, "Push to main?\n  a/1 Push   r/2 Wait\n[a/r]")
	p.send("\r")
	p.waitText("Nothing typed: type a or 1 for Push, r or 2 for Wait (Ctrl+C or /reject rejects).")
	p.send("r\r")
	r := <-got
	require.NoError(t, r.err)
	assert.Equal(t, interactions.InputResponse{Value: "Wait", By: "local"}, r.resp, "r picks the second option")
	p.waitText("  → Denied (Wait)")
	p.waitCursor(">")
}

func TestFreeTextQuestion(t *testing.T) {
	got := make(chan agent.PermissionResponse, 1)
	p := startInproc(t, map[string]turnFunc{"go": ask(map[string]any{"question": "What name?"}, got)})
	p.send("go\r")
	p.waitText("What name?\nType your answer and press Enter; r or /reject rejects.")
	p.waitCursor("?")
	p.send("\r")
	p.waitText("Nothing typed: type your answer and press Enter (r or /reject rejects).")
	p.send("  leashd the\x7f\x7f\x7fbot  \r") // backspace edits the line
	assert.Equal(t, map[string]string{"What name?": "leashd bot"}, answers(t, <-got))
	p.waitText("  → leashd bot")
}

func TestParallelApprovalsOneAfterAnother(t *testing.T) {
	got := make(chan string, 2)
	turn := func(ctx context.Context, _ string, h agent.TurnHandler) (agent.Result, error) {
		var wg sync.WaitGroup
		for _, cmd := range []string{"make build", "make test"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				in, _ := json.Marshal(map[string]string{"command": cmd})
				r := h.Permission(ctx, agent.PermissionRequest{ToolName: "Bash", Input: in})
				got <- fmt.Sprintf("%s allow=%v %s", cmd, r.Allow, r.Message)
			}()
		}
		wg.Wait()
		return agent.Result{NumTurns: 1}, nil
	}
	p := startInproc(t, map[string]turnFunc{"go": turn})
	p.send("go\r")
	s := p.waitText("[a/r/s/d]")
	first := "make build"
	if strings.Contains(s, "  make test\n") {
		first = "make test"
	}
	second := map[string]string{"make build": "make test", "make test": "make build"}[first]
	assert.NotContains(t, s, "  "+second+"\n", "only one request at a time")
	p.send("1\r")
	assert.Equal(t, first+" allow=true ", <-got)
	p.waitText("  " + second + "\n")
	p.send("d\r", "no\r")
	assert.Equal(t, second+" allow=false no", <-got)
	p.waitText("Done")
}

func TestAnsweredOrCancelledElsewhere(t *testing.T) {
	got := make(chan agent.PermissionResponse, 1)
	q := map[string]any{"question": "Which?", "options": []map[string]string{{"label": "A"}, {"label": "B"}, {"label": "C"}}}
	// Without the late-answer window: the next line is typed at once.
	p := startInproc(t, map[string]turnFunc{"go": ask(q, got)}, terminal.WithLateAnswer(0))
	p.send("go\r")
	p.waitText("Choose 1-3")
	it := p.coord.Pending("terminal:t")[0]
	_, err := p.coord.Reply(it.ID, interactions.Reply{Answers: []string{"B"}, By: "someone"})
	require.NoError(t, err)
	p.waitText("✗ Answered elsewhere: B")
	assert.Equal(t, map[string]string{"Which?": "B"}, answers(t, <-got))
	p.waitCursor(">")

	p.send("go\r")
	p.waitText("Choose 1-3")
	it = p.coord.Pending("terminal:t")[0]
	require.True(t, p.coord.Cancel(it.ID, "the agent withdrew it"))
	p.waitText("✗ Cancelled: the agent withdrew it")
	assert.False(t, (<-got).Allow)
}

// TestKeyRacingCancel: a key racing a cancellation: whichever wins, the
// screen says what happened, the agent gets exactly one outcome, and the
// prompt comes back.
func TestKeyRacingCancel(t *testing.T) {
	got := make(chan agent.PermissionResponse, 1)
	q := map[string]any{"question": "Which?", "options": []map[string]string{{"label": "A"}, {"label": "B"}, {"label": "C"}}}
	p := startInproc(t, map[string]turnFunc{"go": ask(q, got)})
	heldBefore := 0
	for i := range 15 {
		p.send("go\r")
		p.waitFor("question", func(string) bool { return len(p.coord.Pending("terminal:t")) == 1 })
		it := p.coord.Pending("terminal:t")[0]
		p.waitText("Choose 1-3")
		// "2" is typed while the question is open; Enter races the
		// cancellation.
		p.send("2")
		p.waitFor("the typed 2", func(string) bool { return strings.HasSuffix(p.cursorLine(), ": 2") })
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); p.coord.Cancel(it.ID, "gone") }()
		go func() { defer wg.Done(); p.send("\r") }()
		wg.Wait()
		resp := <-got
		// The keys were taken as the answer, refused as too late, or held
		// as typed for a question that closed.
		// (The hint of held input goes when the line is erased, so held
		// outcomes are counted here.)
		held := `The question closed before your answer, so "2" was not sent.`
		s := p.waitFor("an outcome", func(s string) bool {
			return strings.Count(s, "→ B")+strings.Count(s, "✗ This request is no longer waiting")+strings.Count(s, held)+heldBefore == i+1
		})
		if strings.Contains(s, held) {
			assert.True(t, strings.HasSuffix(s, "Ctrl+U erases it.\n> 2"), "the late answer stays on the line:\n%s", s)
			heldBefore++
			p.send("\x15")
		}
		p.waitCursor(">")
		if resp.Allow {
			assert.Equal(t, map[string]string{"Which?": "B"}, answers(t, resp))
		}
		assert.Empty(t, p.coord.Pending("terminal:t"))
	}
	p.send("done\r")
	s := p.waitText("echo: done")
	assert.NotContains(t, s, "echo: 2", "an answer to a closed question never becomes a prompt")
}

func TestLateAnswerIsHeldThenSentOnRequest(t *testing.T) {
	got := make(chan agent.PermissionResponse, 1)
	q := map[string]any{"question": "Which?", "options": []map[string]string{{"label": "A"}, {"label": "B"}, {"label": "C"}}}
	p := startInproc(t, map[string]turnFunc{"go": ask(q, got)})
	p.send("go\r")
	p.waitText("Choose 1-3")
	p.send("maybe")
	p.waitFor("typed text", func(string) bool { return strings.HasSuffix(p.cursorLine(), "maybe") })
	it := p.coord.Pending("terminal:t")[0]
	require.True(t, p.coord.Cancel(it.ID, "withdrawn"))
	<-got
	p.waitText("✗ Cancelled: withdrawn")
	p.waitCursor("> maybe") // what was typed stays
	p.send("\r")
	p.waitText(`The question closed before your answer, so "maybe" was not sent. Enter sends it to the agent as a message; Ctrl+U erases it.`)
	assert.Equal(t, "> maybe", p.cursorLine(), "the line is kept")
	assert.NotContains(t, p.screen(), "echo: maybe")
	p.send("\r")
	p.waitText("echo: maybe")
}

func TestIdleKeysAndLogsAbovePrompt(t *testing.T) {
	p := startInproc(t, nil)
	p.send("\x03")
	p.waitText("Nothing to stop. Press Ctrl+D or type /exit to quit.")
	p.send("abc")
	p.waitCursor("> abc")
	assert.NotContains(t, p.screen(), "Nothing to stop.", "the hint goes once typing starts")
	_, err := fmt.Fprintln(p.conn.LogWriter(), "level=WARN msg=\"something happened\"")
	require.NoError(t, err)
	s := p.waitText(`level=WARN msg="something happened"`)
	assert.True(t, strings.HasSuffix(s, "level=WARN msg=\"something happened\"\n> abc"), "the log line goes above the prompt and what was typed stays")
	p.send("\x15") // Ctrl+U erases the line
	p.waitCursor(">")
	p.send("/reject\r")
	p.waitText("Nothing to reject")
}

func TestStreamingWithSpinnerAndHostileText(t *testing.T) {
	release := make(chan struct{})
	turn := func(ctx context.Context, _ string, h agent.TurnHandler) (agent.Result, error) {
		h.Text("Hello wor")
		<-release
		h.Text("ld\n\x1b[2J\x1b]0;pwned\x07line two")
		return agent.Result{NumTurns: 1}, nil
	}
	p := startInproc(t, map[string]turnFunc{"go": turn})
	p.send("go\r")
	p.waitFor("partial text with the spinner", func(string) bool {
		l := p.cursorLine()
		return strings.HasPrefix(l, "Hello wor ") && strings.ContainsAny(l, spinner)
	})
	close(release)
	s := p.waitText("Done · 1 step")
	assert.Contains(t, s, "> go\nHello world\n[2J]0;pwnedline two\nDone · 1 step", "control characters from the agent are not obeyed")
	p.waitCursor(">")
}

func TestLineSentSoonAfterACloseIsHeld(t *testing.T) {
	got := make(chan agent.PermissionResponse, 1)
	q := map[string]any{"question": "Which?", "options": []map[string]string{{"label": "A"}, {"label": "B"}}}
	p := startInproc(t, map[string]turnFunc{"go": ask(q, got)}, terminal.WithLateAnswer(time.Minute))
	p.send("go\r")
	p.waitText("Choose 1-2")
	it := p.coord.Pending("terminal:t")[0]
	require.True(t, p.coord.Cancel(it.ID, "withdrawn"))
	<-got
	p.waitText("✗ Cancelled: withdrawn")
	p.waitCursor(">")
	p.send("a\r") // typed after the close, but within the window
	p.waitText(`The question closed before your answer, so "a" was not sent.`)
	p.send("\x15", "hello\r") // only the first line is held
	p.waitText("echo: hello")
	assert.NotContains(t, p.screen(), "echo: a")
}

func TestUpAndDownRecallSentLines(t *testing.T) {
	p := startInproc(t, nil)
	p.send("one\r")
	p.waitText("echo: one")
	p.send("two\r")
	p.waitText("echo: two")
	p.waitCursor(">")
	for _, step := range []struct{ key, line string }{
		{"\x1b[A", "> two"}, {"\x1b[A", "> one"}, {"\x1b[A", "> one"}, // stops at the oldest
		{"\x1b[B", "> two"}, {"\x1b[B", ">"}, {"\x1b[B", ">"},
	} {
		p.send(step.key)
		p.waitCursor(step.line)
	}
	p.send("\x1b[A", "\x1b[A", "\r") // a recalled line is sent again
	p.waitFor("one again", func(s string) bool { return strings.Count(s, "echo: one") == 2 })
}

// bash asks for one Bash call and sends what the agent got back on got;
// then it waits to be interrupted (stopped gets true) or released to go on
// (stopped gets false).
func bash(got chan<- agent.PermissionResponse, release <-chan struct{}, stopped chan<- bool) turnFunc {
	return func(ctx context.Context, _ string, h agent.TurnHandler) (agent.Result, error) {
		in, _ := json.Marshal(map[string]string{"command": "rm -rf build"})
		got <- h.Permission(ctx, agent.PermissionRequest{ToolName: "Bash", Input: in})
		select {
		case <-ctx.Done(): // interrupted
			stopped <- true
			return agent.Result{}, ctx.Err()
		case <-release:
		}
		stopped <- false
		h.Text("went on after the answer")
		return agent.Result{NumTurns: 1}, nil
	}
}

// TestToolApprovalRejectAndDenyWithAReason: r or 2 at a tool approval
// rejects at once: the agent is told the user rejected, the turn is
// interrupted, the screen says so and the prompt is back. d asks for a
// reason the agent reads, and the turn goes on.
func TestToolApprovalRejectAndDenyWithAReason(t *testing.T) {
	for _, key := range []string{"r", "2"} {
		t.Run(key, func(t *testing.T) {
			got, stopped := make(chan agent.PermissionResponse, 1), make(chan bool, 1)
			p := startInproc(t, map[string]turnFunc{"go": bash(got, make(chan struct{}), stopped)})
			p.send("go\r")
			p.waitText("[a/r/s/d]")
			p.send(key + "\r")
			resp := <-got
			assert.False(t, resp.Allow)
			assert.Equal(t, interactions.RejectedText, resp.Message, "the agent reads that the user rejected")
			select {
			case st := <-stopped:
				assert.True(t, st, "the turn was interrupted")
			case <-time.After(15 * time.Second): // bounds the wait only
				t.Fatal("the turn was not interrupted")
			}
			s := p.waitText("Rejected. Agent response cancelled.")
			p.waitCursor(">")
			assert.NotContains(t, s, "Why deny it?")
			assert.NotContains(t, s, "went on after the answer")
		})
	}
	got, stopped, release := make(chan agent.PermissionResponse, 1), make(chan bool, 1), make(chan struct{})
	p := startInproc(t, map[string]turnFunc{"go": bash(got, release, stopped)})
	p.send("go\r")
	p.waitText("[a/r/s/d]")
	p.send("d\r")
	p.waitText("  → Deny\nWhy deny it? The agent reads your reason.")
	p.send("use make clean\r")
	resp := <-got
	assert.False(t, resp.Allow)
	assert.Equal(t, "use make clean", resp.Message)
	close(release)
	assert.False(t, <-stopped, "a deny with a reason lets the turn go on")
	s := p.waitText("went on after the answer")
	assert.NotContains(t, s, "Rejected.")
	p.waitCursor(">")
}

// TestQuestionTextAnswerAndSeveralNumbers: at a question with options,
// typed text is the answer ("Other"), as in every connector; in a
// multi-select "1 3" toggles both.
func TestQuestionTextAnswerAndSeveralNumbers(t *testing.T) {
	got := make(chan agent.PermissionResponse, 1)
	q := map[string]any{"question": "Which?", "options": []map[string]string{{"label": "A"}, {"label": "B"}, {"label": "C"}}}
	m := map[string]any{"question": "Which ones?", "multiSelect": true, "options": []map[string]string{{"label": "A"}, {"label": "B"}, {"label": "C"}}}
	p := startInproc(t, map[string]turnFunc{"one": ask(q, got), "many": ask(m, got)})
	p.send("one\r")
	p.waitText("Choose 1-3 (↑/↓ Enter, r rejects) or type your answer:")
	p.send("neither, use D\r")
	assert.Equal(t, map[string]string{"Which?": "neither, use D"}, answers(t, <-got))
	p.waitText("  → neither, use D")
	p.waitCursor(">")

	p.send("many\r")
	p.waitText("Space toggles")
	p.send("1,3\r")
	p.waitText("❯ 3) [x] C")
	p.send("\r")
	assert.Equal(t, map[string]string{"Which ones?": "A, C"}, answers(t, <-got))
	p.waitText("  → A, C")
}

// TestOneApproverOfAQuorum: the terminal is one approver of a request that
// needs two: its approval keeps the prompt with "1 of 2 approvals — local",
// and the request ends when another approver answers elsewhere.
func TestOneApproverOfAQuorum(t *testing.T) {
	p := startInproc(t, nil, terminal.WithLateAnswer(0))
	got := make(chan interactions.Resolution, 1)
	go func() {
		_, res, err := p.coord.Request(context.Background(), interactions.Interaction{ChatID: "terminal:t", Kind: interactions.KindToolApproval,
			ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"make deploy"}`), ToolSummary: "make deploy", Quorum: 2})
		assert.NoError(t, err)
		got <- res
	}()
	p.waitText("[a/r/s/d]")
	p.send("a\r")
	p.waitText("1 of 2 approvals — local")
	it := p.coord.Pending("terminal:t")[0]
	_, err := p.coord.Reply(it.ID, interactions.Reply{By: "someone", Answers: []string{interactions.DecisionAllow}})
	require.NoError(t, err)
	res := <-got
	assert.Equal(t, interactions.StatusAnswered, res.Status)
	require.Len(t, res.Approvals, 2)
	assert.Equal(t, "local", res.Approvals[0].By)
	p.waitCursor(">")
}

// TestInterruptedQuorumKeepsItsCount: a request that needs two approvals,
// approved here, is interrupted by leashd stopping: the line saying so
// still says "1 of 2 approvals — local" (that approval counts after the
// restart).
func TestInterruptedQuorumKeepsItsCount(t *testing.T) {
	p := startInproc(t, nil, terminal.WithLateAnswer(0))
	got := make(chan interactions.Resolution, 1)
	go func() {
		_, res, err := p.coord.Request(context.Background(), interactions.Interaction{ChatID: "terminal:t", Kind: interactions.KindToolApproval,
			ToolName: "Bash", ToolInput: json.RawMessage(`{"command":"make deploy"}`), ToolSummary: "make deploy", Quorum: 2})
		assert.NoError(t, err)
		got <- res
	}()
	p.waitText("[a/r/s/d]")
	p.send("a\r")
	p.waitText("1 of 2 approvals — local")
	p.coord.Interrupt(interactions.InterruptedNotice)
	res := <-got
	assert.Equal(t, interactions.StatusInterrupted, res.Status)
	p.waitText("✗ Interrupted: " + interactions.InterruptedNotice + " (1 of 2 approvals — local)")
}
