package slack

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/slack-go/slack"

	"github.com/leashd/leashd/connectors/slack/slackfake"
	"github.com/leashd/leashd/interactions"
)

func TestRenderLongLabelsAndManyOptions(t *testing.T) {
	long := strings.Repeat("very long option label ", 6) // 138 characters
	it := interactions.Interaction{ID: "abc", ChatID: "slack:C1:1.1", Kind: interactions.KindQuestion, Question: "Pick", MultiSelect: true}
	it.Options = append(it.Options, interactions.Choice{Label: long})
	for i := range 29 {
		it.Options = append(it.Options, interactions.Choice{Label: "opt" + strings.Repeat("x", i)})
	}
	msgs := render(it, place{thread: true, approversOnly: true}, []string{long})
	require.Len(t, msgs, 1)
	raw, err := json.Marshal(msgs[0].blocks)
	require.NoError(t, err)
	btns := slackfake.Buttons(raw)
	require.Len(t, btns, 31, "thirty options and Done")
	ids := map[string]bool{}
	for _, b := range btns {
		assert.LessOrEqual(t, utf8.RuneCountInString(b.Text), MaxButton)
		assert.False(t, ids[b.ActionID], "action_id %s repeated", b.ActionID)
		ids[b.ActionID] = true
		assert.NotContains(t, b.Value, "option")
	}
	assert.True(t, strings.HasPrefix(btns[0].Text, "✓ very long"))
	assert.True(t, strings.HasSuffix(btns[0].Text, "…"))
	assert.Contains(t, slackfake.Texts(raw), "*"+long+"*", "the full label is in the text")
	var blocks []struct {
		Type     string            `json:"type"`
		BlockID  string            `json:"block_id"`
		Elements []json.RawMessage `json:"elements"`
	}
	require.NoError(t, json.Unmarshal(raw, &blocks))
	bids := map[string]bool{}
	for _, b := range blocks {
		assert.False(t, bids[b.BlockID], "block_id %s repeated", b.BlockID)
		bids[b.BlockID] = true
		if b.Type == "actions" {
			assert.LessOrEqual(t, len(b.Elements), 25)
		}
	}
}

func TestRenderOutcomes(t *testing.T) {
	tool := interactions.Interaction{ID: "t1", ChatID: "slack:D1", Kind: interactions.KindToolApproval, ToolName: "Bash", ToolSummary: "rm -rf <dir>"}
	for _, tc := range []struct {
		res  interactions.Resolution
		want string
	}{
		{interactions.Resolution{Status: interactions.StatusAnswered, Decision: interactions.DecisionAllow, By: "U7"}, "✅ *Allow* — <@U7>"},
		{interactions.Resolution{Status: interactions.StatusRejected, Decision: interactions.DecisionDeny, By: "U7", Text: "no <way>"}, "❌ *Deny* — <@U7>: no &lt;way&gt;"},
		{interactions.Resolution{Status: interactions.StatusRejected, Decision: interactions.DecisionReject, By: "U7"}, "❌ *Rejected* — <@U7>"},
		{interactions.Resolution{Status: interactions.StatusCancelled, Text: "cleared"}, "🚫 *Cancelled*: cleared"},
		{interactions.Resolution{Status: interactions.StatusCancelled, Text: interactions.WithdrawnText}, "↩️ The agent withdrew this request."},
		{interactions.Resolution{Status: interactions.StatusExpired, Text: "timeout"}, "⌛ *Expired*: timeout"},
	} {
		m := renderUpdate(interactions.Event{Type: interactions.EventResolved, Interaction: tool, Resolution: tc.res}, place{})
		raw, _ := json.Marshal(m.blocks)
		assert.Contains(t, slackfake.Texts(raw), tc.want)
		assert.Contains(t, slackfake.Texts(raw), "rm -rf &lt;dir&gt;", "the command stays visible")
		assert.Empty(t, slackfake.Buttons(raw))
	}
}

