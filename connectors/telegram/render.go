package telegram

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

const checkMark = "✅ "

// Texts people see.
const (
	staleText       = "This question is no longer active"
	expiredText     = "⌛ Expired — the agent was told no answer came"
	CancelledText   = "Cancelled"
	interruptedText = interactions.InterruptedNotice
	feedbackPrompt  = "What should change?"
	// countedText answers an approval that counted towards a quorum; the
	// message itself shows how many there are.
	countedText = "✓ Your approval is counted; more approvers are needed"
	// approverOnlyText answers a command from an approver who is not an
	// allowed user.
	approverOnlyText = "Approvers who are not allowed users can only decide plan reviews, tool approvals and approvals (buttons, or a reason typed while one waits)."
	// alreadyApprovedText answers a repeat tap by someone counted already.
	alreadyApprovedText = "You approved this already — your approval counts once"
)

// quorumLine is the state of an interaction waiting for more approvals:
// "⏳ 1 of 2 approvals — @alice".
func (c *Connector) quorumLine(it interactions.Interaction, approvals []interactions.Approver) string {
	return "⏳ <b>" + escape(interactions.QuorumText(it, approvals, c.nameOf)) + "</b>"
}

// pendingText is the interaction's last message part (the one with the
// buttons) with the approvals so far below it, or "" when that would not
// fit one message.
func (c *Connector) pendingText(it interactions.Interaction, approvals []interactions.Approver) string {
	parts, _ := render(it, nil)
	if len(parts) == 0 {
		return ""
	}
	t := parts[len(parts)-1] + "\n\n" + c.quorumLine(it, approvals)
	if hlen(t) > maxMessage {
		return ""
	}
	return t
}

// render returns an interaction's message parts (HTML) and the keyboard
// that goes on the last part.
func render(it interactions.Interaction, selected []string) ([]string, *tgbotapi.InlineKeyboardMarkup) {
	switch it.Kind {
	case interactions.KindPlanReview:
		return planParts(it), keyboard(it, selected)
	case interactions.KindToolApproval:
		// Split, never refused by Telegram: the longest command or question
		// shown (emoji count twice) can pass its 4096-unit limit.
		return splitHTML(toolText(it)+"\n\n<i>Tap a button — or type a reason to deny.</i>", maxMessage), keyboard(it, selected)
	default:
		if it.Styled() {
			return splitHTML(approvalText(it)+"\n\n<i>"+approvalHint+"</i>", maxMessage), keyboard(it, selected)
		}
		return splitHTML(questionText(it), maxMessage), keyboard(it, selected)
	}
}

// approvalHint says how to answer an approval (a question whose options
// approve or deny: a program's yes/no approval, a confirmation).
const approvalHint = "Tap a button — or type a reason to reject."

// approvalText shows an approval: its header, the action in bold and the
// details beneath it.
func approvalText(it interactions.Interaction) string {
	header := it.Header
	if header == "" {
		header = "Approval"
	}
	action, details := interactions.ActionAndDetails(it.Question)
	s := "<b>🔐 " + escape(connectors.Truncate(header, 200)) + "</b>\n<b>" + escape(action) + "</b>"
	if details != "" {
		s += "\n" + escape(details)
	}
	return s
}

// stylePrefix marks a styled option's button, as Telegram buttons have
// no colours: ✅ approves, ❌ denies, ⚠️ cannot be undone. leashd's own
// tool decisions (Allow, Deny) read plainly and stay unmarked.
func stylePrefix(it interactions.Interaction, o interactions.Choice) string {
	if it.Kind == interactions.KindToolApproval && !it.OwnOptions() {
		return ""
	}
	switch o.Style {
	case interactions.StyleApprove:
		return "✅ "
	case interactions.StyleDeny:
		return "❌ "
	case interactions.StyleDestructive:
		return "⚠️ "
	}
	return ""
}

