package terminal

import (
	"strings"
	"time"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// outputs shows what the engine sent since the last call.
func (u *ui) outputs() {
	for _, e := range u.c.take() {
		u.output(e)
	}
	u.redraw()
}

// output shows one piece of the engine's output: streamed text, a
// message, an interaction's change, or a log line.
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
	case outProgress:
		u.progress = sanitize(e.text)
	case outDone:
		u.progress = ""
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
		p := &prompt{it: e.it, mode: e.it.AnswerMode(), selected: map[string]bool{}}
		if p.mode == interactions.AnswerApproval {
			p.keys = approvalKeys(p.it)
			if p.it.MultiSelect || len(p.keys) < 2 {
				p.mode, p.keys = interactions.AnswerChoice, nil // toggles need the list
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

// stream shows streamed text: whole lines go to the transcript, the rest
// waits in the live region for its newline.
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

// flushPartial commits streamed text still waiting for its newline.
func (u *ui) flushPartial() {
	if u.partial != "" {
		u.s.commit(u.partial)
		u.partial = ""
	}
}

// update applies an interaction's event: selections, approvals and a plan
// review waiting for feedback; one that ended elsewhere leaves the queue,
// saying how it ended if it was shown.
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
		if ev.AwaitingFeedback && p.mode != interactions.AnswerText {
			p.mode, p.text = interactions.AnswerText, forFeedback
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
		if res.Status == interactions.StatusInterrupted && len(ev.Approvals) > 0 {
			// The approvals so far still count after the restart.
			msg += " (" + interactions.QuorumText(p.it, ev.Approvals, nil) + ")"
		}
		// What was typed stays on the line (a new question clears it); sent,
		// it is held as a late answer.
		u.closedAt = time.Now()
		u.s.commit(u.s.paint(sgrYellow, "  ✗ "+sanitize(msg)))
		u.show()
	}
}

// resolutionText says how an interaction was answered.
func resolutionText(it interactions.Interaction, res interactions.Resolution) string {
	switch {
	case res.Answer != "":
		return res.Answer
	case res.Decision != "":
		return connectors.DecisionLabel(res.Decision)
	}
	return string(res.Status)
}
