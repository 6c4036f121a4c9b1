package config_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
)

const tokA, tokB = "a1b2c3d4e5f6a7b8c9d0", "f0e1d2c3b4a5968778695a4b"

func TestParseAPITokensReadsEntriesAndScopes(t *testing.T) {
	toks, err := config.ParseAPITokens("ci:" + tokA + ":ask=slack:C123,ask=web:deploy-*\n# a comment\nops:" + tokB + ":ask=*,answer")
	require.NoError(t, err)
	require.Len(t, toks, 2)
	assert.Equal(t, config.APIToken{Name: "ci", Token: tokA, Chats: []string{"slack:C123", "web:deploy-*"}}, toks[0])
	assert.True(t, toks[0].MayAsk("slack:C123"))
	assert.True(t, toks[0].MayAsk("web:deploy-prod"))
	assert.False(t, toks[0].MayAsk("slack:C1234"), "no pattern: the whole chat")
	assert.False(t, toks[0].MayAsk("telegram:42"))
	assert.True(t, toks[1].Answer)
	assert.True(t, toks[1].MayAsk("telegram:42"))
}

func TestParseAPITokensRefusesBadEntriesNamingThemNotTheirTokens(t *testing.T) {
	for _, tc := range []struct{ value, want string }{
		{"ci:" + tokA, "entry 1 is not name:token:scope"},
		{tokA, "entry 1 is not name:token:scope"},
		{"ci:short:ask=x", "entry 1 (ci): the token is weak"},
		{"ci:" + tokA + ":answer", "the scope names no chat"},
		{"ci:" + tokA + ":ask=x,write", `the scope item "write" is not ask=CHAT or answer`},
		{"c/i:" + tokA + ":ask=x", "entry 1 has a bad name"},
		{"web:" + tokA + ":ask=x", "the name web is the page's"},
		{"ci:" + tokA + ":ask=x ci:" + tokB + ":ask=y", `entry 2: the name "ci" is given twice`},
		{"ci:" + tokA + ":ask=x cd:" + tokA + ":ask=y", "entry 2 (cd) has the same token as ci"},
	} {
		_, err := config.ParseAPITokens(tc.value)
		require.Error(t, err, tc.value)
		assert.Contains(t, err.Error(), tc.want)
		assert.NotContains(t, err.Error(), tokA, "the token is never shown")
		assert.NotContains(t, err.Error(), tokB)
	}
}

func TestParseAPITokensReadsAPrivateFileOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	require.NoError(t, os.WriteFile(path, []byte("ci:"+tokA+":ask=web:ci\n"), 0o644))
	_, err := config.ParseAPITokens("@" + path)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "is open to other users (mode 0644)")
	require.NoError(t, os.Chmod(path, 0o600))
	toks, err := config.ParseAPITokens("@" + path)
	require.NoError(t, err)
	assert.Equal(t, []string{"web:ci"}, toks[0].Chats)
}

// FuzzParseAPITokens: every value either parses into tokens whose names
// are valid, whose tokens are strong and whose scopes name a chat, or is
// refused with a message that never holds a token of the value.
func FuzzParseAPITokens(f *testing.F) {
	for _, s := range []string{
		"ci:" + tokA + ":ask=slack:C123", "ci:" + tokA + ":ask=*,answer;ops:" + tokB + ":ask=web:*",
		"x", "a:b:c", "::", "ci:" + tokA + ":", "ci:" + tokA + ":ask=", "# only\n\n", "@", "ci:" + tokA + ":ask=a*b*c",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if strings.HasPrefix(strings.TrimSpace(v), "@") {
			t.Skip("a file name")
		}
		toks, err := config.ParseAPITokens(v)
		if err != nil {
			for _, e := range strings.Fields(v) {
				if _, rest, ok := strings.Cut(e, ":"); ok {
					if tok, _, ok := strings.Cut(rest, ":"); ok && len(tok) >= 16 && config.WeakSecret(tok) == "" {
						if strings.Contains(err.Error(), tok) {
							t.Fatalf("the error shows a token: %v", err)
						}
					}
				}
			}
			return
		}
		for _, tk := range toks {
			if tk.Name == "" || config.WeakSecret(tk.Token) != "" || len(tk.Chats) == 0 || strings.Contains(tk.Token, ":") {
				t.Fatalf("accepted a bad entry: %+v", tk)
			}
			for _, c := range tk.Chats {
				if !strings.Contains(c, "*") && !tk.MayAsk(c) {
					t.Fatalf("%q does not match itself", c)
				}
			}
		}
	})
}

func FuzzMatchChat(f *testing.F) {
	f.Add("web:*", "web:deploy")
	f.Add("a*b*c", "aXbYc")
	f.Add("*", "")
	f.Fuzz(func(t *testing.T, pattern, chat string) {
		got := config.MatchChat(pattern, chat)
		if !strings.Contains(pattern, "*") && got != (pattern == chat) {
			t.Fatalf("%q vs %q: %v", pattern, chat, got)
		}
		if strings.Trim(pattern, "*") == "" && pattern != "" && !got {
			t.Fatalf("%q must match %q", pattern, chat)
		}
	})
}
