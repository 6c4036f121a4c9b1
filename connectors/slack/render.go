package slack

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

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
	return slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, connectors.Truncate(mrkdwn, maxSection), false, false), nil, nil, slack.SectionBlockOptionBlockID(id))
}

func contextBlock(id, mrkdwn string) slack.Block {
	return slack.NewContextBlock(id, slack.NewTextBlockObject(slack.MarkdownType, connectors.Truncate(mrkdwn, maxSection), false, false))
}

func button(k buttonKey, text, style string) *slack.ButtonBlockElement {
	if strings.TrimSpace(text) == "" {
		text = "(no label)" // Slack refuses empty button text
	}
	b := slack.NewButtonBlockElement(actionIDOf(k), k.String(), slack.NewTextBlockObject(slack.PlainTextType, connectors.Truncate(text, maxButton), true, false))
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
		return append(codeMessages(it), decisionMsg(it, pl, ""))
	default:
		return []outMsg{questionMsg(it, pl, selected)}
	}
}

// questionTitle is the question's header and text as sections, the text
// split to fit (nothing of a long question is cut off).
func questionTitle(it interactions.Interaction) []string {
	if it.Styled() {
		return approvalTitle(it)
	}
	var b strings.Builder
	if it.Header != "" {
		b.WriteString("*" + strings.ReplaceAll(escape(it.Header), "*", "") + "*")
	} else {
		b.WriteString("*Question*")
	}
	if it.Total > 1 {
		fmt.Fprintf(&b, " · %d of %d", it.Index, it.Total)
	}
	head := b.String()
	q := toMrkdwn(it.Question)
	if utf8.RuneCountInString(head)+1+utf8.RuneCountInString(q) <= maxSection {
		return []string{head + "\n" + q}
	}
	texts := []string{head}
	for _, p := range splitMarkdown(it.Question, maxSection) {
		if strings.TrimSpace(p) != "" {
			texts = append(texts, toMrkdwn(p))
		}
	}
	return capTexts(texts, maxTitleSections)
}

// Blocks a message's texts may take, so that with the buttons, the hint
// and a note it stays within Slack's 50 blocks.
const (
	maxTitleSections = 20 // of a question
	maxDetailBlocks  = 20
	maxCodeSections  = 45 // of a tool approval
)

// details are the options' long labels and descriptions as context texts,
// each within Slack's limit: an option whose line would be too long is
// split over several (shown plain rather than with its label in bold).
func details(it interactions.Interaction) []string {
	var lines []string
	for _, o := range it.Options {
		if o.Description == "" && utf8.RuneCountInString(o.Label) <= maxButton-2 {
			continue // the button shows it all
		}
		line := "*" + strings.ReplaceAll(escape(o.Label), "*", "") + "*"
		raw := o.Label
		if o.Description != "" {
			line += " — " + escape(o.Description)
			raw += " — " + o.Description
		}
		if utf8.RuneCountInString(line) <= maxSection {
			lines = append(lines, line)
			continue
		}
		lines = append(lines, splitFit(raw, maxSection, escape)...)
	}
	var texts []string
	cur := ""
	for _, l := range lines {
		switch {
		case cur == "":
			cur = l
		case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(l) <= maxSection:
			cur += "\n" + l
		default:
			texts = append(texts, cur)
			cur = l
		}
	}
	if cur != "" {
		texts = append(texts, cur)
	}
	return capTexts(texts, maxDetailBlocks)
}

// splitFit cuts raw into parts whose rendering each fits in max
// characters, filling each part with as many whole lines as fit and
// cutting inside a line only when it alone is too long, and returns the
// renderings. The parts joined (with "\n" where a cut fell at a line end)
// are raw again.
//
// render must treat lines alike wherever they are (escaping, a code
// block): what it adds around any text, render(""), is counted once per
// part, so that a part's length is at most the sum of its lines'.
func splitFit(raw string, max int, render func(string) string) []string {
	size := func(s string) int { return utf8.RuneCountInString(render(s)) }
	fits := func(s string) bool { return size(s) <= max }
	base := size("")
	var out []string
	cur, curLen, has := "", 0, false // curLen: at least cur's rendered length
	for _, line := range strings.Split(raw, "\n") {
		n := size(line)
		if has && curLen+1+n-base <= max {
			cur += "\n" + line
			curLen += 1 + n - base
			continue
		}
		if has {
			out = append(out, render(cur))
		}
		for !fits(line) { // a line too long alone: cut it where it still fits
			r := []rune(line)
			lo, hi := 1, len(r)-1
			for lo < hi {
				mid := (lo + hi + 1) / 2
				if fits(string(r[:mid])) {
					lo = mid
				} else {
					hi = mid - 1
				}
			}
			out = append(out, render(string(r[:lo])))
			line = string(r[lo:])
		}
		cur, curLen, has = line, size(line), true
	}
	if has {
		out = append(out, render(cur))
	}
	return out
}

