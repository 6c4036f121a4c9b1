package terminal

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// Texts the screen shows.
const (
	idleGlyph    = "> "
	textGlyph    = "? "
	rejectedLine = "Rejected. Agent response cancelled."
	spinFrames   = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
)

// purpose is what a text prompt's answer is for.
type purpose int

const (
	forAnswer     purpose = iota // a question's free-text answer
	forFeedback                  // plan review: what should change (adjust)
	forDenyReason                // tool approval: why it is denied
)

// prompt is an interaction being shown (or waiting its turn).
type prompt struct {
	it       interactions.Interaction
	mode     interactions.AnswerMode
	keys     []approvalKey // when mode is interactions.AnswerApproval
	text     purpose       // when mode is interactions.AnswerText
	pointer  int           // choice: 0..len(options); len(options) is the Reject line
	selected map[string]bool
	hint     string // why the last input was not accepted
	shown    bool   // its context lines are in the transcript
	denying  bool   // the option being sent refuses (StyleDeny): shown as Denied
}

// ui is the connector's single-threaded loop: it alone writes the screen.
type ui struct {
	c   *Connector
	h   connectors.Handler
	s   *screen
	ctx context.Context
	raw bool // keys are read one by one (else a line at a time)

	input    []rune
	busy     bool   // an agent turn is running
	streamed bool   // the running turn streamed text
	partial  string // streamed text after the last newline
	frame    int
	queue    []*prompt // interactions in the order presented; queue[0] is active
	gone     map[string]bool
	dropTurn bool // after a rejection: the cancelled turn's output is not shown
	eof      bool // the input ended: quit once nothing is running
	// closedAt is when a question closed without the person's answer
	// (cancelled, expired, answered elsewhere); lineAt is when the line
	// being typed was started. A line begun before, or sent just after, is
	// probably a late answer and is not sent as a prompt unasked.
	closedAt time.Time
	lineAt   time.Time
	history  []string // lines sent at the normal prompt, oldest first
	histPos  int      // position while recalling with ↑/↓; len(history) is the new line
	held     []keyPress
	heldEOF  bool // the input ended after the held keys
	hint     string
	progress string // the running turn's signs of life, beside the spinner
}

// newUI returns the loop of c, handing what the person does to h and
// drawing on s.
func newUI(c *Connector, h connectors.Handler, s *screen) *ui {
	return &ui{c: c, h: h, s: s, gone: make(map[string]bool)}
}

// inEvent is what the reader goroutine read: keys, the end of the input,
// or a read error.
type inEvent struct {
	keys []keyPress
	eof  bool
	err  error
}

// run is the loop: it reads keys (one by one when raw, else lines), the
// engine's output and the spinner's ticks until the person quits or ctx
// ends.
func (u *ui) run(ctx context.Context, raw bool) error {
	u.ctx, u.raw = ctx, raw
	done := make(chan struct{})
	defer close(done)
	inCh := make(chan inEvent)
	go readInput(u.c.in, raw, inCh, done)

	var tick <-chan time.Time
	if u.s.tty && u.c.spin > 0 {
		t := time.NewTicker(u.c.spin)
		defer t.Stop()
		tick = t.C
	}
	u.s.commit(u.s.paint(sgrDim, "leashd chat ("+u.c.chatID+") — type a message; /help lists commands, Ctrl+D or /exit quits."))
	u.redraw()
	if err := u.s.flush(); err != nil {
		return fmt.Errorf("writing to the terminal: %w", err)
	}
	defer func() {
		u.s.erase()
		_ = u.s.flush()
	}()
	for {
		select {
		case <-ctx.Done():
			u.outputs()
			return nil
		case <-u.c.wake:
			u.outputs()
		case ev := <-inCh:
			u.outputs() // what the agent said before the key counts first
			if ev.err != nil {
				return fmt.Errorf("reading the terminal: %w", ev.err)
			}
			u.held = append(u.held, ev.keys...)
			u.heldEOF = u.heldEOF || ev.eof
		case <-tick:
			if u.spinning() {
				u.frame++
				u.redraw()
			}
		}
		if quit := u.feed(raw); quit {
			return nil
		}
		if u.eof && !u.busy && len(u.queue) == 0 {
			u.outputs()
			return nil
		}
		if err := u.s.flush(); err != nil {
			return fmt.Errorf("writing to the terminal: %w", err)
		}
	}
}

// feed handles the keys read so far. Typed keys are handled at once; lines
// read from a pipe wait while the agent works until it asks something or
// finishes, so a script's answers reach the questions they are meant for.
// It reports whether the person quit.
func (u *ui) feed(raw bool) bool {
	for len(u.held) > 0 {
		if !raw && u.busy && u.active() == nil {
			return false
		}
		k := u.held[0]
		u.held = u.held[1:]
		if u.key(k) {
			return true
		}
		if !raw && k.Kind == keyEnter {
			u.outputs() // let the engine's answer arrive before the next line
		}
	}
	if u.heldEOF && !u.eof {
		u.eof = true
		u.closeInput()
		u.redraw()
	}
	return false
}

// readInput sends keys (raw mode) or lines as keys (line mode) until the
// input ends or done is closed.
func readInput(in io.Reader, raw bool, ch chan<- inEvent, done <-chan struct{}) {
	send := func(ev inEvent) bool {
		select {
		case ch <- ev:
			return true
		case <-done:
			return false
		}
	}
	if raw {
		var d keyDecoder
		buf := make([]byte, 4096)
		for {
			n, err := in.Read(buf)
			if n > 0 {
				if keys := d.Feed(buf[:n]); len(keys) > 0 && !send(inEvent{keys: keys}) {
					return
				}
			}
			if err != nil {
				ev := inEvent{keys: d.Flush(), eof: true}
				if !errors.Is(err, io.EOF) {
					ev.err = err
				}
				send(ev)
				return
			}
		}
	}
	r := bufio.NewReader(in)
	for {
		line, err := r.ReadString('\n')
		line = strings.TrimRight(line, "\r\n")
		if line != "" || err == nil {
			keys := make([]keyPress, 0, len(line)+1)
			for _, c := range sanitize(line) {
				if c == '\t' {
					c = ' '
				}
				keys = append(keys, keyPress{Kind: keyRune, Rune: c})
			}
			keys = append(keys, keyPress{Kind: keyEnter})
			if !send(inEvent{keys: keys}) {
				return
			}
		}
		if err != nil {
			ev := inEvent{eof: true}
			if !errors.Is(err, io.EOF) {
				ev.err = err
			}
			send(ev)
			return
		}
	}
}

// active is the interaction being answered (nil: none).
func (u *ui) active() *prompt {
	if len(u.queue) == 0 {
		return nil
	}
	return u.queue[0]
}

// spinning reports whether the spinner shows: a turn runs, nothing asks.
func (u *ui) spinning() bool { return u.busy && u.active() == nil }