func BenchmarkMrkdwn(b *testing.B) {
	var sb strings.Builder
	for i := range 200 {
		sb.WriteString("## Step **" + strings.Repeat("x", i%7) + "**\n- change `a<b>` in [file](https://x.test/f?a=1&b=2) _now_\n```go\nif a < b { return }\n```\n")
	}
	md := sb.String()
	b.SetBytes(int64(len(md)))
	for b.Loop() {
		Mrkdwn(md)
	}
}

func BenchmarkRenderLongPlan(b *testing.B) {
	it := interactions.Interaction{ID: "p", ChatID: "slack:C1:1.1", Kind: interactions.KindPlanReview, Plan: strings.Repeat("1. Step: change `file.go` so **it** does <the> thing & more\n", 2500)}
	for b.Loop() {
		render(it, place{thread: true}, nil)
	}
}

func TestRenderNeverEmptyTexts(t *testing.T) {
	plan := "# P\n" + strings.Repeat("\n", 5000) + strings.Repeat("word ", 1000) + "\n\n\n"
	it := interactions.Interaction{ID: "p", ChatID: "slack:D1", Kind: interactions.KindPlanReview, Plan: plan}
	for _, m := range render(it, place{}, nil) {
		for _, b := range m.blocks {
			if sb, ok := b.(*slack.SectionBlock); ok {
				assert.NotEmpty(t, strings.TrimSpace(sb.Text.Text))
			}
		}
	}
	q := interactions.Interaction{ID: "q", ChatID: "slack:D1", Kind: interactions.KindQuestion, Question: "?", Options: []interactions.Choice{{Label: " "}, {Label: "b"}}}
	raw, _ := json.Marshal(render(q, place{}, nil)[0].blocks)
	for _, b := range slackfake.Buttons(raw) {
		assert.NotEmpty(t, strings.TrimSpace(b.Text))
	}
}

// validBlocks fails the test when Slack would refuse blocks.
func validBlocks(t *testing.T, blocks []slack.Block) json.RawMessage {
	t.Helper()
	raw, err := json.Marshal(blocks)
	require.NoError(t, err)
	assert.Empty(t, slackfake.ValidateBlocks(string(raw)))
	return raw
}

// sectionTexts are the mrkdwn texts of the message's sections, in order.
func sectionTexts(t *testing.T, raw json.RawMessage) []string {
	t.Helper()
	var blocks []struct {
		Type string `json:"type"`
		Text struct {
			Text string `json:"text"`
		} `json:"text"`
	}
	require.NoError(t, json.Unmarshal(raw, &blocks))
	var out []string
	for _, b := range blocks {
		if b.Type == "section" {
			out = append(out, b.Text.Text)
		}
	}
	return out
}

var unescaper = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "\u200b", "")

// codeShown is what a person reads in the code blocks of texts, joined
// by newlines; it fails when a text's code block does not hold (a fence
// inside ending it early).
func codeShown(t *testing.T, texts []string) string {
	t.Helper()
	var parts []string
	for _, x := range texts {
		i := strings.Index(x, "```")
		if i < 0 {
			continue
		}
		body := x[i+3:]
		require.True(t, strings.HasSuffix(body, "```"), "the code block is closed at the end: %q", x)
		body = strings.TrimSuffix(body, "```")
		require.NotContains(t, body, "```", "a fence inside the code ends the block early")
		require.NotContains(t, body, "``", "a run of backticks inside the code")
		parts = append(parts, unescaper.Replace(body))
	}
	return strings.Join(parts, "\n")
}