func questionHead(it interactions.Interaction) string {
	var b strings.Builder
	if it.Header != "" {
		b.WriteString("<b>" + escape(connectors.Truncate(it.Header, 200)) + "</b>")
	}
	if it.Total > 1 {
		if b.Len() > 0 {
			b.WriteString(" · ")
		}
		fmt.Fprintf(&b, "%d/%d", it.Index, it.Total)
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	b.WriteString(escape(connectors.Truncate(it.Question, 2500)))
	return b.String()
}

func questionText(it interactions.Interaction) string {
	var b strings.Builder
	b.WriteString(questionHead(it))
	var desc []string
	for _, o := range it.Options {
		if o.Description != "" {
			desc = append(desc, "• <b>"+escape(connectors.Truncate(o.Label, 100))+"</b> — "+escape(connectors.Truncate(o.Description, 200)))
		}
	}
	if len(desc) > 0 {
		b.WriteString("\n\n" + strings.Join(desc, "\n"))
	}
	switch {
	case len(it.Options) == 0:
		b.WriteString("\n\n<i>Type your answer.</i>")
	case it.MultiSelect:
		b.WriteString("\n\n<i>Tap options to select them, then Done — or type to answer in your own words.</i>")
	default:
		b.WriteString("\n\n<i>Tap an option — or type to answer in your own words.</i>")
	}
	return b.String()
}

func planParts(it interactions.Interaction) []string {
	html := "<b>📋 Plan review</b>\n\n" + markdownToHTML(it.Plan) + "\n\n" + planMeanings() + "\n\n<i>Tap a decision — or type what should change.</i>"
	return splitHTML(html, maxMessage)
}

// planMeanings says what each plan decision does, one a line.
func planMeanings() string {
	lines := make([]string, len(interactions.PlanOptions))
	for i, o := range interactions.PlanOptions {
		lines[i] = "• <b>" + escape(connectors.DecisionLabel(o.Label)) + "</b> — " + escape(o.Description)
	}
	return strings.Join(lines, "\n")
}

// keyboard builds the buttons: one per row, labels shown, keys sent.
func keyboard(it interactions.Interaction, selected []string) *tgbotapi.InlineKeyboardMarkup {
	var rows [][]tgbotapi.InlineKeyboardButton
	for i, o := range it.Options {
		k := cbKey{ID: it.ID, Kind: 'q', Index: i}
		switch it.Kind {
		case interactions.KindPlanReview:
			k.Kind = 'p'
		case interactions.KindToolApproval:
			if it.OwnOptions() {
				break // the agent's own options: keyed by place, as a question's
			}
			// The key names the decision, not its place: a request may
			// show Deny first or leave an option out.
			k.Kind, k.Index = 't', connectors.DecisionIndex(it.Kind, o.Label)
			if k.Index < 0 {
				continue
			}
		}
		text := stylePrefix(it, o) + connectors.OptionText(it, o.Label)
		if it.MultiSelect && slices.Contains(selected, o.Label) {
			text = checkMark + text
		}
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData(text, k.String())))
	}
	if it.MultiSelect {
		rows = append(rows, tgbotapi.NewInlineKeyboardRow(tgbotapi.NewInlineKeyboardButtonData("Done", cbKey{ID: it.ID, Done: true}.String())))
	}
	if len(rows) == 0 {
		return nil
	}
	m := tgbotapi.NewInlineKeyboardMarkup(rows...)
	return &m
}

