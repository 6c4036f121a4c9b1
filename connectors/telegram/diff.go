package telegram

// diffHTML shows a file change as a unified diff, highlighted as one and
// folded in an expandable quote so the buttons stay in reach. It is shown
// whole, as a command is (a person must see all of what they allow): a
// long one continues over the next messages, splitHTML reopening the
// quote, and the buttons go under its end.
func diffHTML(diff string) string {
	return `<blockquote expandable><pre><code class="language-diff">` + escape(diff) + "</code></pre></blockquote>"
}
