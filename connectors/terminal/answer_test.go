package terminal

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

// yesNo is a two-option approval (RequestInput); tool is a tool approval.
var (
	yesNo = interactions.Interaction{Kind: interactions.KindQuestion, Approval: true, Options: []interactions.Option{{Label: "Push"}, {Label: "Wait"}}}
	tool  = interactions.Interaction{Kind: interactions.KindToolApproval, Options: interactions.ToolOptions}
)

func TestParseApproval(t *testing.T) {
	keys := approvalKeys(yesNo)
	for in, want := range map[string]act{
		"a": {kind: actSelect, index: 0}, "A": {kind: actSelect, index: 0}, " 1 ": {kind: actSelect, index: 0},
		"r": {kind: actSelect, index: 1}, "R": {kind: actSelect, index: 1}, "2": {kind: actSelect, index: 1},
		"/reject": {kind: actReject}, "/REJECT because": {kind: actReject},
		"/status": {kind: actCommand, text: "/status"},
	} {
		assert.Equal(t, want, parseApproval(in, keys), "input %q", in)
	}
	for _, in := range []string{"", "  ", "x", "3", "s", "0", "yes", "ar", "/"} {
		a := parseApproval(in, keys)
		assert.Equal(t, actInvalid, a.kind, "input %q has no default", in)
		assert.Contains(t, a.hint, "type a or 1 for Push, r or 2 for Wait (Ctrl+C or /reject rejects).", "the hint names the valid inputs")
	}
	assert.Contains(t, parseApproval("", keys).hint, "Nothing typed")
	assert.Contains(t, parseApproval("yes", keys).hint, `"yes" is not an answer`)
}

// A tool approval: a/1 allows, r/2 denies, s/3 allows for the session,
// whatever the order of the options.
func TestParseToolApproval(t *testing.T) {
	keys := approvalKeys(tool)
	label := func(a act) string {
		require.Equal(t, actSelect, a.kind)
		return tool.Options[a.index].Label
	}
	for in, want := range map[string]string{
		"a": interactions.DecisionAllow, "1": interactions.DecisionAllow,
		"r": interactions.DecisionDeny, "2": interactions.DecisionDeny,
		"s": interactions.DecisionAllowSession, "S": interactions.DecisionAllowSession, "3": interactions.DecisionAllowSession,
	} {
		assert.Equal(t, want, label(parseApproval(in, keys)), "input %q", in)
	}
	a := parseApproval("4", keys)
	assert.Equal(t, actInvalid, a.kind)
	assert.Equal(t, `"4" is not an answer: type a or 1 for Allow, r or 2 for Deny, s or 3 for Allow for this session (Ctrl+C or /reject rejects).`, a.hint)
	assert.Nil(t, approvalKeys(interactions.Interaction{Kind: interactions.KindToolApproval, Options: []interactions.Option{{Label: "allow"}}}),
		"without a Deny the options do not fit an approval")
	assert.Nil(t, approvalKeys(interactions.Interaction{Kind: interactions.KindQuestion, Options: []interactions.Option{{Label: "x"}}}))
}

