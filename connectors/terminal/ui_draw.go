package terminal

import (
	"fmt"
	"strings"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

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
		b.WriteString(u.s.paint(sgrBold, sanitize(connectors.ToolAction(it.ToolName))+":") + "\n")
		for _, n := range connectors.ToolNotes(it) {
			for _, l := range strings.Split(sanitize(n), "\n") {
				b.WriteString("  " + u.s.paint(sgrYellow, l) + "\n")
			}
		}
		// The whole request, however long: a person sees all they allow.
		if it.Diff != "" && !it.RequiresDetails {
			b.WriteString(u.diffText(it.Diff))
		} else if s := strings.TrimSpace(connectors.ToolCode(it)); s != "" {
			b.WriteString(indent(sanitize(s), "  ") + "\n")
		}
		b.WriteString(u.s.paint(sgrBold, "Allow it?"))
	default:
		if it.Styled() {
			b.WriteString(u.approvalText(it))
			break
		}
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
	if p.mode == interactions.AnswerText {
		b.WriteString("\n" + u.s.paint(sgrDim, "Type your answer and press Enter; r or /reject rejects."))
	}
	u.s.commit(b.String())
}

// approvalText is an approval (a question whose options approve, deny or
// destroy): its header, the action in bold and the details beneath.
func (u *ui) approvalText(it interactions.Interaction) string {
	head := sanitize(it.Header)
	if head == "" {
		head = "Approval"
	}
	action, details := interactions.ActionAndDetails(it.Question)
	s := u.s.paint(sgrDim, head) + "\n" + u.s.paint(sgrBold, sanitize(action))
	if details != "" {
		s += "\n" + indent(sanitize(details), "  ")
	}
	return s
}

// styleColour is the colour of a styled option: green approves, red
// denies or cannot be undone; "" for a plain one.
func styleColour(s interactions.Style) string {
	switch s {
	case interactions.StyleApprove:
		return sgrGreen
	case interactions.StyleDeny, interactions.StyleDestructive:
		return sgrRed
	}
	return ""
}

// indent prefixes pre to every line of s that is not blank.
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

// liveLines are the lines of the live region: the active interaction's,
// or the idle prompt's.
func (u *ui) liveLines() []string {
	in := string(u.input)
	if !u.s.tty {
		in = "" // not echoed: the person's terminal did, or nobody watches
	}
	p := u.active()
	if p == nil {
		return u.idleLines(in)
	}
	var lines []string
	switch p.mode {
	case interactions.AnswerApproval:
		lines = u.approvalLines(p, in)
	case interactions.AnswerChoice:
		lines = u.choiceLines(p, in)
	default:
		if p.hint != "" {
			lines = append(lines, u.s.paint(sgrYellow, p.hint))
		}
		lines = append(lines, u.s.paint(sgrMagenta+";"+sgrBold, textGlyph)+in)
	}
	return lines
}

// idleLines are the live region with no interaction active: streamed text
// not yet ended by a newline, the spinner while a turn runs, a hint, and
// the prompt with what is typed (in).
func (u *ui) idleLines(in string) []string {
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
	if u.progress != "" && u.busy {
		lines = append(lines, u.s.paint(sgrDim, u.progress))
	}
	if u.hint != "" {
		lines = append(lines, u.s.paint(sgrYellow, u.hint))
	}
	if !u.busy || len(u.input) > 0 || !u.s.tty {
		lines = append(lines, u.s.paint(sgrBold, idleGlyph)+in)
	}
	return lines
}

// approvalLines are an approval's keys on one line, coloured by what they
// do, then its hint and the [a/r/...] prompt.
func (u *ui) approvalLines(p *prompt, in string) []string {
	var opts, letters []string
	for _, k := range p.keys {
		code := sgrGreen
		switch {
		case p.it.Kind == interactions.KindQuestion && p.it.Styled() && k.index >= 0:
			code = styleColour(p.it.Options[k.index].Style)
		case k.reject, k.letter == "r" && p.it.Kind != interactions.KindToolApproval:
			code = sgrRed // rejects, or the second option of a yes/no
		case p.it.Kind == interactions.KindToolApproval && k.index >= 0 && p.it.Options[k.index].Label == interactions.DecisionDeny:
			code = sgrYellow // denies, and asks for the reason
		}
		name := k.letter
		if k.number != "" {
			name += "/" + k.number
		}
		opt := name + " " + sanitize(k.text)
		if code != "" {
			opt = u.s.paint(code, opt)
		}
		opts = append(opts, opt)
		letters = append(letters, k.letter)
	}
	lines := []string{"  " + strings.Join(opts, "   ")}
	if p.hint != "" {
		lines = append(lines, u.s.paint(sgrYellow, p.hint))
	}
	return append(lines, u.s.paint(sgrBold, "["+strings.Join(letters, "/")+"] ")+in)
}

// choiceLines are a choice's numbered options and Reject line, the pointer
// on one of them, then its hint and the prompt saying what keys do.
func (u *ui) choiceLines(p *prompt, in string) []string {
	w := u.s.cols() - 1
	n := len(p.it.Options)
	var lines []string
	for i := range p.it.Options {
		lines = append(lines, u.optionLine(p, i, w))
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
	return append(lines, u.s.paint(sgrBold, ask)+in)
}

// optionLine is option i of a choice: the pointer if it is on it, its
// number, a check box in a multi-select, its label and as much of its
// description as fits in w columns.
func (u *ui) optionLine(p *prompt, i, w int) string {
	o := p.it.Options[i]
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
	colour := styleColour(o.Style)
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
	if colour != "" {
		label = u.s.paint(colour, label)
	}
	return mark + u.s.paint(sgrCyan, fmt.Sprintf("%d)", i+1)) + " " + box + label + desc
}

// nums is the range of option numbers: "1" or "1-n".
func nums(n int) string {
	if n == 1 {
		return "1"
	}
	return fmt.Sprintf("1-%d", n)
}

// spinner is the spinner's current frame.
func (u *ui) spinner() string {
	frames := []rune(spinFrames)
	return string(frames[u.frame%len(frames)])
}
