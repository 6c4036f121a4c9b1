package terminal

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

// yesNo is a two-option approval (RequestInput); tool is a tool approval.
var (
	yesNo = interactions.Interaction{Kind: interactions.KindQuestion, Approval: true, Options: []interactions.Choice{{Label: "Push"}, {Label: "Wait"}}}
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

// TestParseToolApproval: a tool approval: a/1 allows, r/2 rejects at once
// (no option: the turn stops), s/3 allows for the session and d/4 denies
// with a reason, whatever the order of the options.
func TestParseToolApproval(t *testing.T) {
	keys := approvalKeys(tool)
	label := func(a act) string {
		require.Equal(t, actSelect, a.kind)
		return tool.Options[a.index].Label
	}
	for in, want := range map[string]string{
		"a": interactions.DecisionAllow, "1": interactions.DecisionAllow,
		"s": interactions.DecisionAllowSession, "S": interactions.DecisionAllowSession, "3": interactions.DecisionAllowSession,
		"d": interactions.DecisionDeny, "D": interactions.DecisionDeny, "4": interactions.DecisionDeny,
	} {
		assert.Equal(t, want, label(parseApproval(in, keys)), "input %q", in)
	}
	for _, in := range []string{"r", "R", "2", " r "} {
		assert.Equal(t, act{kind: actReject}, parseApproval(in, keys), "input %q rejects, it picks no option", in)
	}
	a := parseApproval("5", keys)
	assert.Equal(t, actInvalid, a.kind)
	assert.Equal(t, `"5" is not an answer: type a or 1 for Allow, r or 2 for Reject, s or 3 for Allow for this session, d or 4 for Deny with a reason (Ctrl+C or /reject rejects).`, a.hint)
	// Without Allow for this session, Deny with a reason is d/3.
	two := interactions.Interaction{Kind: interactions.KindToolApproval, Options: []interactions.Choice{{Label: interactions.DecisionDeny}, {Label: interactions.DecisionAllow}}}
	keys = approvalKeys(two)
	assert.Equal(t, act{kind: actSelect, index: 0}, parseApproval("3", keys))
	assert.Equal(t, act{kind: actSelect, index: 1}, parseApproval("a", keys))
	assert.Equal(t, act{kind: actReject}, parseApproval("2", keys))
	assert.Nil(t, approvalKeys(interactions.Interaction{Kind: interactions.KindToolApproval, Options: []interactions.Choice{{Label: "allow"}}}),
		"without a Deny the options do not fit an approval")
	assert.Nil(t, approvalKeys(interactions.Interaction{Kind: interactions.KindQuestion, Options: []interactions.Choice{{Label: "x"}}}))
}

func TestParseChoice(t *testing.T) {
	// Numbers pick (single) or toggle (multi).
	assert.Equal(t, act{kind: actSelect, index: 2}, parseChoice("3", 4, 0, false, true))
	assert.Equal(t, act{kind: actToggle, index: 0, indexes: []int{0}}, parseChoice("1", 3, 2, true, true))
	// Enter alone takes the pointer: an option, the Reject line, or confirms.
	assert.Equal(t, act{kind: actSelect, index: 1}, parseChoice("", 4, 1, false, true))
	assert.Equal(t, act{kind: actReject}, parseChoice("", 4, 4, false, false))
	assert.Equal(t, act{kind: actConfirm}, parseChoice("", 3, 0, true, true))
	assert.Equal(t, act{kind: actReject}, parseChoice("", 3, 3, true, true))
	// r and /reject reject; other commands go to the engine.
	assert.Equal(t, act{kind: actReject}, parseChoice("r", 4, 0, false, true))
	assert.Equal(t, act{kind: actReject}, parseChoice("R", 4, 0, false, false))
	assert.Equal(t, act{kind: actReject}, parseChoice("/reject", 4, 0, true, true))
	assert.Equal(t, act{kind: actCommand, text: "/stop"}, parseChoice("/stop", 4, 0, false, true))
	// A list of one is still a list.
	assert.Equal(t, act{kind: actSelect, index: 0}, parseChoice("1", 1, 0, false, true))

	for _, c := range []struct {
		in, hint    string
		n           int
		multi, free bool
	}{
		{"0", "0 is out of range: type a number from 1 to 4 (or ↑/↓ and Enter), r rejects.", 4, false, false},
		{"5", "5 is out of range: type a number from 1 to 4", 4, false, false},
		{"-1", "-1 is out of range", 4, false, true},
		{"2", "2 is out of range: type 1 (or ↑/↓ and Enter), r rejects.", 1, false, false},
		{"9", "9 is out of range: type a number from 1 to 3 (several: 1 3) to toggle it (or Space), Enter confirms, r rejects.", 3, true, false},
		{"7", `7 is out of range: type a number from 1 to 3 (or ↑/↓ and Enter), r rejects. Other text is your own answer ("in quotes" if it is a number or r).`, 3, false, true},
		{"abc", `"abc" is not a choice: type a number from 1 to 4`, 4, false, false},
		{"1.5", `"1.5" is not a choice`, 4, false, false},
		{strings.Repeat("x", 50), `"xxxxxxxxxxxxxxxxxxx…" is not a choice`, 2, false, false},
		{`""`, "Nothing between the quotes: type a number from 1 to 2", 2, false, true},
		{`"  "`, "Nothing between the quotes", 2, true, true},
	} {
		a := parseChoice(c.in, c.n, 0, c.multi, c.free)
		assert.Equal(t, actInvalid, a.kind, "input %q", c.in)
		assert.Contains(t, a.hint, c.hint, "input %q", c.in)
	}
}

// TestParseChoiceFreeText: at a question (free), text that is not a number,
// r or a /command is the person's own answer ("Other"); in quotes, a number
// or r is text too. A plan review (not free) takes no text.
func TestParseChoiceFreeText(t *testing.T) {
	for _, multi := range []bool{false, true} {
		for in, want := range map[string]string{
			"MySQL": "MySQL", "  use both ": "use both", "x": "x", "1.5": "1.5", "two": "two", "-": "-", "3a": "3a",
			`"2"`: "2", `"r"`: "r", `" 7 "`: "7", `"quoted" words`: `"quoted" words`, `"`: `"`,
		} {
			assert.Equal(t, act{kind: actText, text: want}, parseChoice(in, 3, 0, multi, true), "input %q multi=%v", in, multi)
		}
		for _, in := range []string{"MySQL", `"2"`} {
			assert.Equal(t, actInvalid, parseChoice(in, 3, 0, multi, false).kind, "input %q: a plan review takes no text", in)
		}
	}
	// A number in range still picks its option, r still rejects.
	assert.Equal(t, act{kind: actSelect, index: 1}, parseChoice("2", 3, 0, false, true))
	assert.Equal(t, act{kind: actReject}, parseChoice("r", 3, 0, false, true))
}

// TestParseChoiceSeveral: multi-select: several numbers toggle each once, in
// the order typed; "13" of 3 options can only mean 1 and 3.
func TestParseChoiceSeveral(t *testing.T) {
	toggles := func(idx ...int) act { return act{kind: actToggle, index: idx[0], indexes: idx} }
	for in, want := range map[string]act{
		"1 3": toggles(0, 2), "1,3": toggles(0, 2), "1, 3": toggles(0, 2), " 3 ,, 1 ": toggles(2, 0),
		"13": toggles(0, 2), "31": toggles(2, 0), "123": toggles(0, 1, 2), "1 1": toggles(0), "11": toggles(0),
		"12 3": toggles(0, 1, 2), "2\t3": toggles(1, 2),
	} {
		assert.Equal(t, want, parseChoice(in, 3, 0, true, true), "input %q", in)
	}
	for in, hint := range map[string]string{
		"14":  "14 is out of range", // 4 is no option of 3
		"1 4": "4 is out of range",
		"10":  "10 is out of range",
		"1 0": "0 is out of range",
		"-13": "-13 is out of range",
	} {
		a := parseChoice(in, 3, 0, true, true)
		assert.Equal(t, actInvalid, a.kind, "input %q", in)
		assert.Contains(t, a.hint, hint+": type a number from 1 to 3 (several: 1 3) to toggle it", "input %q", in)
	}
	// Ten options or more: 13 is option 13, or out of range; never split.
	assert.Equal(t, toggles(12), parseChoice("13", 14, 0, true, false))
	assert.Contains(t, parseChoice("13", 12, 0, true, false).hint, "13 is out of range")
	// Single-select takes one number.
	for _, in := range []string{"1 3", "1,3"} {
		a := parseChoice(in, 3, 0, false, true)
		assert.Equal(t, actInvalid, a.kind)
		assert.Contains(t, a.hint, `names 2 options, this takes one: type a number from 1 to 3`)
	}
	assert.Contains(t, parseChoice("13", 3, 0, false, true).hint, "13 is out of range", "single-select does not split")
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
	for _, s := range []string{"", "1", "r", "/reject", "a", "2", "10", "-3", "/stop now", " 4 ", "x", "99999999999999999999", "٣",
		"1 3", "1,3", "13", "31 2", `"2"`, `""`, "MySQL", "d", "s"} {
		f.Add(s, uint8(4), uint8(0), false, true)
		f.Add(s, uint8(2), uint8(1), true, true)
		f.Add(s, uint8(1), uint8(1), true, false)
	}
	f.Fuzz(func(t *testing.T, in string, n8, ptr8 uint8, multi, free bool) {
		n := int(n8%12) + 1
		ptr := int(ptr8) % (n + 1)
		check := func(a act, n int) {
			switch a.kind {
			case actSelect:
				require.GreaterOrEqual(t, a.index, 0)
				require.Less(t, a.index, n)
			case actToggle:
				require.NotEmpty(t, a.indexes)
				require.Equal(t, a.indexes[0], a.index)
				seen := map[int]bool{}
				for _, i := range a.indexes {
					require.GreaterOrEqual(t, i, 0)
					require.Less(t, i, n)
					require.False(t, seen[i], "each option is toggled once")
					seen[i] = true
				}
			case actInvalid:
				require.NotEmpty(t, a.hint, "a re-prompt says what is accepted")
			case actText:
				require.NotEmpty(t, a.text)
				require.Equal(t, strings.TrimSpace(a.text), a.text)
			case actCommand:
				require.True(t, strings.HasPrefix(a.text, "/"))
			}
		}
		s := strings.TrimSpace(in)
		c := parseChoice(in, n, ptr, multi, free)
		check(c, n)
		if multi {
			require.NotEqual(t, actSelect, c.kind)
		} else {
			require.NotEqual(t, actToggle, c.kind)
			require.NotEqual(t, actConfirm, c.kind)
		}
		if k, err := strconv.Atoi(s); err == nil && k >= 1 && k <= n {
			require.Equal(t, k-1, c.index, "a valid number picks that option")
		}
		if !free {
			require.NotEqual(t, actText, c.kind, "only a question takes text")
		} else if s != "" && !strings.HasPrefix(s, "/") && !strings.EqualFold(s, "r") && !numbers.MatchString(s) && !(len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"') {
			require.Equal(t, act{kind: actText, text: s}, c, "other text is the answer")
		}
		if multi && n <= 9 && s != "" && strings.Trim(s, "123456789"[:n]) == "" {
			// Digits naming options: each toggled once, in the order typed.
			var want []int
			for _, d := range s {
				if i := int(d - '1'); !slices.Contains(want, i) {
					want = append(want, i)
				}
			}
			if k, err := strconv.Atoi(s); err != nil || k > n {
				require.Equal(t, want, c.indexes, "input %q of %d options", s, n)
			}
		}
		a := parseApproval(in, approvalKeys(tool))
		require.NotEqual(t, actText, a.kind, "approval takes no free text")
		check(a, 3)
		if strings.EqualFold(s, "r") || s == "2" {
			require.Equal(t, actReject, a.kind, "r rejects a tool approval")
		}
		tx := parseText(in)
		check(tx, 0)
		if s == "" {
			require.Equal(t, actInvalid, tx.kind, "empty text re-prompts")
			require.NotEqual(t, actSelect, a.kind, "approval has no default")
		}
	})
}
