// Package terminal is the connector for people at a shell (`leashd chat`):
// agent text streams into the terminal with a spinner while the agent works,
// and questions, plan reviews and tool approvals become prompts answered
// with the keyboard.
//
// Interactions are shown in one of three modes (interactions.AnswerMode):
//   - approval (tool approvals, and two-option requests made through
//     interactions.InputHandler): a or 1 approves, r or 2 the second
//     option; at a tool approval r or 2 rejects at once (as Ctrl+C), s or
//     3 allows for the session and d or 4 denies with a typed reason; no
//     default.
//   - choice (questions and plan reviews, however many options): a
//     numbered list with a ↑/↓ pointer and an "r) Reject" line; a number or
//     Enter on the pointer chooses; multi-select toggles with Space (or
//     numbers: "1 3", "1,3", "13") and confirms with Enter. At a question,
//     other text is the person's own answer ("Other").
//   - text: a "?" prompt; empty input re-prompts.
//
// Ctrl+C at any interaction prompt, "/reject", or Reject in a list tells
// the agent the user rejected the request and stops the running turn.
//
// When the input is a terminal it is put in raw mode and read key by key;
// otherwise it is read line by line. Colours are used only when the output
// is a terminal and NO_COLOR is not set.
package terminal

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// Name is the connector's name and chat ID prefix.
const Name = "terminal"

// Connector is the terminal connector. Create it with New.
type Connector struct {
	in     io.Reader
	out    io.Writer
	chatID string
	userID string
	user   string
	color  *bool // nil: decided from the output and NO_COLOR
	tty    *bool // nil: decided from the output
	raw    *bool // nil: raw keys when the input is a terminal
	spin   time.Duration
	late   time.Duration
	width  func() int

	mu      sync.Mutex
	events  []outEvent
	stopped bool          // Run has returned
	wake    chan struct{} // capacity 1
	// swallow is set while the connector runs its own /stop after a
	// rejection: the engine's "Stopped." reply is not shown.
	swallow atomic.Bool
}

// Option configures a Connector.
type Option func(*Connector)

// WithChat sets the chat: its ID is "terminal:<id>" (default "local").
func WithChat(id string) Option {
	return func(c *Connector) {
		if id != "" {
			c.chatID = Name + ":" + id
		}
	}
}

// WithUser sets who is typing: the user ID recorded with answers and a
// display name.
func WithUser(id, name string) Option {
	return func(c *Connector) { c.userID, c.user = id, name }
}

// WithColor forces colours on or off (default: on when the output is a
// terminal and NO_COLOR is unset).
func WithColor(on bool) Option { return func(c *Connector) { c.color = &on } }

// WithTTY says whether the output is a terminal that understands cursor
// movement (default: detected).
func WithTTY(on bool) Option { return func(c *Connector) { c.tty = &on } }

// WithRawInput says whether to read the input key by key (default: when
// both the input and the output are terminals). The input is put in raw
// mode only when it is a terminal.
func WithRawInput(on bool) Option { return func(c *Connector) { c.raw = &on } }

// WithSpinnerInterval sets how often the spinner turns (default 100ms).
func WithSpinnerInterval(d time.Duration) Option { return func(c *Connector) { c.spin = d } }

// WithLateAnswer sets how soon after a question closed without the
// person's answer (cancelled, expired, answered elsewhere) a line sent at
// the normal prompt is taken for a late answer and held until Enter is
// pressed again (default 1s). A line begun before the question closed is
// always held.
func WithLateAnswer(d time.Duration) Option { return func(c *Connector) { c.late = max(d, 0) } }

// WithWidth sets how the terminal width is found (default: asked from the
// output terminal, else 80).
func WithWidth(f func() int) Option { return func(c *Connector) { c.width = f } }

// New returns a terminal connector reading in and writing out.
func New(in io.Reader, out io.Writer, opts ...Option) *Connector {
	c := &Connector{
		in: in, out: out,
		chatID: Name + ":local",
		userID: "local",
		spin:   100 * time.Millisecond,
		late:   time.Second,
		wake:   make(chan struct{}, 1),
	}
	for _, o := range opts {
		o(c)
	}
	if c.user == "" {
		c.user = c.userID
	}
	return c
}

// Name implements connectors.Connector.
func (c *Connector) Name() string { return Name }

func isTerminal(v any) (int, bool) {
	f, ok := v.(interface{ Fd() uintptr })
	if !ok {
		return 0, false
	}
	fd := int(f.Fd())
	return fd, term.IsTerminal(fd)
}

