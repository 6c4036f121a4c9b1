package acp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/interactions"
)

// rpc is a JSON-RPC message as the scripted agent sees it.
type rpc struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      *int            `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data,omitempty"`
	} `json:"error,omitempty"`
}

// scripted is an ACP agent written by hand, speaking raw JSON-RPC over
// pipes, so tests control every byte the client receives and see every
// answer it gives.
type scripted struct {
	t        testing.TB
	out      io.WriteCloser
	onPrompt func(a *scripted, text string) string // returns the stop reason
	modes    string                                // session/new's modes JSON
	caps     string                                // initialize's agentCapabilities JSON
	replay   int                                   // more history updates session/load replays

	mu      sync.Mutex
	next    int
	waiting map[int]chan rpc
	got     []rpc // requests and notifications from the client
	prompts []string
	changed chan struct{}
	eof     bool
	writeMu sync.Mutex
}

func (a *scripted) write(m any) {
	b, err := json.Marshal(m)
	if err != nil {
		a.t.Errorf("scripted agent: %v", err)
		return
	}
	a.writeMu.Lock()
	defer a.writeMu.Unlock()
	_, _ = a.out.Write(append(b, '\n'))
}

func (a *scripted) record(m rpc) {
	a.mu.Lock()
	a.got = append(a.got, m)
	if m.Method == "session/prompt" {
		var p struct {
			Prompt []struct {
				Text string `json:"text"`
			} `json:"prompt"`
		}
		_ = json.Unmarshal(m.Params, &p)
		var texts []string
		for _, b := range p.Prompt {
			texts = append(texts, b.Text)
		}
		a.prompts = append(a.prompts, strings.Join(texts, ""))
	}
	close(a.changed)
	a.changed = make(chan struct{})
	a.mu.Unlock()
}

// order lists the methods of the client's messages in arrival order, an
// answer to one of the agent's requests as "(answer)".
func (a *scripted) order() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, m := range a.got {
		out = append(out, m.Method)
	}
	return out
}

// received lists the client's messages of a method.
func (a *scripted) received(method string) []rpc {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []rpc
	for _, m := range a.got {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

func (a *scripted) promptTexts() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.prompts...)
}

// waitReceived waits until the client sent n messages of method.
func (a *scripted) waitReceived(method string, n int) []rpc {
	a.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		a.mu.Lock()
		ch := a.changed
		a.mu.Unlock()
		if got := a.received(method); len(got) >= n {
			return got
		}
		select {
		case <-ch:
		case <-deadline:
			a.t.Fatalf("scripted agent: waited for %d %s, got %d", n, method, len(a.received(method)))
		}
	}
}

// call sends a request to the client and waits for its answer.
func (a *scripted) call(method string, params any) rpc {
	a.mu.Lock()
	a.next++
	id := a.next
	ch := make(chan rpc, 1)
	a.waiting[id] = ch
	a.mu.Unlock()
	raw, _ := json.Marshal(params)
	a.write(rpc{JSONRPC: "2.0", ID: &id, Method: method, Params: raw})
	select {
	case r := <-ch:
		return r
	case <-time.After(30 * time.Second):
		a.t.Errorf("scripted agent: no answer to %s", method)
		return rpc{}
	}
}

func (a *scripted) notify(method string, params any) {
	raw, _ := json.Marshal(params)
	a.write(rpc{JSONRPC: "2.0", Method: method, Params: raw})
}

// update sends a session/update.
func (a *scripted) update(u any) {
	a.notify("session/update", map[string]any{"sessionId": "sess-1", "update": u})
}

// closed reports whether the client closed its side (the session ended).
func (a *scripted) closed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.eof
}

func (a *scripted) serve(in io.Reader) {
	defer func() {
		a.mu.Lock()
		a.eof = true
		a.mu.Unlock()
		a.out.Close()
	}()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 1<<20), 8<<20)
	for sc.Scan() {
		var m rpc
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			a.t.Errorf("scripted agent: unreadable line %q: %v", sc.Text(), err)
			continue
		}
		if m.Method == "" && m.ID != nil { // an answer to our request
			a.record(rpc{Method: "(answer)", ID: m.ID, Result: m.Result})
			a.mu.Lock()
			ch := a.waiting[*m.ID]
			delete(a.waiting, *m.ID)
			a.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		a.record(m)
		if m.ID == nil {
			continue
		}
		go a.answer(m)
	}
}

