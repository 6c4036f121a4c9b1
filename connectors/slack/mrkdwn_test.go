package slack

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestMrkdwn(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text", "plain text"},
		{"**bold** and *italic* and _also_", "*bold* and _italic_ and _also_"},
		{"__bold__ ~~gone~~", "*bold* ~gone~"},
		{"snake_case_name stays", "snake_case_name stays"},
		{"# Title\n## Sub **x**", "*Title*\n*Sub x*"},
		{"- one\n* two\n  + three", "• one\n• two\n  • three"},
		{"1. first\n2. second", "1. first\n2. second"},
		{"a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"<!channel> <@U123> hi", "&lt;!channel&gt; &lt;@U123&gt; hi"},
		{"see [docs](https://x.test/a?b=1&c=2)", "see <https://x.test/a?b=1&amp;c=2|docs>"},
		{"[evil](javascript:alert(1)) ok", "evil (javascript:alert(1)) ok"},
		{"[a|b](https://x.test)", "<https://x.test|a¦b>"},
		{"<https://x.test>", "<https://x.test>"},
		{"use `a <b> *c*` now", "use `a &lt;b&gt; *c*` now"},
		{"```go\nif a < b {\n**x**\n}\n```", "```\nif a &lt; b {\n**x**\n}\n```"},
		{"```\nunclosed", "```\nunclosed\n```"},
		{"> quoted **x**", "> quoted *x*"},
		{"---", "──────────"},
		{`\*not italic\*`, "*not italic*"},
		{"2 * 3 * 4", "2 * 3 * 4"},
		{"", ""},
	} {
		assert.Equal(t, tc.want, Mrkdwn(tc.in), tc.in)
	}
}

func TestSplitMarkdownReopensFences(t *testing.T) {
	md := "intro\n```\n" + strings.Repeat("code line <x>\n", 400) + "```\nafter"
	parts := splitMarkdown(md, 1000)
	assert.Greater(t, len(parts), 3)
	for i, p := range parts {
		out := Mrkdwn(p)
		assert.LessOrEqual(t, utf8.RuneCountInString(out), 1000, "part %d", i)
		assert.Equal(t, 0, strings.Count(out, "```")%2, "part %d has balanced fences: %q", i, out)
	}
	assert.Contains(t, Mrkdwn(parts[len(parts)-1]), "after")
	// Nothing lost: every code line is somewhere.
	total := 0
	for _, p := range parts {
		total += strings.Count(p, "code line <x>")
	}
	assert.Equal(t, 400, total)
}

var linkRe = regexp.MustCompile(`<(https?://|mailto:)[^|<>\s]*(\|[^<>]*)?>`)

// FuzzMrkdwn: whatever the agent writes, conversion never panics, keeps
// valid UTF-8 valid, and leaves no raw < or > except the links it made and
// line-leading quote marks: agent text can never ping @channel or anyone.
func FuzzMrkdwn(f *testing.F) {
	for _, s := range []string{
		"**bold** *it* _it_ ~~s~~ `code`", "# H\n- a\n> q", "[t](https://x)", "[t](javascript:x)",
		"<!channel> <@U1> <https://x|y>", "```go\nx < y\n```", "```\nopen", "***", "[[a](https://b)](https://c)",
		"`` a ` b ``", "\\*x\\*", "**a *b* c**", "_a_b_", "~~~~", "[x](https://a b)", "<mailto:a@b>",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Mrkdwn(s)
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("valid input %q gave invalid UTF-8 %q", s, out)
		}
		rest := linkRe.ReplaceAllString(out, "")
		var lines []string
		for _, l := range strings.Split(rest, "\n") {
			lines = append(lines, strings.TrimPrefix(l, "> "))
		}
		rest = strings.Join(lines, "\n")
		if strings.ContainsAny(rest, "<>") {
			t.Fatalf("raw < or > left in %q (from %q)", out, s)
		}
		if Mrkdwn(s) != out {
			t.Fatal("not deterministic")
		}
	})
}

func BenchmarkMrkdwnPathological(b *testing.B) {
	line := strings.Repeat("_a ", 30000) + strings.Repeat("[x", 10000) + strings.Repeat("`", 5000)
	b.SetBytes(int64(len(line)))
	for b.Loop() {
		Mrkdwn(line)
	}
}
