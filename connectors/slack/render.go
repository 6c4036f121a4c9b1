package slack

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/slack-go/slack"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// outMsg is one message to post or edit: fallback text (notifications)
// and blocks.
type outMsg struct {
	text   string
	blocks []slack.Block
}

func section(id, mrkdwn string) slack.Block {
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, connectors.Truncate(mrkdwn, MaxSection), false, false), nil, nil, slack.SectionBlockOptionBlockID(id))
}

func contextBlock(id, mrkdwn string) slack.Block {
	return slack.NewContextBlock(id, slack.NewTextBlockObject(slack.MarkdownType, connectors.Truncate(mrkdwn, MaxSection), false, false))
}

func button(k buttonKey, text, style string) *slack.ButtonBlockElement {
	if strings.TrimSpace(text) == "" {
		text = "(no label)" // Slack refuses empty button text
	}
	b := slack.NewButtonBlockElement(k.actionID(), k.String(), slack.NewTextBlockObject(slack.PlainTextType, connectors.Truncate(text, MaxButton), true, false))
	if style != "" {
		b.Style = slack.Style(style)
	}
	return b
}

// actionBlocks puts buttons into actions blocks of at most 25 elements,
// each with its own block_id.
func actionBlocks(id string, buttons []*slack.ButtonBlockElement) []slack.Block {
	var out []slack.Block
	for i := 0; i < len(buttons); i += 25 {
		end := min(i+25, len(buttons))
		els := make([]slack.BlockElement, 0, end-i)
		for _, b := range buttons[i:end] {
			els = append(els, b)
		}
		out = append(out, slack.NewActionBlock(id+":a"+strconv.Itoa(i/25), els...))
	}
	return out
}

// place is where an interaction is shown: in a channel thread or a DM,
// and whether the decision buttons are for approvers other than the
// people who may prompt (then the message says only approvers decide).
type place struct {
	thread        bool
	approversOnly bool
}

func replyHint(pl place) string {
	if pl.thread {
		return "Reply in this thread"
	}
	return "Reply here"
}

// render is how an interaction is first shown (selected: a multi-select's
// current choice). A plan review is the plan in as many messages as it
// needs, then a message with the decisions.
func render(it interactions.Interaction, pl place, selected []string) []outMsg {
	switch it.Kind {
	case interactions.KindPlanReview:
		return append(planMessages(it), decisionMsg(it, pl, ""))
	case interactions.KindToolApproval:
		return []outMsg{decisionMsg(it, pl, "")}
	default:
		return []outMsg{questionMsg(it, pl, selected)}
	}
}

func questionTitle(it interactions.Interaction) string {
	var b strings.Builder
	if it.Header != "" {
		b.WriteString("*" + strings.ReplaceAll(escape(it.Header), "*", "") + "*")
	} else {
		b.WriteString("*Question*")
	}
	if it.Total > 1 {
		fmt.Fprintf(&b, " · %d of %d", it.Index, it.Total)
	}
	b.WriteString("\n" + Mrkdwn(it.Question))
	return b.String()
}

func questionMsg(it interactions.Interaction, pl place, selected []string) outMsg {
	blocks := []slack.Block{section(it.ID+":q", questionTitle(it))}
	var details []string
	for _, o := range it.Options {
		if o.Description != "" || len([]rune(o.Label)) > MaxButton-2 {
			line := "*" + strings.ReplaceAll(escape(o.Label), "*", "") + "*"
			if o.Description != "" {
				line += " — " + escape(o.Description)
			}
			details = append(details, line)
		}
	}
	if len(details) > 0 {
		blocks = append(blocks, contextBlock(it.ID+":d", strings.Join(details, "\n")))
	}
	on := make(map[string]bool, len(selected))
	for _, s := range selected {
		on[s] = true
	}
	var buttons []*slack.ButtonBlockElement
	for i, o := range it.Options {
		text, style := o.Label, ""
		if it.MultiSelect {
			if on[o.Label] {
				text, style = "✓ "+o.Label, "primary"
			} else {
				text = "☐ " + o.Label
			}
		}
		buttons = append(buttons, button(buttonKey{id: it.ID, kind: 'q', index: i}, text, style))
	}
	hint := replyHint(pl) + " to answer in your own words."
	if it.MultiSelect {
		buttons = append(buttons, button(buttonKey{id: it.ID, done: true}, "Done", "primary"))
		hint = "Tap the options that apply, then Done. " + hint
	}
	blocks = append(blocks, actionBlocks(it.ID, buttons)...)
	blocks = append(blocks, contextBlock(it.ID+":h", hint))
	return outMsg{text: "Question: " + connectors.Truncate(it.Question, 200), blocks: blocks}
}