func (a *scripted) answer(m rpc) {
	reply := func(result string) {
		a.write(rpc{JSONRPC: "2.0", ID: m.ID, Result: json.RawMessage(result)})
	}
	switch m.Method {
	case "initialize":
		reply(`{"protocolVersion":1,"agentCapabilities":` + a.caps + `,"authMethods":[]}`)
	case "session/new":
		reply(`{"sessionId":"sess-1","modes":` + a.modes + `}`)
	case "session/resume":
		reply(`{"modes":` + a.modes + `}`)
	case "session/load":
		// The history is replayed before the answer; it is not shown again.
		a.update(map[string]any{"sessionUpdate": "user_message_chunk", "content": map[string]any{"type": "text", "text": "old prompt"}})
		a.update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": "OLD REPLY"}})
		for i := range a.replay {
			a.update(map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]any{"type": "text", "text": fmt.Sprint("old ", i)}})
		}
		reply(`{"modes":` + a.modes + `}`)
	case "session/set_mode":
		reply(`{}`)
	case "session/prompt":
		var p struct {
			Prompt []struct {
				Text string `json:"text"`
			} `json:"prompt"`
		}
		_ = json.Unmarshal(m.Params, &p)
		text := ""
		for _, b := range p.Prompt {
			text += b.Text
		}
		stop := "end_turn"
		if a.onPrompt != nil {
			stop = a.onPrompt(a, text)
		}
		reply(fmt.Sprintf(`{"stopReason":%q}`, stop))
	default:
		a.write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "Method not found"}})
	}
}

const claudeModes = `{"currentModeId":"auto","availableModes":[{"id":"auto","name":"Auto"},{"id":"default","name":"Default"},{"id":"plan","name":"Plan"}]}`

// scriptedAgent opens sessions with a scripted agent over pipes.
type scriptedAgent struct {
	t        testing.TB
	log      *slog.Logger
	onPrompt func(a *scripted, text string) string
	caps     string // initialize's agentCapabilities (default: resume and load)

	mu   sync.Mutex
	last *scripted
	all  []*scripted
}

func (p *scriptedAgent) Name() string { return "acp" }

func (p *scriptedAgent) Open(ctx context.Context, opts agent.SessionOptions) (agent.Session, error) {
	c2aR, c2aW := io.Pipe()
	a2cR, a2cW := io.Pipe()
	caps := p.caps
	if caps == "" {
		caps = `{"loadSession":true,"sessionCapabilities":{"resume":{}}}`
	}
	a := &scripted{t: p.t, out: a2cW, onPrompt: p.onPrompt, modes: claudeModes, caps: caps, waiting: map[int]chan rpc{}, changed: make(chan struct{})}
	go a.serve(c2aR)
	s := newSession(New(nil, WithLogger(p.log), WithCloseTimeout(time.Second)), opts.ChatID, "scripted", nil, c2aW)
	s.connect(a2cR)
	go func() {
		<-s.conn.Done()
		close(s.done)
	}()
	p.mu.Lock()
	p.last = a
	p.all = append(p.all, a)
	p.mu.Unlock()
	if err := s.start(ctx, opts); err != nil {
		return nil, err
	}
	return s, nil
}

func (p *scriptedAgent) agent() *scripted {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// newScriptedStack runs the scripted agent behind the engine, in Telegram.
func newScriptedStack(t *testing.T, onPrompt func(a *scripted, text string) string, coordOpts ...interactions.Opt) (*stack, *scriptedAgent) {
	t.Helper()
	return newScriptedStackWith(t, &scriptedAgent{onPrompt: onPrompt}, coordOpts)
}

// newScriptedStackWith runs sa (its t and log filled in) with options.
func newScriptedStackWith(t *testing.T, sa *scriptedAgent, coordOpts []interactions.Opt, engineOpts ...enginetest.Setup) (*stack, *scriptedAgent) {
	t.Helper()
	logs := &testenv.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	sa.t, sa.log = t, log
	return buildStack(t, sa, logs, log, coordOpts, engineOpts...), sa
}

func (p *scriptedAgent) About() agent.About {
	return agent.About{Label: "the script agent", Title: "script agent"}
}

func (p *scriptedAgent) Ready() error { return nil }
