package config

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitCommandLine(t *testing.T) {
	ok := []struct {
		in   string
		want []string
	}{
		{"gemini --acp", []string{"gemini", "--acp"}},
		{"  opencode   acp ", []string{"opencode", "acp"}},
		{`npx -y '@agentclientprotocol/claude-agent-acp@0.101.0'`, []string{"npx", "-y", "@agentclientprotocol/claude-agent-acp@0.101.0"}},
		{`"/opt/my agent/bin/agent" --flag="a b"`, []string{"/opt/my agent/bin/agent", "--flag=a b"}},
		{`a\ b "c\"d" 'e\f' ''`, []string{"a b", `c"d`, `e\f`, ""}},
		{"codex-acp -c 'model=\"o3\"'", []string{"codex-acp", "-c", `model="o3"`}},
		{"agent \\\n --x", []string{"agent", "--x"}},
		{`x '|' "&&" \;`, []string{"x", "|", "&&", ";"}},
	}
	for _, c := range ok {
		got, err := SplitCommandLine(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("SplitCommandLine(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	bad := []struct{ in, why string }{
		{"", "no command"},
		{"   ", "no command"},
		{"gemini 'acp", "unterminated single quote"},
		{`gemini "acp`, "unterminated double quote"},
		{`gemini \`, "lone backslash"},
		{"gemini --acp | tee log", `'|' at character 14 needs a shell`},
		{"gemini && x", `'&'`},
		{"agent $HOME", `'$'`},
		{`agent "$HOME"`, `'$' inside double quotes`},
		{"agent `id`", "'`'"},
	}
	for _, c := range bad {
		got, err := SplitCommandLine(c.in)
		if err == nil || !strings.Contains(err.Error(), c.why) {
			t.Errorf("SplitCommandLine(%q) = %q, %v; want an error containing %q", c.in, got, err, c.why)
		}
	}
}

// FuzzSplitCommandLine: never panics; a line that splits gives at least
// one word, and quoting each word again in single quotes splits back to the same
// words.
func FuzzSplitCommandLine(f *testing.F) {
	for _, s := range []string{"gemini --acp", `"a b" 'c' d\ e`, "x '|'", "a\\\nb", `"\$"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := SplitCommandLine(s)
		if err != nil {
			return
		}
		if len(words) == 0 {
			t.Fatalf("%q: no words and no error", s)
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		again, err := SplitCommandLine(strings.Join(quoted, " "))
		if err != nil || !slices.Equal(again, words) {
			t.Fatalf("%q: words %q re-quoted split to %q, %v", s, words, again, err)
		}
	})
}
