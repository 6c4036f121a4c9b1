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

// approvalTitle is an approval's (a styled question's) header, its action
// in bold and the details beneath, split to fit.
func approvalTitle(it interactions.Interaction) []string {
	header := it.Header
	if header == "" {
		header = "Approval"
	}
	action, details := interactions.ActionAndDetails(it.Question)
	head := "*🔐 " + strings.ReplaceAll(escape(header), "*", "") + "*\n" + bold(action)
	if details == "" {
		return []string{head}
	}
	d := toMrkdwn(details)
	if utf8.RuneCountInString(head)+1+utf8.RuneCountInString(d) <= maxSection {
		return []string{head + "\n" + d}
	}
	texts := []string{head}
	for _, p := range splitMarkdown(details, maxSection) {
		if strings.TrimSpace(p) != "" {
			texts = append(texts, toMrkdwn(p))
		}
	}
	return capTexts(texts, maxTitleSections)
}

// bold is one line of plain text in bold, cut to fit a section.
func bold(line string) string {
	t := strings.ReplaceAll(truncEscaped(line, maxSection-200), "*", "")
	if strings.TrimSpace(t) == "" {
		return ""
	}
	return "*" + t + "*"
}

// buttonStyle is how Slack colours an option: green (primary) for one
// that approves, red (danger) for one that denies or cannot be undone.
func buttonStyle(it interactions.Interaction, o interactions.Choice) string {
	switch o.Style {
	case interactions.StyleApprove:
		if !it.DefaultToNo { // nothing invites a quick approval
			return "primary"
		}
	case interactions.StyleDeny, interactions.StyleDestructive:
		return "danger"
	}
	return ""
}

// toolHead is a tool approval's heading: what the agent wants in plain
// words, and the notes that go with it.
func toolHead(it interactions.Interaction) string {
	head := "*Tool approval:* " + escape(connectors.ToolAction(it.ToolName))
	for _, n := range connectors.ToolNotes(it) {
		head += "\n" + truncEscaped(n, 600)
	}
	return head
}

// codeChunks groups code sections into messages' worth.
func codeChunks(code []string) [][]string {
	var out [][]string
	for i := 0; i < len(code); i += maxBlocks {
		out = append(out, code[i:min(i+maxBlocks, len(code))])
	}
	return out
}

// codeMessages are a tool approval's code in messages of its own, before
// its buttons' message, when one message cannot hold it all: a person
// must see the whole of what they allow. None when it fits.
func codeMessages(it interactions.Interaction) []outMsg {
	code := splitFit(connectors.ToolCode(it), maxSection, codeBlock)
	if 1+len(code) <= maxCodeSections {
		return nil
	}
	chunks := codeChunks(code)
	msgs := make([]outMsg, len(chunks))
	for i, c := range chunks {
		blocks := make([]slack.Block, len(c))
		for j, t := range c {
			blocks[j] = section(it.ID+":code"+strconv.Itoa(i*maxBlocks+j), t)
		}
		msgs[i] = outMsg{text: fmt.Sprintf("Tool approval: %s (%d/%d)", connectors.Truncate(it.ToolName, 100), i+1, len(chunks)), blocks: blocks}
	}
	return msgs
}

// planMeanings says what each plan decision does, one a line.
func planMeanings() string {
	lines := make([]string, len(interactions.PlanOptions))
	for i, o := range interactions.PlanOptions {
		lines[i] = "*" + escape(connectors.DecisionLabel(o.Label)) + "* — " + escape(o.Description)
	}
	return strings.Join(lines, "\n")
}

// deniedLine is a refused approval's outcome: Denied, with the option
// chosen when it was one of the agent's own, and the reason typed.
func deniedLine(it interactions.Interaction, res interactions.Resolution, by string) string {
	s := "🚫 *Denied*"
	if it.OwnOptions() && res.Answer != "" {
		s += " (" + truncEscaped(res.Answer, 200) + ")"
	}
	s += by
	if r := strings.TrimSpace(connectors.RefusalReason(it, res)); r != "" {
		s += ": " + truncEscaped(r, 1500)
	}
	return s
}