func TestToolApprovalCodeWithFencesStaysOneBlock(t *testing.T) {
	for _, cmd := range []string{
		"cat <<'EOF' > README.md\n```go\nfmt.Println(\"a && b\")\n```\nEOF",
		"`date` && echo ````four````",
		"echo `x`",
		"```",
	} {
		it := interactions.Interaction{ID: "t1", ChatID: "slack:D1", Kind: interactions.KindToolApproval, ToolName: "Bash", ToolSummary: cmd}
		raw := validBlocks(t, render(it, place{}, nil)[0].blocks)
		texts := sectionTexts(t, raw)
		assert.True(t, strings.HasPrefix(texts[0], "*Tool approval:* The agent wants to run a command\n```"))
		assert.Equal(t, cmd, codeShown(t, texts), "the command as sent, fences and all")
		// The decided message shows it the same way.
		done := renderUpdate(interactions.Event{Type: interactions.EventResolved, Interaction: it,
			Resolution: interactions.Resolution{Status: interactions.StatusAnswered, Decision: interactions.DecisionAllow, By: "U1"}}, place{})
		assert.Equal(t, cmd, codeShown(t, sectionTexts(t, validBlocks(t, done.blocks))))
	}
}

func TestToolApprovalLongCommandShownInFull(t *testing.T) {
	var b strings.Builder
	for i := range 400 { // about 26k characters, half of them escaped
		fmt.Fprintf(&b, "step%d && test -f <in%d> && echo ``` >> out\n", i, i)
	}
	b.WriteString(strings.Repeat("&", 5000) + " tail-of-the-command")
	cmd := b.String()
	it := interactions.Interaction{ID: "t1", ChatID: "slack:C1:1.1", Kind: interactions.KindToolApproval, ToolName: "Bash", ToolSummary: cmd}
	raw := validBlocks(t, render(it, place{thread: true, approversOnly: true}, nil)[0].blocks)
	texts := sectionTexts(t, raw)
	require.Greater(t, len(texts), 2, "a long command spans several sections")
	assert.Equal(t, "*Tool approval:* The agent wants to run a command", texts[0])
	for _, x := range texts {
		assert.LessOrEqual(t, utf8.RuneCountInString(x), MaxSection)
	}
	// Cut at line ends and, inside the one long line, anywhere.
	assert.True(t, strings.ReplaceAll(cmd, "\n", "") == strings.ReplaceAll(codeShown(t, texts), "\n", ""), "every character of the command is shown: an approver sees what they approve")
	assert.True(t, strings.HasPrefix(codeShown(t, texts), strings.Join(strings.Split(cmd, "\n")[:400], "\n")), "its lines as they are")
	assert.Len(t, slackfake.Buttons(raw), 3)
}

func TestQuestionLongDescriptionsNothingLost(t *testing.T) {
	var opts []interactions.Choice
	for i := range 4 {
		desc := fmt.Sprintf("option %d: ", i) + strings.Repeat("detail & more <x> ", 130) + fmt.Sprintf("end-of-description-%d", i) // ~2.4k, more escaped
		opts = append(opts, interactions.Choice{Label: fmt.Sprintf("Choice %d", i), Description: desc})
	}
	question := strings.Repeat("Which of these should we take, given all that? ", 150) + "final-words-of-the-question"
	it := interactions.Interaction{ID: "q1", ChatID: "slack:D1", Kind: interactions.KindQuestion, Header: "Pick", Question: question, Options: opts}
	for _, m := range []outMsg{
		render(it, place{}, nil)[0],
		renderUpdate(interactions.Event{Type: interactions.EventResolved, Interaction: it, Resolution: interactions.Resolution{Status: interactions.StatusInterrupted, Text: "leashd restarted"}}, place{}),
	} {
		raw := validBlocks(t, m.blocks)
		shown := strings.ReplaceAll(unescaper.Replace(slackfake.Texts(raw)), "\n", "") // long texts are cut anywhere
		for _, o := range opts {
			assert.True(t, strings.Contains(shown, o.Description), "the whole description %.20q is shown", o.Description)
		}
		assert.True(t, strings.Contains(shown, strings.TrimSpace(question)), "the whole question is shown")
		assert.Len(t, slackfake.Buttons(raw), 4)
	}
	// The interruption note follows the question, before the details.
	m := renderUpdate(interactions.Event{Type: interactions.EventResolved, Interaction: it, Resolution: interactions.Resolution{Status: interactions.StatusInterrupted, Text: "leashd restarted"}}, place{})
	texts := sectionTexts(t, validBlocks(t, m.blocks))
	assert.Equal(t, "⚠️ leashd restarted", texts[len(texts)-1])
}