// toolText shows what the agent wants to run: the Bash command in a code
// block, or the file and a short diff.
func toolText(it interactions.Interaction) string {
	var b strings.Builder
	b.WriteString("<b>🔧 " + escape(connectors.Truncate(connectors.ToolAction(it.ToolName), 200)) + "</b>\n")
	for _, n := range connectors.ToolNotes(it) {
		b.WriteString("<i>" + escape(connectors.Truncate(n, 600)) + "</i>\n")
	}
	if it.OwnOptions() {
		b.WriteString(ownOptionsText(it))
	}
	if it.RequiresDetails && len(it.ToolInput) > 0 {
		// The whole request, not the compact summary: the person must see
		// what they approve.
		b.WriteString("<pre>" + escape(connectors.ToolDetails(it)) + "</pre>") // split over messages when long
		return b.String()
	}
	var in map[string]any
	_ = json.Unmarshal(it.ToolInput, &in)
	str := func(k string) string { s, _ := in[k].(string); return s }
	switch {
	case str("command") != "":
		// The whole command, however long: a person must see all of what
		// they allow. A long one continues over the next messages.
		if n := utf8.RuneCountInString(str("command")); n > longCommand {
			fmt.Fprintf(&b, "<i>The whole command (%d characters) is shown below, continued over the next messages; the buttons are under its end.</i>\n", n)
		}
		b.WriteString("<pre>" + escape(str("command")) + "</pre>")
		if d := str("description"); d != "" {
			b.WriteString("\n<i>" + escape(connectors.Truncate(d, 300)) + "</i>")
		}
	case it.Diff != "":
		b.WriteString(diffHTML(it.Diff))
	case str("file_path") != "":
		b.WriteString("<code>" + escape(connectors.Truncate(str("file_path"), 300)) + "</code>")
		if diff := shortDiff(in); diff != "" {
			b.WriteString("\n<pre>" + escape(diff) + "</pre>")
		}
	case it.ToolSummary != "":
		b.WriteString("<pre>" + escape(it.ToolSummary) + "</pre>") // split over messages when long
	case len(it.ToolInput) > 0:
		b.WriteString("<pre>" + escape(connectors.Truncate(string(it.ToolInput), 2500)) + "</pre>")
	}
	return b.String()
}

// longCommand is how long a command may be before its card says that it
// continues over several messages.
const longCommand = 2500

// ownOptionsText lists what the agent's own options mean, one a line.
func ownOptionsText(it interactions.Interaction) string {
	var b strings.Builder
	for _, o := range it.Options {
		if o.Description != "" {
			b.WriteString("• " + stylePrefix(it, o) + "<b>" + escape(connectors.Truncate(o.Label, 100)) + "</b> — " + escape(connectors.Truncate(o.Description, 200)) + "\n")
		}
	}
	return b.String()
}

// shortDiff renders an Edit's old/new strings or a Write's content as a
// few -/+ lines.
func shortDiff(in map[string]any) string {
	const maxLines, maxChars = 12, 2000
	var lines []string
	add := func(prefix, s string) {
		for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
			lines = append(lines, prefix+l)
		}
	}
	old, _ := in["old_string"].(string)
	nw, _ := in["new_string"].(string)
	content, _ := in["content"].(string)
	switch {
	case old != "" || nw != "":
		if old != "" {
			add("- ", old)
		}
		if nw != "" {
			add("+ ", nw)
		}
	case content != "":
		add("+ ", content)
	default:
		return ""
	}
	more := ""
	if len(lines) > maxLines {
		more = fmt.Sprintf("\n… %d more lines", len(lines)-maxLines)
		lines = lines[:maxLines]
	}
	return connectors.Truncate(strings.Join(lines, "\n"), maxChars) + more
}

