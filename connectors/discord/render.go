package discord

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// outMsg is one message to post or edit: content and components.
type outMsg struct {
	content    string
	components []discordgo.MessageComponent
}

// place is where an interaction is shown: a server thread or a DM, and
// whether only approvers (not everyone who may prompt) decide.
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

// render is how an interaction is first shown: the messages before its
// buttons (a long question, plan or command) and the buttons message.
func render(it interactions.Interaction, pl place, selected []string) []outMsg {
	var lead []string
	var last outMsg
	switch it.Kind {
	case interactions.KindPlanReview:
		lead = planParts(it)
		last = decisionMsg(it, pl, "")
	case interactions.KindToolApproval:
		lead = codeParts(it)
		last = decisionMsg(it, pl, "")
	default:
		lead, last = questionMsgs(it, pl, selected)
	}
	out := make([]outMsg, 0, len(lead)+1)
	for _, t := range lead {
		out = append(out, outMsg{content: t})
	}
	return append(out, last)
}

// questionHead is a question's header line.
func questionHead(it interactions.Interaction) string {
	if it.Styled() {
		h := it.Header
		if h == "" {
			h = "Approval"
		}
		return "🔐 **" + plain(h, 100) + "**"
	}
	h := "**Question**"
	if it.Header != "" {
		h = "**" + plain(it.Header, 100) + "**"
	}
	if it.Total > 1 {
		h += fmt.Sprintf(" · %d of %d", it.Index, it.Total)
	}
	return h
}

// questionBody is the question's text (an approval's action in bold, its
// details beneath).
func questionBody(it interactions.Interaction) string {
	if it.Styled() {
		action, details := interactions.ActionAndDetails(it.Question)
		b := "**" + plain(action, 300) + "**"
		if details != "" {
			b += "\n" + toDiscord(details)
		}
		return b
	}
	return toDiscord(it.Question)
}