// capTexts keeps at most n texts; when there are more, the last kept one
// says how much is not shown, so nothing is lost silently.
func capTexts(texts []string, n int) []string {
	if len(texts) <= n {
		return texts
	}
	left := 0
	for _, t := range texts[n-1:] {
		left += utf8.RuneCountInString(t)
	}
	return append(texts[:n-1:n-1], fmt.Sprintf("_… and %d more characters, too long for one Slack message._", left))
}

func questionMsg(it interactions.Interaction, pl place, selected []string) outMsg {
	var blocks []slack.Block
	for i, t := range questionTitle(it) {
		blocks = append(blocks, section(blockID(it.ID+":q", i), t))
	}
	for i, t := range details(it) {
		blocks = append(blocks, contextBlock(blockID(it.ID+":d", i), t))
	}
	on := make(map[string]bool, len(selected))
	for _, s := range selected {
		on[s] = true
	}
	var buttons []*slack.ButtonBlockElement
	for i, o := range it.Options {
		text, style := o.Label, buttonStyle(it, o)
		if it.MultiSelect {
			if on[o.Label] {
				text, style = "✓ "+o.Label, "primary"
			} else {
				text = "☐ " + o.Label
			}
		}
		buttons = append(buttons, button(buttonKey{ID: it.ID, Kind: 'q', Index: i}, text, style))
	}
	hint := replyHint(pl) + " to answer in your own words."
	if it.Styled() {
		hint = replyHint(pl) + " to reject with a reason."
	}
	if it.MultiSelect {
		buttons = append(buttons, button(buttonKey{ID: it.ID, Done: true}, "Done", "primary"))
		hint = "Tap the options that apply, then Done. " + hint
	}
	blocks = append(blocks, actionBlocks(it.ID, buttons)...)
	blocks = append(blocks, contextBlock(it.ID+":h", hint))
	text := "Question: " + connectors.Truncate(it.Question, 200)
	if it.Styled() {
		text = "Approval: " + connectors.Truncate(it.Question, 200)
	}
	return outMsg{text: text, blocks: blocks}
}

