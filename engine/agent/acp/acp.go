// Package acp runs an agent that speaks the Agent Client Protocol (JSON-RPC
// 2.0 over its stdio) behind the engine's Agent interface: Gemini CLI
// (gemini --acp), Codex (codex-acp), OpenCode (opencode acp), Claude
// (claude-agent-acp) and others. One agent process per chat session.
//
// What the agent asks becomes what the engine already knows how to ask:
// session/request_permission a tool approval with the agent's own options
// (agent.PermissionRequest.Options), the Claude adapter's ExitPlanMode a
// plan review, a form elicitation (elicitation/create) AskUserQuestion-style
// questions asked one at a time. Every request the agent sends is answered;
// methods leashd does not know get a JSON-RPC "method not found" error.
package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/leashd/leashd/engine/agent"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/leashd/leashd/engine/agent/sandbox"
)

// Agent starts ACP agent processes.
type Agent struct {
	argv         []string
	env          []string
	log          *slog.Logger
	startTimeout time.Duration
	closeTimeout time.Duration
	sandbox      sandbox.Sandbox
	maxLine      int // DefaultMaxMessageBytes
}

// Option configures an Agent.
type Option func(*Agent)

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(a *Agent) { a.log = l } }

// WithEnv adds environment variables (KEY=value) to the agent's.
func WithEnv(env ...string) Option { return func(a *Agent) { a.env = append(a.env, env...) } }

// WithSandbox sets where the agent runs (default: leashd's child process,
// unconfined, with the minimal environment).
func WithSandbox(sb sandbox.Sandbox) Option { return func(a *Agent) { a.sandbox = sb } }

// WithStartTimeout bounds initialize and session set-up (default 2 min).
func WithStartTimeout(d time.Duration) Option { return func(a *Agent) { a.startTimeout = d } }

// WithMaxMessageBytes sets the longest message (line) from the agent read
// whole (default DefaultMaxMessageBytes; at least MinMessageBytes). A
// longer request is answered with an error, a longer session/update left
// out with a note; it bounds the memory a session's reader uses.
func WithMaxMessageBytes(n int) Option {
	return func(a *Agent) {
		if n > 0 {
			a.maxLine = max(n, MinMessageBytes)
		}
	}
}

// WithCloseTimeout is how long each shutdown step waits (default 5 s).
func WithCloseTimeout(d time.Duration) Option { return func(a *Agent) { a.closeTimeout = d } }

// New returns an Agent running argv (the command and its arguments, as
// config.SplitCommandLine gives them).
func New(argv []string, opts ...Option) *Agent {
	a := &Agent{argv: argv, log: slog.New(slog.DiscardHandler), startTimeout: 2 * time.Minute, closeTimeout: 5 * time.Second, maxLine: DefaultMaxMessageBytes}
	for _, o := range opts {
		o(a)
	}
	if a.sandbox == nil {
		a.sandbox = &sandbox.Host{}
	}
	return a
}

// Name implements agent.Agent.
func (a *Agent) Name() string { return "acp" }

// About implements agent.Agent: the agent is named by its program
// ("the ACP agent gemini").
func (a *Agent) About() agent.About {
	label := "an ACP agent"
	if len(a.argv) > 0 {
		label = "the ACP agent " + filepath.Base(a.argv[0])
	}
	login := "The agent logs in on the machine that runs leashd, not from the chat: on that machine, give it its API key in leashd's environment (e.g. its env file) and restart leashd, or run it once as the user leashd runs as and follow its own login steps. Then send your message again."
	return agent.About{
		Label:       label,
		Title:       "acp agent",
		InstallHint: "Install the agent or fix LEASHD_ACP_COMMAND (e.g. \"gemini --acp\", \"claude-agent-acp\", \"codex-acp\", \"opencode acp\"); LEASHD_AGENT=demo runs the built-in demo agent.",
		LoginHelp:   login,
		NotLoggedIn: label + " is not logged in, or its credentials were refused, so it could not answer. " + login,
	}
}