func TestParseChoice(t *testing.T) {
	// Numbers pick (single) or toggle (multi).
	assert.Equal(t, act{kind: actSelect, index: 2}, parseChoice("3", 4, 0, false))
	assert.Equal(t, act{kind: actToggle, index: 0}, parseChoice("1", 3, 2, true))
	// Enter alone takes the pointer: an option, the Reject line, or confirms.
	assert.Equal(t, act{kind: actSelect, index: 1}, parseChoice("", 4, 1, false))
	assert.Equal(t, act{kind: actReject}, parseChoice("", 4, 4, false))
	assert.Equal(t, act{kind: actConfirm}, parseChoice("", 3, 0, true))
	assert.Equal(t, act{kind: actReject}, parseChoice("", 3, 3, true))
	// r and /reject reject; other commands go to the engine.
	assert.Equal(t, act{kind: actReject}, parseChoice("r", 4, 0, false))
	assert.Equal(t, act{kind: actReject}, parseChoice("/reject", 4, 0, true))
	assert.Equal(t, act{kind: actCommand, text: "/stop"}, parseChoice("/stop", 4, 0, false))
	// A list of one is still a list.
	assert.Equal(t, act{kind: actSelect, index: 0}, parseChoice("1", 1, 0, false))

	for _, c := range []struct {
		in, hint string
		n        int
		multi    bool
	}{
		{"0", "0 is out of range: type a number from 1 to 4 (or ↑/↓ and Enter), r rejects.", 4, false},
		{"5", "5 is out of range: type a number from 1 to 4", 4, false},
		{"-1", "-1 is out of range", 4, false},
		{"2", "2 is out of range: type 1 (or ↑/↓ and Enter), r rejects.", 1, false},
		{"9", "9 is out of range: type a number from 1 to 3 to toggle it (or Space), Enter confirms, r rejects.", 3, true},
		{"abc", `"abc" is not a choice: type a number from 1 to 4`, 4, false},
		{"1.5", `"1.5" is not a choice`, 4, false},
		{strings.Repeat("x", 50), `"xxxxxxxxxxxxxxxxxxx…" is not a choice`, 2, false},
	} {
		a := parseChoice(c.in, c.n, 0, c.multi)
		assert.Equal(t, actInvalid, a.kind, "input %q", c.in)
		assert.Contains(t, a.hint, c.hint, "input %q", c.in)
	}
}

func TestParseText(t *testing.T) {
	assert.Equal(t, act{kind: actText, text: "more tests please"}, parseText("  more tests please "))
	assert.Equal(t, act{kind: actReject}, parseText("r"))
	assert.Equal(t, act{kind: actReject}, parseText("/reject"))
	assert.Equal(t, act{kind: actCommand, text: "/help"}, parseText("/help"))
	assert.Equal(t, act{kind: actText, text: "rather not"}, parseText("rather not"), "only r alone rejects")
	for _, in := range []string{"", "   ", "\t"} {
		a := parseText(in)
		assert.Equal(t, actInvalid, a.kind)
		assert.Contains(t, a.hint, "r or /reject rejects")
	}
}

func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{"", "1", "r", "/reject", "a", "2", "10", "-3", "/stop now", " 4 ", "x", "99999999999999999999", "٣"} {
		f.Add(s, uint8(4), uint8(0), false)
		f.Add(s, uint8(1), uint8(1), true)
	}
	f.Fuzz(func(t *testing.T, in string, n8, ptr8 uint8, multi bool) {
		n := int(n8%8) + 1
		ptr := int(ptr8) % (n + 1)
		check := func(a act, n int) {
			switch a.kind {
			case actSelect, actToggle:
				require.GreaterOrEqual(t, a.index, 0)
				require.Less(t, a.index, n)
			case actInvalid:
				require.NotEmpty(t, a.hint, "a re-prompt says what is accepted")
			case actText:
				require.NotEmpty(t, a.text)
				require.Equal(t, strings.TrimSpace(a.text), a.text)
			case actCommand:
				require.True(t, strings.HasPrefix(a.text, "/"))
			}
		}
		c := parseChoice(in, n, ptr, multi)
		check(c, n)
		if multi {
			require.NotEqual(t, actSelect, c.kind)
		} else {
			require.NotEqual(t, actToggle, c.kind)
			require.NotEqual(t, actConfirm, c.kind)
		}
		if k, err := strconv.Atoi(strings.TrimSpace(in)); err == nil && k >= 1 && k <= n {
			require.Equal(t, k-1, c.index, "a valid number picks that option")
		}
		a := parseApproval(in, approvalKeys(tool))
		require.NotEqual(t, actText, a.kind, "approval takes no free text")
		check(a, 3)
		tx := parseText(in)
		check(tx, 0)
		if strings.TrimSpace(in) == "" {
			require.Equal(t, actInvalid, tx.kind, "empty text re-prompts")
			require.NotEqual(t, actSelect, a.kind, "approval has no default")
		}
	})
}
