package telegram

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/telegram/tgfake"
)

func TestMarkdownToHTML(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"heading", "# Plan\nDo it", "<b>Plan</b>\nDo it"},
		{"bullets", "- one\n* two\n  - nested", "• one\n• two\n  • nested"},
		{"numbered", "1. first\n2) second", "1. first\n2. second"},
		{"fence", "```go\nif a < b && c {\n}\n```\nafter", "<pre><code class=\"language-go\">if a &lt; b &amp;&amp; c {\n}</code></pre>\nafter"},
		{"unclosed fence", "```\nx <y>", "<pre><code>x &lt;y&gt;</code></pre>"},
		{"inline code", "run `rm -rf <dir>` now", "run <code>rm -rf &lt;dir&gt;</code> now"},
		{"bold italic", "**bold** and *it* and _it2_", "<b>bold</b> and <i>it</i> and <i>it2</i>"},
		{"snake case", "use snake_case_name here", "use snake_case_name here"},
		{"strike", "~~old~~ new", "<s>old</s> new"},
		{"link", "see [the docs](https://example.com/a?b=1&c=2)", `see <a href="https://example.com/a?b=1&amp;c=2">the docs</a>`},
		{"unsafe link", "[x](javascript:alert(1))", "[x](javascript:alert(1))"},
		{"escapes", `a < b > c & "d"`, "a &lt; b &gt; c &amp; &quot;d&quot;"},
		{"unbalanced stars", "2 * 3 = 6 and **open", "2 * 3 = 6 and **open"},
		{"html in text", "<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{"tasks", "- [ ] todo\n- [x] done", "☐ todo\n☑ done"},
		{"code in link text stays plain", "[`x`](https://a.b)", "<a href=\"https://a.b\">`x`</a>"},
		{"rule", "---", "——————"},
		{"quote", "> note", "▎note"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := MarkdownToHTML(c.in)
			assert.Equal(t, c.want, got)
			_, err := tgfake.ParseHTML(got)
			assert.NoError(t, err)
		})
	}
}

func TestSplitHTMLKeepsCodeBlocksValid(t *testing.T) {
	var md strings.Builder
	md.WriteString("# Big plan\n\n```sh\n")
	for i := range 400 {
		md.WriteString("echo line number " + strings.Repeat("x", i%30) + "\n")
	}
	md.WriteString("```\n\n**Done** with it\n")
	html := MarkdownToHTML(md.String())
	parts := SplitHTML(html, MaxMessage)
	require.Greater(t, len(parts), 2)
	var visible strings.Builder
	for i, p := range parts {
		assert.LessOrEqual(t, hlen(p), MaxMessage, "part %d", i)
		v, err := tgfake.ParseHTML(p)
		require.NoError(t, err, "part %d: %s", i, p)
		visible.WriteString(v)
		if i > 0 && i < len(parts)-1 {
			assert.True(t, strings.HasPrefix(p, "<pre><code class=\"language-sh\">"), "the code block is reopened in part %d", i)
		}
	}
	whole, err := tgfake.ParseHTML(html)
	require.NoError(t, err)
	assert.Equal(t, strings.ReplaceAll(whole, "\n", ""), strings.ReplaceAll(visible.String(), "\n", ""), "nothing is lost at the cuts")
}

func TestSplitHTMLLongLineAndEntities(t *testing.T) {
	line := strings.Repeat("a&amp;b&lt;ü😀", 1000) // one line, far over the limit
	parts := SplitHTML("<b>"+line+"</b>", 500)
	require.Greater(t, len(parts), 10)
	for _, p := range parts {
		assert.LessOrEqual(t, hlen(p), 500)
		_, err := tgfake.ParseHTML(p)
		require.NoError(t, err, p)
		assert.True(t, strings.HasPrefix(p, "<b>") && strings.HasSuffix(p, "</b>"))
	}
}

func TestSplitHTMLDropsEmptyParts(t *testing.T) {
	assert.Empty(t, SplitHTML("", MaxMessage))
	assert.Empty(t, SplitHTML("  \n ", MaxMessage))
	assert.Equal(t, []string{"hi"}, SplitHTML("hi", MaxMessage))
}