// Ready implements agent.Agent: the agent's program is an executable.
func (a *Agent) Ready() error {
	if len(a.argv) == 0 {
		return fmt.Errorf("%w: no ACP command given (LEASHD_ACP_COMMAND)", agent.ErrAgentNotFound)
	}
	if _, err := a.sandbox.LookPath(a.argv[0]); err != nil {
		return fmt.Errorf("%s not found: %w", a.argv[0], err)
	}
	return nil
}

// Open implements agent.Agent: it starts the agent, initializes it, and
// opens a session in opts.WorkDir — resuming opts.ResumeID with
// session/resume or session/load when the agent offers either — then sets
// the chat's mode when the agent has it.
func (a *Agent) Open(ctx context.Context, opts agent.SessionOptions) (agent.Session, error) {
	if len(a.argv) == 0 {
		return nil, fmt.Errorf("%w: no ACP command given (LEASHD_ACP_COMMAND)", agent.ErrAgentNotFound)
	}
	path, err := a.sandbox.LookPath(a.argv[0])
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", agent.ErrAgentNotFound, a.argv[0], err)
	}
	proc, err := a.sandbox.Start(sandbox.Spec{Path: path, Args: a.argv[1:], Dir: opts.WorkDir, Env: a.env, Name: opts.ChatID})
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", a.argv[0], err)
	}
	s := newSession(a, opts.ChatID, filepath.Base(path), proc, proc.Stdin())
	s.notice = opts.Notice
	go func() {
		_, _ = io.Copy(&s.stderr, proc.Stderr())
		proc.Stderr().Close()
	}()
	s.connect(proc.Stdout())
	go func() {
		err := proc.Wait()
		// What the agent started (an adapter's CLI) ends before the
		// session counts as ended.
		proc.End(a.closeTimeout)
		s.mu.Lock()
		s.exitErr = err
		s.mu.Unlock()
		close(s.done)
	}()
	if err := s.start(ctx, opts); err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*a.closeTimeout)
		_ = s.Close(cctx)
		cancel()
		return nil, err
	}
	return s, nil
}

// newSession is a session writing to w; proc is its process (nil in tests
// that speak ACP over pipes).
func newSession(a *Agent, chatID, agentName string, proc sandbox.Process, w io.WriteCloser) *session {
	return &session{
		a: a, proc: proc, stdin: w, done: make(chan struct{}),
		log:   a.log.With("chat", chatID, "agent", agentName),
		urls:  map[string]*urlWait{},
		tools: map[string]string{},
	}
}

// connect starts reading what the agent sends (through pump: see
// DefaultMaxMessageBytes), and ending the session when the connection
// closes (watchConnection).
func (s *session) connect(r io.Reader) {
	pr, pw := io.Pipe()
	s.conn = sdk.NewConnection(s.handle, s.stdin, pr)
	s.conn.SetLogger(slog.New(cappedHandler{s.log.Handler()}))
	go s.pump(r, pw)
	go func() {
		<-s.conn.Done()
		pr.Close() // the SDK reads no more: pump's writes fail instead of blocking
	}()
	go s.watchConnection()
}