func TestCapTextsSaysWhatIsNotShown(t *testing.T) {
	texts := []string{"a", "bb", "ccc", "dddd"}
	assert.Equal(t, texts, capTexts(texts, 4))
	assert.Equal(t, []string{"a", "_… and 9 more characters, too long for one Slack message._"}, capTexts(texts, 2))
	assert.Len(t, texts, 4, "the input is left alone")
}

// A command too long for one message is shown whole in messages of its
// own, before the buttons' message, which says so; the decided message
// says so too.
func TestToolApprovalTooLongForOneMessageShownWhole(t *testing.T) {
	cmd := strings.Repeat("echo x\n", 30_000) + "the-end"
	in, err := json.Marshal(map[string]string{"command": cmd})
	require.NoError(t, err)
	it := interactions.Interaction{ID: "t1", ChatID: "slack:D1", Kind: interactions.KindToolApproval, ToolName: "Bash",
		ToolInput: in, ToolSummary: cmd[:16000] + "\n… (cut)"}
	msgs := render(it, place{}, nil)
	require.Greater(t, len(msgs), 2, "the command, then the buttons")
	var texts []string
	for _, m := range msgs[:len(msgs)-1] {
		raw := validBlocks(t, m.blocks)
		assert.Empty(t, slackfake.Buttons(raw))
		texts = append(texts, sectionTexts(t, raw)...)
	}
	assert.Equal(t, cmd, codeShown(t, texts), "every character of the command, in order")
	last := validBlocks(t, msgs[len(msgs)-1].blocks)
	assert.Len(t, slackfake.Buttons(last), 3)
	assert.Contains(t, slackfake.Texts(last), fmt.Sprintf("The whole request (%d characters) is shown in full in the %d messages above.", len(cmd), len(msgs)-1))
	done := renderUpdate(interactions.Event{Type: interactions.EventResolved, Interaction: it,
		Resolution: interactions.Resolution{Status: interactions.StatusAnswered, Decision: interactions.DecisionAllow, By: "U1"}}, place{})
	assert.Contains(t, slackfake.Texts(validBlocks(t, done.blocks)), "shown in full in the")
}

func TestOutcomeTruncatedWithoutSplittingEntities(t *testing.T) {
	long := strings.Repeat("a&b ", 1000)
	tool := interactions.Interaction{ID: "t1", ChatID: "slack:D1", Kind: interactions.KindToolApproval, ToolName: "Bash", ToolSummary: "make"}
	m := renderUpdate(interactions.Event{Type: interactions.EventResolved, Interaction: tool,
		Resolution: interactions.Resolution{Status: interactions.StatusRejected, Decision: interactions.DecisionDeny, By: "U7", Text: long}}, place{})
	texts := sectionTexts(t, validBlocks(t, m.blocks))
	out := texts[len(texts)-1]
	assert.True(t, strings.HasPrefix(out, "❌ *Deny* — <@U7>: a&amp;b a&amp;b"))
	assert.True(t, strings.HasSuffix(out, "…"), "the cut is shown")
	assert.NotRegexp(t, `&(a|am|amp)?…$`, out, "no entity cut in half")
	q := interactions.Interaction{ID: "q1", ChatID: "slack:D1", Kind: interactions.KindQuestion, Question: "?", Options: []interactions.Choice{{Label: "a"}, {Label: "b"}}}
	m = renderUpdate(interactions.Event{Type: interactions.EventResolved, Interaction: q,
		Resolution: interactions.Resolution{Status: interactions.StatusAnswered, Answer: long, By: "U7"}}, place{})
	texts = sectionTexts(t, validBlocks(t, m.blocks))
	assert.True(t, strings.HasSuffix(texts[len(texts)-1], "… — <@U7>"), "a long answer still shows who gave it")
}