// optionLines are the options whose label the button cuts or that have a
// description, one a line.
func optionLines(it interactions.Interaction, multi bool) string {
	var lines []string
	for _, o := range it.Options {
		if o.Description == "" && (multi || utf8.RuneCountInString(o.Label) <= maxButton) {
			continue
		}
		l := "**" + plain(o.Label, 200) + "**"
		if o.Description != "" {
			l += " — " + plain(o.Description, 500)
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

// questionMsgs are a question's messages: its text (split when long) and
// the message with its buttons or select menu.
func questionMsgs(it interactions.Interaction, pl place, selected []string) ([]string, outMsg) {
	hint := replyHint(pl) + " to answer in your own words."
	if it.Styled() {
		hint = replyHint(pl) + " to reject with a reason."
	}
	if it.MultiSelect {
		hint = "Pick the options that apply in the menu. " + hint
	}
	tail := optionLines(it, it.MultiSelect)
	if tail != "" {
		tail += "\n"
	}
	tail += "-# " + hint
	if it.Decides() && pl.approversOnly {
		tail += " Only approvers can decide."
	}
	head := questionHead(it)
	lead, content := fitAbove(head+"\n"+questionBody(it), tail)
	return lead, outMsg{content: content, components: questionComponents(it, selected)}
}

// fitAbove puts body and tail into one message when they fit; otherwise
// the body goes into messages of its own before a message with the tail.
func fitAbove(body, tail string) ([]string, string) {
	if utf8.RuneCountInString(body)+1+utf8.RuneCountInString(tail) <= maxContent {
		return nil, body + "\n" + tail
	}
	var lead []string
	for _, p := range splitMarkdown(body, maxContent) {
		if strings.TrimSpace(p) != "" {
			lead = append(lead, p)
		}
	}
	return lead, truncate(tail, maxContent)
}

// questionComponents are a question's buttons (five to a row), or for a
// multi-select its select menu with the current selection ticked.
func questionComponents(it interactions.Interaction, selected []string) []discordgo.MessageComponent {
	if it.MultiSelect {
		on := map[string]bool{}
		for _, s := range selected {
			on[s] = true
		}
		opts := make([]discordgo.SelectMenuOption, len(it.Options))
		for i, o := range it.Options {
			opts[i] = discordgo.SelectMenuOption{Label: nonEmpty(truncate(o.Label, maxOption)), Value: strconv.Itoa(i),
				Description: truncate(o.Description, maxOption), Default: on[o.Label]}
		}
		one := 1
		return []discordgo.MessageComponent{discordgo.ActionsRow{Components: []discordgo.MessageComponent{discordgo.SelectMenu{
			MenuType: discordgo.StringSelectMenu, CustomID: customID(buttonKey{ID: it.ID, Done: true}),
			Placeholder: "Choose the options that apply", MinValues: &one, MaxValues: len(opts), Options: opts,
		}}}}
	}
	bs := make([]discordgo.Button, len(it.Options))
	for i, o := range it.Options {
		bs[i] = button(buttonKey{ID: it.ID, Kind: 'q', Index: i}, o.Label, buttonStyle(it, o.Style))
	}
	return rows(bs)
}

func nonEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(no label)" // Discord refuses an empty label
	}
	return s
}

func button(k buttonKey, label string, style discordgo.ButtonStyle) discordgo.Button {
	return discordgo.Button{Label: nonEmpty(truncate(label, maxButton)), Style: style, CustomID: customID(k)}
}

// rows puts buttons five to an action row, at most five rows.
func rows(bs []discordgo.Button) []discordgo.MessageComponent {
	var out []discordgo.MessageComponent
	for i := 0; i < len(bs) && len(out) < maxRows; i += maxRowSize {
		row := discordgo.ActionsRow{}
		for _, b := range bs[i:min(i+maxRowSize, len(bs))] {
			row.Components = append(row.Components, b)
		}
		out = append(out, row)
	}
	return out
}

// buttonStyle colours an option: green for one that approves, red for one
// that denies or cannot be undone, grey otherwise.
func buttonStyle(it interactions.Interaction, s interactions.Style) discordgo.ButtonStyle {
	switch s {
	case interactions.StyleApprove:
		if !it.DefaultToNo { // nothing invites a quick approval
			return discordgo.SuccessButton
		}
	case interactions.StyleDeny, interactions.StyleDestructive:
		return discordgo.DangerButton
	}
	return discordgo.SecondaryButton
}

// planParts are the plan in messages of its own.
func planParts(it interactions.Interaction) []string {
	var out []string
	for _, p := range splitMarkdown(it.Plan, maxContent) {
		if t := toDiscord(p); strings.TrimSpace(t) != "" {
			out = append(out, t)
		}
	}
	return out
}

// toolHead is a tool approval's heading in plain words and its notes.
func toolHead(it interactions.Interaction) string {
	head := "**Tool approval:** " + plain(connectors.ToolAction(it.ToolName), 300)
	for _, n := range connectors.ToolNotes(it) {
		head += "\n" + truncate(n, 600)
	}
	return head
}

// maxInlineCode is how much of a command the buttons message holds; a
// longer one is shown whole in messages before it.
const maxInlineCode = 1200

// codeParts are a tool approval's whole request in messages before its
// buttons, when it is too long to sit with them; none when it fits.
func codeParts(it interactions.Interaction) []string {
	code := connectors.ToolCode(it)
	if utf8.RuneCountInString(code) <= maxInlineCode {
		return nil
	}
	parts := connectors.SplitLines(code, maxContent-20)
	out := make([]string, len(parts))
	for i, p := range parts {
		out[i] = toolBlock(it, p)
	}
	return out
}

// planMeanings says what each plan decision does, one a line.
func planMeanings() string {
	lines := make([]string, len(interactions.PlanOptions))
	for i, o := range interactions.PlanOptions {
		lines[i] = "**" + connectors.DecisionLabel(o.Label) + "** — " + o.Description
	}
	return strings.Join(lines, "\n")
}

// decisionTitle is a plan review's question, or a tool approval's heading
// with its request (or where to find it).
func decisionTitle(it interactions.Interaction) string {
	if it.Kind == interactions.KindPlanReview {
		return "**Plan review:** how should the agent go on?"
	}
	code := connectors.ToolCode(it)
	if n := utf8.RuneCountInString(code); n > maxInlineCode {
		return toolHead(it) + fmt.Sprintf("\n-# The whole request (%d characters) is shown in the messages above.", n)
	}
	return toolHead(it) + "\n" + toolBlock(it, code)
}