// FuzzMarkdownToHTML: whatever the agent writes, every part sent is valid
// Telegram HTML within the limit, and no visible text is lost.
func FuzzMarkdownToHTML(f *testing.F) {
	for _, s := range []string{
		"# h\n- a\n1. b\n```go\nx<y\n```\n`c` **b** *i* _u_ ~~s~~ [l](https://x.y)",
		"**a *b* c**", "```\nunclosed", "[a](https://b \"t\")", "&amp; &#39; <b>", "_a_b_", "*", "``` ```",
		"\\*not\\* `a``b`", "~~~py\n~~~", "> q\n---\n- [x] t", "日本語 **太字** 😀" + strings.Repeat("x", 300),
	} {
		f.Add(s, 300)
	}
	f.Fuzz(func(t *testing.T, md string, limit int) {
		limit = 200 + abs(limit)%4000
		html := MarkdownToHTML(md)
		whole, err := tgfake.ParseHTML(html)
		if err != nil {
			t.Fatalf("invalid HTML %q from %q: %v", html, md, err)
		}
		if !utf8.ValidString(html) {
			t.Fatalf("invalid UTF-8 from %q", md)
		}
		var visible strings.Builder
		for _, p := range SplitHTML(html, limit) {
			if hlen(p) > limit {
				t.Fatalf("part longer than %d: %d", limit, hlen(p))
			}
			v, err := tgfake.ParseHTML(p)
			if err != nil {
				t.Fatalf("invalid part %q: %v", p, err)
			}
			if strings.TrimSpace(v) == "" {
				t.Fatalf("empty part %q", p)
			}
			visible.WriteString(v)
		}
		strip := func(s string) string { return strings.Join(strings.Fields(s), "") }
		huge := false
		for _, tk := range tokenize(html) {
			huge = huge || (tk.kind == tokOpen && hlen(tk.s) > limit/4)
		}
		if huge && !subsequence(strip(whole), strip(visible.String())) || !huge && strip(whole) != strip(visible.String()) {
			t.Fatalf("text lost in splitting (huge tags: %v):\n%q\n%q", huge, strip(whole), strip(visible.String()))
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n {
			return 0
		}
		return -n
	}
	return n
}

// FuzzParseKey: callback data from anyone decodes to a key that encodes
// back to the same data, or is refused.
func FuzzParseKey(f *testing.F) {
	for _, s := range []string{"abcdEFGH:0", "abcdEFGH:p3", "abcdEFGH:t2", "abcdEFGH:done", ":1", "a:", "a:01", "a:-1", "a:p", "x:y:z", "a:100"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, err := parseKey(s)
		if err != nil {
			return
		}
		if k.String() != s {
			t.Fatalf("%q decoded to %+v which encodes as %q", s, k, k.String())
		}
		if len(s) > 64 {
			t.Fatalf("accepted %d bytes", len(s))
		}
	})
}

func TestKeysStayShort(t *testing.T) {
	for _, k := range []cbKey{{ID: strings.Repeat("A", maxKeyIDLen), Kind: 'q', Index: 99}, {ID: strings.Repeat("A", maxKeyIDLen), Done: true}} {
		assert.LessOrEqual(t, len(k.String()), 64)
		back, err := parseKey(k.String())
		require.NoError(t, err)
		assert.Equal(t, k, back)
	}
	_, err := parseKey("Postgres (the long label)")
	assert.ErrorIs(t, err, errBadKey)
}

// FuzzSplitHTML: any valid Telegram HTML splits into valid parts within
// the limit that keep every visible character.
func FuzzSplitHTML(f *testing.F) {
	for _, s := range []string{
		"<b>bold</b> and <i>it</i>\n<pre><code class=\"language-go\">x &lt; y\nz</code></pre>",
		"<a href=\"https://x.y/?a=1&amp;b=2\">link text</a>\n" + strings.Repeat("word ", 200),
		"&#128512;&#x1F600;😀 " + strings.Repeat("ü", 300), "<s><u>nested</u></s>", "plain\n\n\nlines",
		"<blockquote>quote\nmore</blockquote>", "<span class=\"tg-spoiler\">hidden</span>",
	} {
		f.Add(s, 50)
	}
	f.Fuzz(func(t *testing.T, html string, limit int) {
		whole, err := tgfake.ParseHTML(html)
		if err != nil {
			return // only valid HTML is ever split
		}
		limit = 64 + abs(limit)%4000
		var visible strings.Builder
		for _, p := range SplitHTML(html, limit) {
			if hlen(p) > limit {
				t.Fatalf("part longer than %d: %d: %q", limit, hlen(p), p)
			}
			v, err := tgfake.ParseHTML(p)
			if err != nil {
				t.Fatalf("invalid part %q of %q: %v", p, html, err)
			}
			visible.WriteString(v)
		}
		strip := func(s string) string { return strings.Join(strings.Fields(s), "") }
		huge := false
		for _, tk := range tokenize(html) {
			huge = huge || (tk.kind == tokOpen && hlen(tk.s) > limit/4)
		}
		switch {
		case !huge && strip(whole) != strip(visible.String()):
			t.Fatalf("text lost splitting %q at %d:\n%q\n%q", html, limit, strip(whole), strip(visible.String()))
		case huge && !subsequence(strip(whole), strip(visible.String())):
			// a dropped link's URL is added after its text
			t.Fatalf("text lost splitting %q at %d (huge tags dropped):\n%q\n%q", html, limit, strip(whole), strip(visible.String()))
		}
	})
}

// subsequence reports whether every rune of a appears in b, in order.
func subsequence(a, b string) bool {
	rb := []rune(b)
	j := 0
	for _, r := range a {
		for j < len(rb) && rb[j] != r {
			j++
		}
		if j == len(rb) {
			return false
		}
		j++
	}
	return true
}

// A link whose URL alone is longer than a message cannot be reopened in
// every part: those parts go out as plain text, and nothing is lost.
func TestSplitHTMLHugeLinkFallsBackToPlainText(t *testing.T) {
	md := "see [the report](https://example.com/?q=" + strings.Repeat("a", 5000) + ") " + strings.Repeat("x", 20)
	html := MarkdownToHTML(md)
	require.Contains(t, html, "<a href=")
	parts := SplitHTML(html, MaxMessage)
	require.NotEmpty(t, parts)
	var visible strings.Builder
	for _, p := range parts {
		assert.LessOrEqual(t, hlen(p), MaxMessage)
		v, err := tgfake.ParseHTML(p)
		require.NoError(t, err)
		visible.WriteString(v)
	}
	assert.Equal(t, "see the report (https://example.com/?q="+strings.Repeat("a", 5000)+") "+strings.Repeat("x", 20), visible.String(),
		"the link's text stays and its URL follows in parentheses")
	assert.Len(t, parts, 2)
	// The regression the fuzzer found: a code block's tags longer than the limit.
	for _, p := range SplitHTML(`<pre><code class="language-00000000000000000000000000000">&lt;</code></pre>`, 74) {
		assert.LessOrEqual(t, hlen(p), 74)
		_, err := tgfake.ParseHTML(p)
		assert.NoError(t, err)
	}
}
