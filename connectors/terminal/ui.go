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
	mode     interactions.Mode
	keys     []approvalKey // when mode is ModeApproval
	text     purpose       // when mode is ModeText
	pointer  int           // choice: 0..len(options); len(options) is the Reject line
	selected map[string]bool
	hint     string // why the last input was not accepted
	shown    bool   // its context lines are in the transcript
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
}

func newUI(c *Connector, h connectors.Handler, s *screen) *ui {
	return &ui{c: c, h: h, s: s, gone: make(map[string]bool)}
}

// input events from the reader goroutine.
type inEvent struct {
	keys []keyPress
	eof  bool
	err  error
}

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

func (u *ui) active() *prompt {
	if len(u.queue) == 0 {
		return nil
	}
	return u.queue[0]
}

func (u *ui) spinning() bool { return u.busy && u.active() == nil }

// ---- engine output ----

func (u *ui) outputs() {
	for _, e := range u.c.take() {
		u.output(e)
	}
	u.redraw()
}

func (u *ui) output(e outEvent) {
	switch e.kind {
	case outStream:
		if u.dropTurn {
			return
		}
		u.busy, u.streamed = true, true
		u.stream(sanitize(e.text))
	case outSay:
		text := sanitize(e.text)
		if u.dropTurn && strings.HasPrefix(text, "The turn was stopped") {
			u.dropTurn, u.busy = false, false
			return
		}
		if endsTurn(text) {
			u.dropTurn, u.busy = false, false
		}
		u.flushPartial()
		u.s.commit(u.s.paint(sgrCyan, "• ") + text)
	case outDone:
		if u.dropTurn {
			u.dropTurn, u.busy, u.streamed = false, false, false
			return
		}
		u.flushPartial()
		if !u.streamed && strings.TrimSpace(e.summary.Result) != "" {
			u.s.commit(sanitize(e.summary.Result))
		}
		code := sgrDim
		if e.summary.IsError {
			code = sgrRed
		}
		u.s.commit(u.s.paint(code, e.summary.Line()))
		u.busy, u.streamed = false, false
	case outPresent:
		if u.gone[e.it.ID] {
			return
		}
		if u.dropTurn {
			// Asked by the turn that was just rejected: decline it too.
			u.gone[e.it.ID] = true
			_, _ = u.h.Reply(u.ctx, e.it.ID, interactions.Reply{By: u.c.userID, Reject: true})
			return
		}
		p := &prompt{it: e.it, mode: e.it.Mode(), selected: map[string]bool{}}
		if p.mode == interactions.ModeApproval {
			p.keys = approvalKeys(p.it)
			if p.it.MultiSelect || len(p.keys) < 2 {
				p.mode, p.keys = interactions.ModeChoice, nil // toggles need the list
			}
		}
		u.queue = append(u.queue, p)
		if u.eof { // nobody is left to answer
			u.show()
			u.s.commit(u.s.paint(sgrYellow, "The input has ended: nobody can answer this."))
			u.reject(p)
			return
		}
		u.show()
	case outUpdate:
		u.update(e.ev)
	case outLog:
		u.flushPartial()
		u.s.commit(u.s.paint(sgrDim, sanitize(e.text)))
	}
}

