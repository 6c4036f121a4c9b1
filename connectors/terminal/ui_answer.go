package terminal

import (
	"strings"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// answer handles Enter at an interaction prompt.
func (u *ui) answer(p *prompt, line string) {
	var a act
	switch p.mode {
	case interactions.AnswerApproval:
		a = parseApproval(line, p.keys)
	case interactions.AnswerChoice:
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
			p.mode, p.text = interactions.AnswerText, forFeedback
			u.s.commit(u.s.paint(sgrGreen, "  → "+connectors.DecisionLabel(label)) + "\n" + u.s.paint(sgrBold, "What should change in the plan?") + "\n" + u.s.paint(sgrDim, "Type your feedback and press Enter; r or /reject rejects."))
			return
		case p.it.Kind == interactions.KindToolApproval && label == interactions.DecisionDeny:
			p.mode, p.text = interactions.AnswerText, forDenyReason
			u.s.commit(u.s.paint(sgrGreen, "  → "+connectors.DecisionLabel(label)) + "\n" + u.s.paint(sgrBold, "Why deny it? The agent reads your reason.") + "\n" + u.s.paint(sgrDim, "Type the reason and press Enter; r or /reject rejects."))
			return
		}
		p.denying = p.it.StyleOf(label) == interactions.StyleDeny
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

// reply sends r as the answer to p; shown is what the transcript says
// was answered.
func (u *ui) reply(p *prompt, r interactions.Reply, shown string) {
	r.By = u.c.userID
	out, err := u.h.Reply(u.ctx, p.it.ID, r)
	if err != nil {
		u.failed(p, err)
		return
	}
	if out == interactions.AwaitingFeedback {
		p.mode, p.text = interactions.AnswerText, forFeedback
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
	if p.denying { // a refusal reads as one, in red
		u.s.commit(u.s.paint(sgrRed, "  → Denied ("+sanitize(shown)+")"))
		u.show()
		return
	}
	u.s.commit(u.s.paint(sgrGreen, "  → "+sanitize(shown)))
	u.show()
}

// drop takes p out of the queue and remembers it is gone.
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