// statusLine says how an interaction ended.
func (c *Connector) statusLine(it interactions.Interaction, res interactions.Resolution, group bool) string {
	by := ""
	if group && res.By != "" {
		by = " — by " + escape(c.nameOf(res.By))
	}
	if len(res.Approvals) > 0 && res.Status == interactions.StatusAnswered {
		names := make([]string, len(res.Approvals))
		for i, a := range res.Approvals {
			names[i] = c.nameOf(a.By)
		}
		by = " — approved by " + escape(strings.Join(names, ", "))
	}
	switch res.Status {
	case interactions.StatusExpired:
		return expiredText
	case interactions.StatusCancelled:
		if n := connectors.WithdrawnNote(res); n != "" {
			return escape(n)
		}
		return CancelledText
	case interactions.StatusInterrupted:
		if len(res.Approvals) > 0 { // counted towards a quorum, still after the restart
			return "<b>" + interruptedText + "</b>\n\n" + c.quorumLine(it, res.Approvals)
		}
		return "<b>" + interruptedText + "</b>"
	}
	switch it.Kind {
	case interactions.KindQuestion:
		if it.Styled() {
			return approvalStatus(it, res, by)
		}
		if res.Status == interactions.StatusAnswered {
			return "✅ <b>" + escape(connectors.Truncate(res.Answer, 1000)) + "</b>" + by
		}
		return "❌ Declined" + by
	case interactions.KindPlanReview:
		switch {
		case res.Status == interactions.StatusAnswered:
			return "✅ " + escape(connectors.DecisionLabel(res.Decision)) + by
		case res.Decision == interactions.DecisionAdjust:
			return "✏️ Adjust" + by + ": " + escape(connectors.Truncate(res.Text, 1000))
		default:
			return "❌ Rejected" + by
		}
	default:
		chosen := ""
		if it.OwnOptions() && res.Answer != "" {
			chosen = ": <b>" + escape(connectors.Truncate(res.Answer, 200)) + "</b>"
		}
		switch {
		case chosen != "" && res.Status == interactions.StatusAnswered:
			return "✅ Allowed" + by + chosen
		case chosen != "":
			return "🚫 Denied" + by + chosen
		case res.Decision == interactions.DecisionAllowSession:
			return "✅ Allowed for this session" + by
		case res.Status == interactions.StatusAnswered:
			return "✅ Allowed" + by
		case res.Text != "" && res.Text != "The user denied this tool call." && res.Decision == interactions.DecisionDeny:
			return "🚫 Denied" + by + ": " + escape(connectors.Truncate(res.Text, 1000))
		default:
			return "🚫 Denied" + by
		}
	}
}

// approvalStatus says how an approval (a styled question) ended: 🚫 Denied
// with the reason typed, if any, or ✅ and the option chosen.
func approvalStatus(it interactions.Interaction, res interactions.Resolution, by string) string {
	if !interactions.Refusal(it, res) {
		return "✅ <b>" + escape(connectors.Truncate(res.Answer, 1000)) + "</b>" + by
	}
	if reason := connectors.RefusalReason(it, res); reason != "" {
		return "🚫 <b>Denied</b>" + by + ": " + escape(connectors.Truncate(reason, 1000))
	}
	return "🚫 <b>Denied</b>" + by
}

// resolvedText is the message after the interaction ended: what was asked
// and how it ended. For plans it is the last part; when that has no room
// for the outcome, only the outcome is returned with separate set: it goes
// in a message of its own.
func (c *Connector) resolvedText(it interactions.Interaction, res interactions.Resolution, group bool) (text string, separate bool) {
	status := c.statusLine(it, res, group)
	switch it.Kind {
	case interactions.KindPlanReview:
		parts := planParts(it)
		last := ""
		if len(parts) > 0 {
			last = parts[len(parts)-1]
		}
		last = strings.TrimSuffix(last, "\n\n<i>Tap a decision — or type what should change.</i>")
		if t := last + "\n\n" + status; hlen(t) <= maxMessage {
			return t, false
		}
		return status, true
	}
	body := questionHead(it)
	switch {
	case it.Kind == interactions.KindToolApproval:
		body = toolText(it)
	case it.Styled():
		body = approvalText(it)
	}
	if parts, _ := render(it, nil); len(parts) > 1 {
		// Shown in several messages: the last one (the buttons') keeps
		// its text, without the hint.
		body = parts[len(parts)-1]
		if i := strings.LastIndex(body, "\n\n<i>"); i >= 0 {
			body = body[:i]
		}
	}
	if t := body + "\n\n" + status; hlen(t) <= maxMessage {
		return t, false
	}
	return status, true
}
