package terminal

import (
	"fmt"
	"strings"
	"time"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// key handles one key; it reports whether the person quit.
func (u *ui) key(k keyPress) bool {
	p := u.active()
	if k.Kind != keyCtrlC {
		u.hint = ""
	}
	switch k.Kind {
	case keyRune:
		// Space, as a key, toggles the pointed option; once something is
		// typed, or in a line read whole, it is part of the line ("1 3",
		// or an answer of its own).
		if u.raw && p != nil && p.mode == interactions.AnswerChoice && p.it.MultiSelect && k.Rune == ' ' && len(u.input) == 0 {
			u.toggle(p, p.pointer)
			break
		}
		if len(u.input) == 0 {
			u.lineAt = time.Now()
		}
		u.input = append(u.input, k.Rune)
	case keyBackspace:
		if len(u.input) > 0 {
			u.input = u.input[:len(u.input)-1]
		}
	case keyCtrlU:
		u.input = nil
	case keyUp, keyDown:
		if p == nil {
			u.recall(k.Kind == keyUp)
			break
		}
		if p.mode == interactions.AnswerChoice {
			n := len(p.it.Options) + 1 // with the Reject line
			d := 1
			if k.Kind == keyUp {
				d = n - 1
			}
			p.pointer = (p.pointer + d) % n
			p.hint = ""
		}
	case keyCtrlC:
		if p != nil {
			u.reject(p)
			break
		}
		switch {
		case len(u.input) > 0:
			u.input = nil
		case u.busy:
			u.send("/stop")
		default:
			u.hint = "Nothing to stop. Press Ctrl+D or type /exit to quit."
		}
	case keyCtrlD:
		if p == nil && len(u.input) == 0 {
			return true
		}
	case keyEnter:
		line := string(u.input)
		u.input = nil
		if p == nil {
			return u.submit(line)
		}
		u.answer(p, line)
	}
	u.redraw()
	return false
}

// maxHistory bounds the lines ↑ recalls.
const maxHistory = 100

// recall steps through the lines sent before (↑ older, ↓ newer).
func (u *ui) recall(older bool) {
	switch {
	case older && u.histPos > 0:
		u.histPos--
	case !older && u.histPos < len(u.history):
		u.histPos++
	default:
		return
	}
	u.input = nil
	if u.histPos < len(u.history) {
		u.input = []rune(u.history[u.histPos])
	}
}

// submit handles a line typed at the normal prompt.
func (u *ui) submit(line string) bool {
	u.hint = ""
	text := strings.TrimSpace(line)
	if text == "" {
		u.redraw()
		return false
	}
	if !u.closedAt.IsZero() && (u.lineAt.Before(u.closedAt) || time.Since(u.closedAt) < u.c.late) {
		// Meant for the question that just closed: ask before sending.
		u.closedAt = time.Time{}
		u.input = []rune(line)
		u.hint = fmt.Sprintf("The question closed before your answer, so %q was not sent. Enter sends it to the agent as a message; Ctrl+U erases it.", clip(text))
		u.redraw()
		return false
	}
	u.closedAt = time.Time{}
	if n := len(u.history); n == 0 || u.history[n-1] != text {
		u.history = append(u.history, text)
		if len(u.history) > maxHistory {
			u.history = u.history[1:]
		}
	}
	u.histPos = len(u.history)
	u.flushPartial()
	u.s.commit(u.s.paint(sgrBold, idleGlyph) + text)
	switch strings.ToLower(text) {
	case "/exit", "/quit":
		return true
	case "/reject":
		u.s.commit(u.s.paint(sgrYellow, "Nothing to reject: no question is waiting for an answer."))
		u.redraw()
		return false
	}
	u.send(text)
	u.redraw()
	return false
}

// send hands text to the engine.
func (u *ui) send(text string) {
	u.redraw()
	_ = u.s.flush() // show the line before the engine, which may take a while
	route, err := u.h.HandleMessage(u.ctx, connectors.Incoming{ChatID: u.c.chatID, UserID: u.c.userID, UserName: u.c.user, Text: text})
	if err == nil && route == connectors.RouteAgent {
		// Before the output already queued: on a busy machine the whole
		// turn, its Done included, may be there, and Done ends the
		// spinner; set after it, the spinner would never stop.
		u.busy = true
	}
	u.outputs()
	if err != nil && route != connectors.RouteInteraction {
		u.s.commit(u.s.paint(sgrRed, "Not sent: "+err.Error()))
	}
}

// closeInput rejects what is waiting for an answer once the input has
// ended: nobody is left to answer it.
func (u *ui) closeInput() {
	if p := u.active(); p != nil {
		u.s.commit(u.s.paint(sgrYellow, "The input has ended: nobody can answer this."))
		u.reject(p)
	}
}