// Run reads the person's input until they quit (Ctrl+D on an empty line,
// /exit, or the end of the input), or ctx is done. It returns nil on a clean
// stop.
func (c *Connector) Run(ctx context.Context, h connectors.Handler) error {
	outFD, outTTY := isTerminal(c.out)
	tty := outTTY
	if c.tty != nil {
		tty = *c.tty
	}
	color := tty && os.Getenv("NO_COLOR") == ""
	if c.color != nil {
		color = *c.color
	}
	width := c.width
	if width == nil && outTTY {
		width = func() int {
			w, _, err := term.GetSize(outFD)
			if err != nil {
				return 0
			}
			return w
		}
	}
	inFD, inTTY := isTerminal(c.in)
	// Keys are read raw only when the screen can show what is typed; with
	// the output redirected the terminal's own line editing echoes it.
	raw := inTTY && tty
	if c.raw != nil {
		raw = *c.raw
	}
	if raw && inTTY {
		old, err := term.MakeRaw(inFD)
		if err != nil {
			return fmt.Errorf("reading keys from the terminal (raw mode): %w", err)
		}
		defer term.Restore(inFD, old)
	}
	u := newUI(c, h, &screen{w: c.out, tty: tty, color: color, width: width})
	defer func() {
		c.mu.Lock()
		c.stopped = true
		for _, e := range c.events { // logs written while stopping
			if e.kind == outLog {
				nl := "\n"
				if tty {
					nl = "\r\n" // still in raw mode
				}
				_, _ = io.WriteString(c.out, e.text+nl)
			}
		}
		c.events = nil
		c.mu.Unlock()
	}()
	return u.run(ctx, raw)
}

// outEvent is engine output waiting to be shown by the UI loop.
type outEvent struct {
	kind    outKind
	text    string
	summary connectors.Summary
	it      interactions.Interaction
	ev      interactions.Event
}

type outKind int

const (
	outSay outKind = iota
	outStream
	outDone
	outPresent
	outUpdate
	outLog
	outProgress // a long turn's signs of life (progress.go)
)

// push queues output for the UI loop without ever blocking the engine.
func (c *Connector) push(e outEvent) {
	c.mu.Lock()
	c.events = append(c.events, e)
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

func (c *Connector) take() []outEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	ev := c.events
	c.events = nil
	return ev
}

func (c *Connector) mine(chatID string) bool { return chatID == c.chatID }

// Say implements connectors.Output.
func (c *Connector) Say(_ context.Context, chatID, text string) error {
	if !c.mine(chatID) || c.swallow.Load() && isStopReply(text) {
		return nil
	}
	c.push(outEvent{kind: outSay, text: text})
	return nil
}

// StreamText implements connectors.Output.
func (c *Connector) StreamText(_ context.Context, chatID, text string) error {
	if c.mine(chatID) {
		c.push(outEvent{kind: outStream, text: text})
	}
	return nil
}

// Done implements connectors.Output.
func (c *Connector) Done(_ context.Context, chatID string, s connectors.Summary) error {
	if c.mine(chatID) {
		c.push(outEvent{kind: outDone, summary: s})
	}
	return nil
}

// Present implements connectors.Output: the interaction is queued and
// shown as soon as the ones before it are answered. The reference is the
// interaction ID.
func (c *Connector) Present(_ context.Context, it *interactions.Interaction) (string, error) {
	if c.mine(it.ChatID) {
		c.push(outEvent{kind: outPresent, it: *it}) // a copy: *it is lent only for the call
	}
	return it.ID, nil
}

// Update implements connectors.Output.
func (c *Connector) Update(_ context.Context, ev interactions.Event) error {
	if c.mine(ev.Interaction.ChatID) {
		c.push(outEvent{kind: outUpdate, ev: ev})
	}
	return nil
}

var _ connectors.Connector = (*Connector)(nil)

// LogWriter returns a writer whose lines are shown dimmed above the
// prompt, so log lines never land in the middle of what is being typed.
func (c *Connector) LogWriter() io.Writer { return logWriter{c} }

type logWriter struct{ c *Connector }

func (w logWriter) Write(p []byte) (int, error) {
	w.c.mu.Lock()
	stopped := w.c.stopped
	w.c.mu.Unlock()
	if stopped { // the prompt is gone: write straight through
		return w.c.out.Write(p)
	}
	w.c.push(outEvent{kind: outLog, text: strings.TrimRight(string(p), "\n")})
	return len(p), nil
}
