package discord

import (
	"strings"
	"unicode/utf8"

	"github.com/bwmarrin/discordgo"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// Discord's limits.
const (
	maxContent = 2000 // characters of a message's content
	maxButton  = 80   // characters of a button's label
	maxOption  = 100  // characters of a select option's label, value, description
	maxRowSize = 5    // buttons per action row
	maxRows    = 5    // action rows per message
)

// toDiscord renders the agent's Markdown in Discord's dialect, which is
// Markdown already for bold, italics, code, lists, quotes, links and
// headings #, ## and ###: deeper headings (which Discord shows as plain
// "####") become bold lines. Code blocks are left as they are. Mentions
// in it never ping anyone: every message leashd sends allows none
// (noMentions).
func toDiscord(md string) string {
	lines := strings.Split(md, "\n")
	fence := false
	for i, l := range lines {
		t := strings.TrimLeft(l, " \t")
		if strings.HasPrefix(t, "```") {
			fence = !fence
			continue
		}
		if fence {
			continue
		}
		if n := headingLevel(t); n > 3 {
			if h := strings.TrimSpace(strings.ReplaceAll(t[n:], "*", "")); h != "" {
				lines[i] = "**" + h + "**"
			}
		}
	}
	return strings.Join(lines, "\n")
}

// headingLevel is the number of leading #s of a Markdown heading line
// (followed by a space), or 0.
func headingLevel(line string) int {
	n := 0
	for n < len(line) && line[n] == '#' {
		n++
	}
	if n == 0 || n > 6 || n >= len(line) || line[n] != ' ' {
		return 0
	}
	return n
}

// noMentions allows no mention to ping: the agent's text (or a label) may
// say @everyone.
func noMentions() *discordgo.MessageAllowedMentions {
	return &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}}
}

// splitMarkdown cuts Markdown into parts of at most max characters once
// rendered, at line ends where it can, closing a code fence at the end of
// a part and reopening it in the next.
func splitMarkdown(md string, max int) []string {
	parts := connectors.SplitLines(md, max-8)
	open := false
	for i, p := range parts {
		if open {
			p = "```\n" + p
		}
		open = false
		for _, line := range strings.Split(p, "\n") {
			if strings.HasPrefix(strings.TrimLeft(line, " \t"), "```") {
				open = !open
			}
		}
		if open && i < len(parts)-1 {
			p += "\n```"
		}
		parts[i] = p
	}
	var out []string
	for _, p := range parts {
		if utf8.RuneCountInString(toDiscord(p)) > max && max > 200 {
			out = append(out, splitMarkdown(p, max/2)...)
			continue
		}
		out = append(out, p)
	}
	return out
}

// codeBlock shows text verbatim in a code block; a run of three backticks
// inside would end it early, so it is broken with a zero-width space.
func codeBlock(text string) string { return langBlock("", text) }

// langBlock is a code block Discord colours as lang ("diff" shows removed
// lines red and added ones green).
func langBlock(lang, text string) string {
	t := strings.ReplaceAll(text, "```", "`\u200b``")
	return "```" + lang + "\n" + t + "\n```"
}

// toolBlock is a tool approval's request as a code block: a file change's
// diff coloured as one.
func toolBlock(it interactions.Interaction, code string) string {
	if it.Diff != "" && strings.Contains(it.Diff, code) {
		return langBlock("diff", code)
	}
	return codeBlock(code)
}

// truncate cuts s to max characters with "…".
func truncate(s string, max int) string { return connectors.Truncate(s, max) }

// plain is one line of text safe inside ** **: no asterisks, no line
// breaks.
func plain(s string, max int) string {
	s = strings.Join(strings.Fields(strings.ReplaceAll(s, "*", "")), " ")
	return truncate(s, max)
}