// start runs initialize and opens (or resumes) the session.
func (s *session) start(ctx context.Context, opts agent.SessionOptions) error {
	ctx, cancel := context.WithTimeout(ctx, s.a.startTimeout)
	defer cancel()
	init, err := call[sdk.InitializeResponse](ctx, s, sdk.AgentMethodInitialize, sdk.InitializeRequest{
		ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientInfo:      &sdk.Implementation{Name: "leashd", Version: "1"},
		ClientCapabilities: sdk.ClientCapabilities{
			// leashd shows forms as questions and links as links; it
			// offers no file system or terminal of its own: the agent
			// uses its own.
			Elicitation: &sdk.ElicitationCapabilities{Form: &sdk.ElicitationFormCapabilities{}, Url: &sdk.ElicitationUrlCapabilities{}},
		},
	})
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	s.canLoad = init.AgentCapabilities.LoadSession
	s.canResume = init.AgentCapabilities.SessionCapabilities.Resume != nil
	s.mu.Lock()
	s.images = init.AgentCapabilities.PromptCapabilities.Image
	s.mu.Unlock()
	servers := mcpServers(opts.MCPServers, init.AgentCapabilities.McpCapabilities.Http)
	var modes *sdk.SessionModeState
	switch {
	case opts.ResumeID != "" && s.canResume:
		r, err := call[sdk.ResumeSessionResponse](ctx, s, sdk.AgentMethodSessionResume, sdk.ResumeSessionRequest{SessionId: sdk.SessionId(opts.ResumeID), Cwd: opts.WorkDir, McpServers: servers})
		if err != nil {
			return fmt.Errorf("session/resume %s: %w", opts.ResumeID, err)
		}
		s.id, modes = opts.ResumeID, r.Modes
	case opts.ResumeID != "" && s.canLoad:
		s.mu.Lock()
		s.replaying = true // the history it replays is not shown again
		s.mu.Unlock()
		r, err := call[sdk.LoadSessionResponse](ctx, s, sdk.AgentMethodSessionLoad, sdk.LoadSessionRequest{SessionId: sdk.SessionId(opts.ResumeID), Cwd: opts.WorkDir, McpServers: servers})
		s.mu.Lock()
		s.replaying = false
		s.mu.Unlock()
		if err != nil {
			return fmt.Errorf("session/load %s: %w", opts.ResumeID, err)
		}
		s.id, modes = opts.ResumeID, r.Modes
	case opts.ResumeID != "":
		return fmt.Errorf("the agent can neither resume nor load sessions (it offers no session/resume or session/load)")
	default:
		r, err := call[sdk.NewSessionResponse](ctx, s, sdk.AgentMethodSessionNew, sdk.NewSessionRequest{Cwd: opts.WorkDir, McpServers: servers})
		if err != nil {
			return fmt.Errorf("session/new: %w", err)
		}
		s.id, modes = string(r.SessionId), r.Modes
	}
	s.mu.Lock()
	if modes != nil {
		s.modes = modes.AvailableModes
		s.current = string(modes.CurrentModeId)
	}
	hasModes := len(s.modes) > 0
	s.mu.Unlock()
	if hasModes && opts.Mode != "" {
		if err := s.SetMode(ctx, opts.Mode); errors.Is(err, agent.ErrModeUnsupported) {
			s.mu.Lock()
			s.note = fmt.Sprintf("(The agent has no %s mode; it runs in its %s mode.)", opts.Mode, s.modeNameLocked(s.current))
			s.mu.Unlock()
		} else if err != nil {
			return fmt.Errorf("session/set_mode: %w", err)
		}
	}
	return nil
}

// call sends a request and waits for its answer, the session's end or ctx.
func call[T any](ctx context.Context, s *session, method string, params any) (T, error) {
	var zero T
	type res struct {
		v   T
		err error
	}
	ch := make(chan res, 1)
	go func() {
		v, err := sdk.SendRequest[T](s.conn, ctx, method, params)
		ch <- res{v, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil && s.lost() {
			return zero, s.endedErr()
		}
		return r.v, r.err
	case <-s.done:
		return zero, s.endedErr()
	}
}

// tail keeps the last bytes the agent wrote to stderr, for error messages.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 2048

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > tailBytes {
		t.buf = t.buf[len(t.buf)-tailBytes:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(strings.ToValidUTF8(string(t.buf), "?"))
}

// rawJSON marshals v, or returns {} when it cannot.
func rawJSON(v any) json.RawMessage {
	if v == nil {
		return json.RawMessage("{}")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("{}")
	}
	return b
}