// endsTurn recognises the engine's messages that end a turn without a
// summary.
func endsTurn(text string) bool {
	for _, p := range []string{"The turn was stopped", "The agent stopped unexpectedly", "Could not start the agent", "Stopped.", "Cleared.", "Nothing is running."} {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// isStopReply is the engine's answer to the /stop the connector sends after
// a rejection; it is not shown (the screen says "Rejected." instead).
func isStopReply(text string) bool {
	return (strings.HasPrefix(text, "Stopped.") || text == "Nothing is running.") && !strings.Contains(text, "queued")
}

func (u *ui) stream(text string) {
	if !u.s.tty {
		u.s.stream(text)
		return
	}
	text = u.partial + text
	i := strings.LastIndexByte(text, '\n')
	if i < 0 {
		u.partial = text
		return
	}
	u.s.commit(text[:i+1])
	u.partial = text[i+1:]
}

func (u *ui) flushPartial() {
	if u.partial != "" {
		u.s.commit(u.partial)
		u.partial = ""
	}
}

func (u *ui) update(ev interactions.Event) {
	id := ev.Interaction.ID
	idx := -1
	for i, p := range u.queue {
		if p.it.ID == id {
			idx = i
		}
	}
	switch ev.Type {
	case interactions.EventUpdated:
		if idx < 0 {
			return
		}
		p := u.queue[idx]
		if ev.Selected != nil || p.it.MultiSelect {
			p.selected = map[string]bool{}
			for _, l := range ev.Selected {
				p.selected[l] = true
			}
		}
		if len(ev.Approvals) > 0 && !ev.AwaitingFeedback {
			p.hint = interactions.QuorumText(p.it, ev.Approvals, nil)
		}
		if ev.AwaitingFeedback && p.mode != interactions.ModeText {
			p.mode, p.text = interactions.ModeText, forFeedback
			if idx == 0 {
				u.s.commit(u.s.paint(sgrBold, "What should change in the plan?"))
			}
		}
	case interactions.EventResolved:
		u.gone[id] = true
		if idx < 0 {
			return
		}
		p := u.queue[idx]
		u.queue = append(u.queue[:idx], u.queue[idx+1:]...)
		if !p.shown {
			return
		}
		res := ev.Resolution
		var msg string
		switch res.Status {
		case interactions.StatusExpired:
			msg = "Expired"
		case interactions.StatusCancelled:
			msg = "Cancelled"
		case interactions.StatusInterrupted:
			msg = "Interrupted"
		case interactions.StatusAnswered, interactions.StatusRejected:
			msg = "Answered elsewhere: " + resolutionText(p.it, res)
		}
		if res.Text != "" && res.Status != interactions.StatusAnswered && res.Status != interactions.StatusRejected {
			msg += ": " + res.Text
		}
		// What was typed stays on the line (a new question clears it); sent,
		// it is held as a late answer.
		u.closedAt = time.Now()
		u.s.commit(u.s.paint(sgrYellow, "  ✗ "+sanitize(msg)))
		u.show()
	}
}

func resolutionText(it interactions.Interaction, res interactions.Resolution) string {
	switch {
	case res.Answer != "":
		return res.Answer
	case res.Decision != "":
		return connectors.DecisionLabel(res.Decision)
	}
	return string(res.Status)
}

// ---- showing interactions ----

// show prints the active interaction's context once, when it becomes
// active.
func (u *ui) show() {
	p := u.active()
	if p == nil || p.shown {
		return
	}
	u.flushPartial()
	p.shown = true
	u.input = nil
	it := p.it
	var b strings.Builder
	switch it.Kind {
	case interactions.KindPlanReview:
		b.WriteString(u.s.paint(sgrBold, "The agent's plan:") + "\n")
		b.WriteString(indent(sanitize(strings.TrimRight(it.Plan, "\n")), "  ") + "\n")
		b.WriteString(u.s.paint(sgrBold, "Approve this plan?"))
	case interactions.KindToolApproval:
		b.WriteString(u.s.paint(sgrBold, "The agent wants to run "+sanitize(it.ToolName)+":") + "\n")
		for _, n := range connectors.ToolNotes(it) {
			for _, l := range strings.Split(sanitize(n), "\n") {
				b.WriteString("  " + u.s.paint(sgrYellow, l) + "\n")
			}
		}
		s := strings.TrimSpace(it.ToolSummary)
		if it.RequiresDetails && len(it.ToolInput) > 0 {
			s = connectors.ToolDetails(it) // the whole request, not the summary
		}
		if s != "" {
			b.WriteString(indent(sanitize(s), "  ") + "\n")
		}
		b.WriteString(u.s.paint(sgrBold, "Allow it?"))
	default:
		head := sanitize(it.Header)
		if it.Total > 1 {
			if head != "" {
				head += " · "
			}
			head += fmt.Sprintf("question %d of %d", it.Index, it.Total)
		}
		if head != "" {
			b.WriteString(u.s.paint(sgrDim, head) + "\n")
		}
		b.WriteString(u.s.paint(sgrBold, sanitize(it.Question)))
	}
	if p.mode == interactions.ModeText {
		b.WriteString("\n" + u.s.paint(sgrDim, "Type your answer and press Enter; r or /reject rejects."))
	}
	u.s.commit(b.String())
}

func indent(s, pre string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "" {
			lines[i] = pre + l
		}
	}
	return strings.Join(lines, "\n")
}

// redraw draws the live region: the active interaction's options and
// prompt, or the spinner and the input line.
func (u *ui) redraw() {
	u.s.draw(u.liveLines())
}

func (u *ui) liveLines() []string {
	in := string(u.input)
	if !u.s.tty {
		in = "" // not echoed: the person's terminal did, or nobody watches
	}
	p := u.active()
	if p == nil {
		var lines []string
		if u.partial != "" {
			l := strings.ReplaceAll(u.partial, "\t", "    ")
			if u.busy && u.s.tty {
				l += " " + u.s.paint(sgrCyan, u.spinner())
			}
			lines = append(lines, l)
		} else if u.busy && u.s.tty {
			lines = append(lines, u.s.paint(sgrCyan, u.spinner())+u.s.paint(sgrDim, " Working… (Ctrl+C stops)"))
		}
		if u.hint != "" {
			lines = append(lines, u.s.paint(sgrYellow, u.hint))
		}
		if !u.busy || len(u.input) > 0 || !u.s.tty {
			lines = append(lines, u.s.paint(sgrBold, idleGlyph)+in)
		}
		return lines
	}
	w := u.s.cols() - 1
	var lines []string
	switch p.mode {
	case interactions.ModeApproval:
		var opts, letters []string
		for _, k := range p.keys {
			code := sgrGreen
			switch {
			case k.reject, k.letter == "r" && p.it.Kind != interactions.KindToolApproval:
				code = sgrRed // rejects, or the second option of a yes/no
			case p.it.Kind == interactions.KindToolApproval && k.index >= 0 && p.it.Options[k.index].Label == interactions.DecisionDeny:
				code = sgrYellow // denies, and asks for the reason
			}
			name := k.letter
			if k.number != "" {
				name += "/" + k.number
			}
			opts = append(opts, u.s.paint(code, name+" "+sanitize(k.text)))
			letters = append(letters, k.letter)
		}
		lines = append(lines, "  "+strings.Join(opts, "   "))
		if p.hint != "" {
			lines = append(lines, u.s.paint(sgrYellow, p.hint))
		}
		lines = append(lines, u.s.paint(sgrBold, "["+strings.Join(letters, "/")+"] ")+in)
	case interactions.ModeChoice:
		n := len(p.it.Options)
		for i, o := range p.it.Options {
			mark := "  "
			if i == p.pointer {
				mark = u.s.paint(sgrCyan+";"+sgrBold, "❯ ")
			}
			box := ""
			if p.it.MultiSelect {
				box = "[ ] "
				if p.selected[o.Label] {
					box = u.s.paint(sgrGreen, "[x]") + " "
				}
			}
			label := sanitize(connectors.OptionText(p.it, o.Label))
			plain := fmt.Sprintf("%d) %s%s", i+1, stripANSI(box), label)
			desc := ""
			if d := sanitize(strings.ReplaceAll(o.Description, "\n", " ")); d != "" {
				room := w - 2 - len([]rune(plain)) - 3
				if room > 8 {
					desc = u.s.paint(sgrDim, " — "+connectors.Truncate(d, room))
				}
			}
			if len([]rune(plain))+2 > w {
				label = connectors.Truncate(label, max(1, w-2-len([]rune(plain))+len([]rune(label))))
			}
			lines = append(lines, mark+u.s.paint(sgrCyan, fmt.Sprintf("%d)", i+1))+" "+box+label+desc)
		}
		mark := "  "
		if p.pointer == n {
			mark = u.s.paint(sgrCyan+";"+sgrBold, "❯ ")
		}
		lines = append(lines, mark+u.s.paint(sgrRed, "r)")+" Reject")
		if p.hint != "" {
			lines = append(lines, u.s.paint(sgrYellow, p.hint))
		}
		var ask string
		free := p.it.Kind == interactions.KindQuestion
		switch {
		case p.it.MultiSelect && free:
			ask = fmt.Sprintf("Space toggles, Enter confirms (%s toggles, r rejects) or type your answer: ", nums(n))
		case p.it.MultiSelect:
			ask = fmt.Sprintf("Space toggles, Enter confirms (%s toggles, r rejects): ", nums(n))
		case free:
			ask = fmt.Sprintf("Choose %s (↑/↓ Enter, r rejects) or type your answer: ", nums(n))
		default:
			ask = fmt.Sprintf("Choose %s (↑/↓ Enter, r rejects): ", nums(n))
		}
		lines = append(lines, u.s.paint(sgrBold, ask)+in)
	default:
		if p.hint != "" {
			lines = append(lines, u.s.paint(sgrYellow, p.hint))
		}
		lines = append(lines, u.s.paint(sgrMagenta+";"+sgrBold, textGlyph)+in)
	}
	return lines
}

func nums(n int) string {
	if n == 1 {
		return "1"
	}
	return fmt.Sprintf("1-%d", n)
}

func (u *ui) spinner() string {
	frames := []rune(spinFrames)
	return string(frames[u.frame%len(frames)])
}

// ---- keys ----

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
		if u.raw && p != nil && p.mode == interactions.ModeChoice && p.it.MultiSelect && k.Rune == ' ' && len(u.input) == 0 {
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
		if p.mode == interactions.ModeChoice {
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
	u.outputs()
	if err != nil && route != connectors.RouteInteraction {
		u.s.commit(u.s.paint(sgrRed, "Not sent: "+err.Error()))
		return
	}
	if route == connectors.RouteAgent {
		u.busy = true
	}
}

// answer handles Enter at an interaction prompt.
func (u *ui) answer(p *prompt, line string) {
	var a act
	switch p.mode {
	case interactions.ModeApproval:
		a = parseApproval(line, p.keys)
	case interactions.ModeChoice:
		a = parseChoice(line, len(p.it.Options), p.pointer, p.it.MultiSelect, p.it.Kind == interactions.KindQuestion)
	default:
		a = parseText(line)
	}
	p.hint = ""
	switch a.kind {
	case actInvalid:
		p.hint = a.hint
	case actReject:
		u.reject(p)
	case actCommand:
		u.s.commit(u.s.paint(sgrBold, idleGlyph) + a.text)
		u.send(a.text)
	case actToggle:
		for _, i := range a.indexes {
			if !u.toggle(p, i) {
				break
			}
		}
	case actConfirm:
		if err := u.h.Confirm(u.ctx, p.it.ID, interactions.Reply{By: u.c.userID}); err != nil {
			u.failed(p, err)
			return
		}
		var sel []string
		for _, o := range p.it.Options {
			if p.selected[o.Label] {
				sel = append(sel, o.Label)
			}
		}
		u.resolved(p, strings.Join(sel, ", "))
	case actSelect:
		label := p.it.Options[a.index].Label
		switch {
		case p.it.Kind == interactions.KindPlanReview && label == interactions.DecisionAdjust:
			p.mode, p.text = interactions.ModeText, forFeedback
			u.s.commit(u.s.paint(sgrGreen, "  → "+connectors.DecisionLabel(label)) + "\n" + u.s.paint(sgrBold, "What should change in the plan?") + "\n" + u.s.paint(sgrDim, "Type your feedback and press Enter; r or /reject rejects."))
			return
		case p.it.Kind == interactions.KindToolApproval && label == interactions.DecisionDeny:
			p.mode, p.text = interactions.ModeText, forDenyReason
			u.s.commit(u.s.paint(sgrGreen, "  → "+connectors.DecisionLabel(label)) + "\n" + u.s.paint(sgrBold, "Why deny it? The agent reads your reason.") + "\n" + u.s.paint(sgrDim, "Type the reason and press Enter; r or /reject rejects."))
			return
		}
		u.reply(p, interactions.Reply{Answers: []string{label}}, connectors.OptionText(p.it, label))
	case actText:
		r := interactions.Reply{Text: a.text}
		switch p.text {
		case forFeedback:
			r.Answers = []string{interactions.DecisionAdjust}
		case forDenyReason:
			r.Answers = []string{interactions.DecisionDeny}
		}
		u.reply(p, r, a.text)
	}
}

func (u *ui) reply(p *prompt, r interactions.Reply, shown string) {
	r.By = u.c.userID
	out, err := u.h.Reply(u.ctx, p.it.ID, r)
	if err != nil {
		u.failed(p, err)
		return
	}
	if out == interactions.AwaitingFeedback {
		p.mode, p.text = interactions.ModeText, forFeedback
		return
	}
	if out == interactions.Counted {
		// The terminal is one approver: it waits for the others.
		p.hint = "Your approval is counted; waiting for more approvers."
		return
	}
	u.resolved(p, shown)
}

// toggle flips option i of a multi-select; it reports whether it could.
func (u *ui) toggle(p *prompt, i int) bool {
	if i < 0 || i >= len(p.it.Options) {
		return false
	}
	sel, err := u.h.Toggle(u.ctx, p.it.ID, p.it.Options[i].Label, interactions.Reply{By: u.c.userID})
	if err != nil {
		u.failed(p, err)
		return false
	}
	p.selected = map[string]bool{}
	for _, l := range sel {
		p.selected[l] = true
	}
	p.pointer = i
	return true
}

// failed shows why an answer was refused; a stale interaction is dropped.
func (u *ui) failed(p *prompt, err error) {
	if interactions.IsStale(err) {
		u.drop(p)
		u.s.commit(u.s.paint(sgrYellow, "  ✗ This request is no longer waiting for an answer."))
		u.show()
		return
	}
	p.hint = "Not accepted: " + err.Error()
}

// resolved records the answer in the transcript and moves to the next
// interaction.
func (u *ui) resolved(p *prompt, shown string) {
	u.drop(p)
	u.s.commit(u.s.paint(sgrGreen, "  → "+sanitize(shown)))
	u.show()
}

func (u *ui) drop(p *prompt) {
	u.gone[p.it.ID] = true
	for i, q := range u.queue {
		if q == p {
			u.queue = append(u.queue[:i], u.queue[i+1:]...)
			break
		}
	}
}

// reject declines p, stops the running turn and drops what the agent says
// after that; what it said before stays on the screen.
func (u *ui) reject(p *prompt) {
	u.dropTurn = true
	if _, err := u.h.Reply(u.ctx, p.it.ID, interactions.Reply{By: u.c.userID, Reject: true}); err != nil && !interactions.IsStale(err) {
		p.hint = "Not accepted: " + err.Error()
		u.dropTurn = false
		return
	}
	for _, q := range u.queue {
		u.gone[q.it.ID] = true
	}
	u.queue = nil
	u.input = nil
	u.flushPartial()
	u.c.swallow.Store(true)
	_, _ = u.h.HandleMessage(u.ctx, connectors.Incoming{ChatID: u.c.chatID, UserID: u.c.userID, UserName: u.c.user, Text: "/stop"})
	u.c.swallow.Store(false)
	u.s.commit(u.s.paint(sgrRed, rejectedLine))
	u.busy = false
}

// closeInput rejects what is waiting for an answer once the input has
// ended: nobody is left to answer it.
func (u *ui) closeInput() {
	if p := u.active(); p != nil {
		u.s.commit(u.s.paint(sgrYellow, "The input has ended: nobody can answer this."))
		u.reject(p)
	}
}
