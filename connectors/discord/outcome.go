package discord

import (
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// decisionMsg is a plan review's or tool approval's buttons message; note
// is an extra line (the adjust prompt, a quorum count, an interruption).
func decisionMsg(it interactions.Interaction, pl place, note string) outMsg {
	kind := byte('p')
	opts := interactions.PlanOptions
	hint := replyHint(pl) + " to tell the agent what should change instead."
	if it.Kind == interactions.KindToolApproval {
		kind, opts = 't', interactions.ToolOptions
		hint = replyHint(pl) + " to deny with a reason."
	}
	if pl.approversOnly {
		hint += " Only approvers can decide."
	}
	var lines []string
	lines = append(lines, decisionTitle(it))
	if it.Kind == interactions.KindPlanReview {
		lines = append(lines, planMeanings())
	}
	var bs []discordgo.Button
	if it.OwnOptions() { // the agent's own options, keyed by place
		if l := optionLines(it, false); l != "" {
			lines = append(lines, l)
		}
		for i, o := range it.Options {
			bs = append(bs, button(buttonKey{ID: it.ID, Kind: 'q', Index: i}, o.Label, buttonStyle(it, o.Style)))
		}
	} else {
		shown := it.Options // this request's options, in its order
		if len(shown) == 0 {
			shown = opts
		}
		for _, o := range shown {
			i := connectors.DecisionIndex(it.Kind, o.Label) // keys name the decision, not its place
			if i < 0 {
				continue
			}
			bs = append(bs, button(buttonKey{ID: it.ID, Kind: kind, Index: i}, connectors.DecisionLabel(o.Label), decisionStyle(it, o.Label)))
		}
	}
	if note != "" {
		lines = append(lines, note)
	}
	lines = append(lines, "-# "+hint)
	return outMsg{content: truncate(strings.Join(lines, "\n"), maxContent), components: rows(bs)}
}

func decisionStyle(it interactions.Interaction, label string) discordgo.ButtonStyle {
	switch label {
	case interactions.DecisionCleanEdit, interactions.DecisionEdit, interactions.DecisionAllow:
		if !it.DefaultToNo {
			return discordgo.SuccessButton
		}
	case interactions.DecisionDeny:
		return discordgo.DangerButton
	}
	return discordgo.SecondaryButton
}

// who is a person as Discord shows them: a mention of a user ID, shown
// as their name (it pings nobody: see noMentions).
func who(by string) string {
	switch {
	case validSnowflake(by):
		return "<@" + by + ">"
	case by == "":
		return "someone"
	}
	return plain(by, 100)
}

// renderUpdate is what an interaction's buttons message becomes after an
// event.
func renderUpdate(ev interactions.Event, pl place) outMsg {
	it := ev.Interaction
	if ev.Type == interactions.EventUpdated {
		switch {
		case ev.AwaitingFeedback:
			return decisionMsg(it, pl, "✏️ **Adjust** chosen: "+strings.ToLower(replyHint(pl)[:1])+replyHint(pl)[1:]+" with what should change.")
		case it.Kind == interactions.KindQuestion:
			_, m := questionMsgs(it, pl, ev.Selected)
			return m
		case len(ev.Approvals) > 0: // counted towards a quorum: the buttons stay
			return decisionMsg(it, pl, "⏳ **"+interactions.QuorumText(it, ev.Approvals, who)+"**")
		}
	}
	res := ev.Resolution
	if res.Status == interactions.StatusInterrupted { // the buttons still work
		note := "⚠️ " + res.Text
		if len(ev.Approvals) > 0 { // they still count after the restart
			note += "\n⏳ **" + interactions.QuorumText(it, ev.Approvals, who) + "**"
		}
		if it.Kind == interactions.KindQuestion {
			_, m := questionMsgs(it, pl, ev.Selected)
			m.content = truncate(note+"\n"+m.content, maxContent)
			return m
		}
		return decisionMsg(it, pl, note)
	}
	var title string
	switch it.Kind {
	case interactions.KindQuestion:
		title = questionHead(it) + "\n" + truncate(questionBody(it), 1000)
	case interactions.KindPlanReview:
		title = "**Plan review**"
	default:
		title = truncate(decisionTitle(it), 1200)
	}
	return outMsg{content: truncate(title+"\n"+outcomeLine(it, res), maxContent), components: []discordgo.MessageComponent{}}
}

// outcomeLine says how it ended and who decided.
func outcomeLine(it interactions.Interaction, res interactions.Resolution) string {
	by := " — " + who(res.By)
	if len(res.Approvals) > 0 && res.Status == interactions.StatusAnswered {
		names := make([]string, len(res.Approvals))
		for i, a := range res.Approvals {
			names[i] = who(a.By)
		}
		by = " — approved by " + strings.Join(names, ", ")
	}
	reason := ""
	if t := strings.TrimSpace(res.Text); t != "" {
		reason = ": " + truncate(t, 500)
	}
	if interactions.Refusal(it, res) && (it.Styled() && it.Kind == interactions.KindQuestion || it.OwnOptions()) {
		s := "🚫 **Denied**"
		if it.OwnOptions() && res.Answer != "" {
			s += " (" + plain(res.Answer, 200) + ")"
		}
		if r := strings.TrimSpace(connectors.RefusalReason(it, res)); r != "" {
			return s + by + ": " + truncate(r, 500)
		}
		return s + by
	}
	switch res.Status {
	case interactions.StatusAnswered:
		switch {
		case it.Kind == interactions.KindQuestion:
			return "✅ **Answer:** " + truncate(res.Answer, 600) + by
		case it.OwnOptions():
			return "✅ **Allowed:** " + plain(res.Answer, 200) + by
		}
		return "✅ **" + connectors.DecisionLabel(res.Decision) + "**" + by
	case interactions.StatusRejected:
		label := connectors.DecisionLabel(res.Decision)
		if res.Decision == interactions.DecisionReject || res.Decision == "" {
			label = "Rejected"
		}
		return "❌ **" + label + "**" + by + reason
	case interactions.StatusExpired:
		return "⌛ **Expired**" + reason
	case interactions.StatusCancelled:
		if n := connectors.WithdrawnNote(res); n != "" {
			return n
		}
		return "🚫 **Cancelled**" + reason
	}
	return "**" + string(res.Status) + "**" + reason
}