// planMessages are the plan as mrkdwn sections, at most maxBlocks to a
// message.
func planMessages(it interactions.Interaction) []outMsg {
	var parts []string
	for _, p := range splitMarkdown(it.Plan, maxSection) {
		if strings.TrimSpace(p) != "" { // Slack refuses empty sections
			parts = append(parts, p)
		}
	}
	var msgs []outMsg
	for i := 0; i < len(parts); i += maxBlocks {
		end := min(i+maxBlocks, len(parts))
		var blocks []slack.Block
		for j := i; j < end; j++ {
			blocks = append(blocks, section(it.ID+":plan"+strconv.Itoa(j), toMrkdwn(parts[j])))
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

// blockID is the i-th block_id of a kind: the first keeps the plain one.
func blockID(base string, i int) string {
	if i == 0 {
		return base
	}
	return base + strconv.Itoa(i)
}

// decisionTitle is a plan review's question, or a tool approval's tool
// and its whole command or diff in code blocks (split over several
// sections when long).
func decisionTitle(it interactions.Interaction) []string {
	if it.Kind == interactions.KindPlanReview {
		return []string{"*Plan review:* how should the agent go on?"}
	}
	head := toolHead(it)
	code := splitFit(connectors.ToolCode(it), maxSection, codeBlock)
	if len(code) == 1 && utf8.RuneCountInString(head)+1+utf8.RuneCountInString(code[0]) <= maxSection {
		return []string{head + "\n" + code[0]}
	}
	if 1+len(code) <= maxCodeSections {
		return append([]string{head}, code...)
	}
	// Too long for one message: it is in messages of its own just above
	// (codeMessages), whole.
	return []string{head + fmt.Sprintf("\n_The whole request (%d characters) is shown in full in the %d messages above._",
		utf8.RuneCountInString(connectors.ToolCode(it)), len(codeChunks(code)))}
}

// codeBlock shows text verbatim in a Slack code block. A run of backticks
// inside would end the block early, so each is broken with a zero-width
// space, as are backticks touching the fences.
func codeBlock(text string) string {
	t := escape(text)
	if strings.Contains(t, "``") {
		t = strings.ReplaceAll(t, "``", "`\u200b`")
		t = strings.ReplaceAll(t, "``", "`\u200b`") // runs of odd length
	}
	if strings.HasPrefix(t, "`") {
		t = "\u200b" + t
	}
	if strings.HasSuffix(t, "`") {
		t += "\u200b"
	}
	return "```" + t + "```"
}

// decisionMsg is a plan review's or tool approval's buttons message; note
// is an extra line (the adjust prompt, an interruption).
func decisionMsg(it interactions.Interaction, pl place, note string) outMsg {
	var blocks []slack.Block
	for i, t := range decisionTitle(it) {
		blocks = append(blocks, section(blockID(it.ID+":q", i), t))
	}
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
	shown := it.Options // this request's options, in its order
	if len(shown) == 0 {
		shown = opts
	}
	var buttons []*slack.ButtonBlockElement
	if it.Kind == interactions.KindPlanReview { // what each decision does
		blocks = append(blocks, contextBlock(it.ID+":d", planMeanings()))
	}
	if it.OwnOptions() { // the agent's own options, keyed by place
		for i, t := range details(it) {
			blocks = append(blocks, contextBlock(blockID(it.ID+":d", i), t))
		}
		for i, o := range it.Options {
			buttons = append(buttons, button(buttonKey{ID: it.ID, Kind: 'q', Index: i}, o.Label, buttonStyle(it, o)))
		}
		shown = nil
	}
	for _, o := range shown {
		i := connectors.DecisionIndex(it.Kind, o.Label) // keys name the decision, not its place
		if i < 0 {
			continue
		}
		style := ""
		switch o.Label {
		case interactions.DecisionCleanEdit, interactions.DecisionEdit, interactions.DecisionAllow:
			if !it.DefaultToNo { // nothing invites a quick approval
				style = "primary"
			}
		case interactions.DecisionDeny:
			style = "danger"
		}
		buttons = append(buttons, button(buttonKey{ID: it.ID, Kind: kind, Index: i}, connectors.DecisionLabel(o.Label), style))
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
		if len(ev.Approvals) > 0 { // counted towards a quorum: the buttons stay
			return decisionMsg(it, pl, "⏳ *"+interactions.QuorumText(it, ev.Approvals, who)+"*")
		}
	}
	res := ev.Resolution
	if res.Status == interactions.StatusInterrupted { // the buttons still work
		note := "⚠️ " + escape(res.Text)
		if len(ev.Approvals) > 0 { // they still count after the restart
			note += "\n⏳ *" + interactions.QuorumText(it, ev.Approvals, who) + "*"
		}
		if it.Kind == interactions.KindQuestion {
			m := questionMsg(it, pl, ev.Selected) // with the selection so far
			n := len(questionTitle(it))           // the note goes after the question's sections
			m.blocks = append(m.blocks[:n:n], append([]slack.Block{section(it.ID+":n", note)}, m.blocks[n:]...)...)
			return m
		}
		return decisionMsg(it, pl, note)
	}
	title := decisionTitle(it)
	switch it.Kind {
	case interactions.KindQuestion:
		title = questionTitle(it)
	case interactions.KindPlanReview:
		title = []string{"*Plan review*"}
	}
	var blocks []slack.Block
	for i, t := range title {
		blocks = append(blocks, section(blockID(it.ID+":q", i), t))
	}
	outcome := outcomeLine(it, res)
	return outMsg{text: connectors.Truncate(outcome, 200), blocks: append(blocks, section(it.ID+":r", outcome))}
}

// alreadyApprovedText tells someone whose approval counts already.
const alreadyApprovedText = "You approved this already — your approval counts once."

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
		reason = ": " + truncEscaped(t, 1500)
	}
	if interactions.Refusal(it, res) && (it.Styled() && it.Kind == interactions.KindQuestion || it.OwnOptions()) {
		return deniedLine(it, res, by)
	}
	switch res.Status {
	case interactions.StatusAnswered:
		if it.Kind == interactions.KindQuestion {
			return "✅ *Answer:* " + truncEscaped(res.Answer, 2000) + by
		}
		if it.OwnOptions() {
			return "✅ *Allowed:* " + truncEscaped(res.Answer, 200) + by
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
		if n := connectors.WithdrawnNote(res); n != "" {
			return escape(n)
		}
		return "🚫 *Cancelled*" + reason
	}
	return "*" + escape(string(res.Status)) + "*" + reason
}

// truncEscaped is text escaped and, when that is longer than max
// characters, cut before the escaping (so no entity is split) with "…".
func truncEscaped(text string, max int) string {
	if e := escape(text); utf8.RuneCountInString(e) <= max {
		return e
	}
	r := []rune(text)
	lo, hi := 0, min(len(r), max) // the longest prefix that fits
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if utf8.RuneCountInString(escape(string(r[:mid])))+1 <= max {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return escape(string(r[:lo])) + "…"
}