// planMessages are the plan as mrkdwn sections, at most MaxBlocks to a
// message.
func planMessages(it interactions.Interaction) []outMsg {
	var parts []string
	for _, p := range splitMarkdown(it.Plan, MaxSection) {
		if strings.TrimSpace(p) != "" { // Slack refuses empty sections
			parts = append(parts, p)
		}
	}
	var msgs []outMsg
	for i := 0; i < len(parts); i += MaxBlocks {
		end := min(i+MaxBlocks, len(parts))
		var blocks []slack.Block
		for j := i; j < end; j++ {
			blocks = append(blocks, section(it.ID+":plan"+strconv.Itoa(j), Mrkdwn(parts[j])))
		}
		msgs = append(msgs, outMsg{text: "Plan for review", blocks: blocks})
	}
	if len(msgs) > 1 {
		for i := range msgs {
			msgs[i].text = fmt.Sprintf("Plan for review (%d/%d)", i+1, len(msgs))
		}
	}
	return msgs
}

func decisionTitle(it interactions.Interaction) string {
	if it.Kind == interactions.KindPlanReview {
		return "*Plan review:* how should the agent go on?"
	}
	summary := it.ToolSummary
	if strings.TrimSpace(summary) == "" {
		summary = string(it.ToolInput)
	}
	summary = connectors.Truncate(summary, MaxSection-200)
	return "*Tool approval:* the agent wants to use `" + escape(it.ToolName) + "`\n```" + escape(summary) + "```"
}

// decisionMsg is a plan review's or tool approval's buttons message; note
// is an extra line (the adjust prompt, an interruption).
func decisionMsg(it interactions.Interaction, pl place, note string) outMsg {
	blocks := []slack.Block{section(it.ID+":q", decisionTitle(it))}
	if note != "" {
		blocks = append(blocks, section(it.ID+":n", note))
	}
	kind := byte('p')
	opts := interactions.PlanOptions
	hint := replyHint(pl) + " to tell the agent what should change instead."
	text := "Plan review"
	if it.Kind == interactions.KindToolApproval {
		kind, opts = 't', interactions.ToolOptions
		hint = replyHint(pl) + " to deny with a reason."
		text = "Tool approval: " + it.ToolName
	}
	var buttons []*slack.ButtonBlockElement
	for i, o := range opts {
		style := ""
		switch o.Label {
		case interactions.DecisionCleanEdit, interactions.DecisionEdit, interactions.DecisionAllow:
			style = "primary"
		case interactions.DecisionDeny:
			style = "danger"
		}
		buttons = append(buttons, button(buttonKey{id: it.ID, kind: kind, index: i}, connectors.DecisionLabel(o.Label), style))
	}
	blocks = append(blocks, actionBlocks(it.ID, buttons)...)
	if pl.approversOnly {
		hint += " Only approvers can decide."
	}
	blocks = append(blocks, contextBlock(it.ID+":h", hint))
	return outMsg{text: text, blocks: blocks}
}

// who is a person as Slack shows them: a mention for a user ID.
func who(by string) string {
	if by != "" && validChannel(by) { // user IDs have the same shape
		return "<@" + by + ">"
	}
	if by == "" {
		return "someone"
	}
	return escape(by)
}

// renderUpdate is what an interaction's (buttons) message becomes after an
// event.
func renderUpdate(ev interactions.Event, pl place) outMsg {
	it := ev.Interaction
	if ev.Type == interactions.EventUpdated {
		if ev.AwaitingFeedback {
			return decisionMsg(it, pl, "✏️ *Adjust* chosen: "+strings.ToLower(replyHint(pl)[:1])+replyHint(pl)[1:]+" with what should change.")
		}
		if it.Kind == interactions.KindQuestion {
			return questionMsg(it, pl, ev.Selected)
		}
	}
	res := ev.Resolution
	if res.Status == interactions.StatusInterrupted { // the buttons still work
		note := "⚠️ " + escape(res.Text)
		if it.Kind == interactions.KindQuestion {
			m := questionMsg(it, pl, nil)
			m.blocks = append(m.blocks[:1], append([]slack.Block{section(it.ID+":n", note)}, m.blocks[1:]...)...)
			return m
		}
		return decisionMsg(it, pl, note)
	}
	title := decisionTitle(it)
	switch it.Kind {
	case interactions.KindQuestion:
		title = questionTitle(it)
	case interactions.KindPlanReview:
		title = "*Plan review*"
	}
	outcome := outcomeLine(it, res)
	return outMsg{text: connectors.Truncate(outcome, 200), blocks: []slack.Block{section(it.ID+":q", title), section(it.ID+":r", outcome)}}
}

func outcomeLine(it interactions.Interaction, res interactions.Resolution) string {
	by := " — " + who(res.By)
	reason := ""
	if t := strings.TrimSpace(res.Text); t != "" {
		reason = ": " + escape(connectors.Truncate(t, 1500))
	}
	switch res.Status {
	case interactions.StatusAnswered:
		if it.Kind == interactions.KindQuestion {
			return "✅ *Answer:* " + escape(res.Answer) + by
		}
		return "✅ *" + connectors.DecisionLabel(res.Decision) + "*" + by
	case interactions.StatusRejected:
		label := connectors.DecisionLabel(res.Decision)
		if res.Decision == interactions.DecisionReject || res.Decision == "" {
			label = "Rejected"
		}
		return "❌ *" + label + "*" + by + reason
	case interactions.StatusExpired:
		return "⌛ *Expired*" + reason
	case interactions.StatusCancelled:
		return "🚫 *Cancelled*" + reason
	}
	return "*" + escape(string(res.Status)) + "*" + reason
}
