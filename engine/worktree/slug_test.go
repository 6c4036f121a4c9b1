package worktree_test

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/worktree"
)

// slugRE is what every slug looks like: safe in a branch name (no "..",
// "@{", leading "-" or ".", trailing ".lock", control characters, spaces,
// ~^:?*[\) and as a directory name.
var slugRE = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*-[0-9a-f]{8}$`)

func checkSlug(t *testing.T, chatID string) string {
	s := worktree.Slug(chatID)
	if !slugRE.MatchString(s) || len(s) > 49 {
		t.Fatalf("Slug(%q) = %q: not a safe branch component", chatID, s)
	}
	if worktree.Slug(chatID) != s {
		t.Fatalf("Slug(%q) is not stable", chatID)
	}
	return s
}

func TestSlugIsReadableAndDistinct(t *testing.T) {
	assert.Regexp(t, `^telegram-42-[0-9a-f]{8}$`, worktree.Slug("telegram:42"))
	assert.Regexp(t, `^slack-c0123-1700000000-000100-[0-9a-f]{8}$`, worktree.Slug("slack:C0123:1700000000.000100"))
	assert.Regexp(t, `^chat-[0-9a-f]{8}$`, worktree.Slug("::"))
	assert.NotEqual(t, worktree.Slug("tg:1"), worktree.Slug("tg-1"), "alike IDs differ by their hash")
	assert.NotEqual(t, worktree.Slug("Web:A"), worktree.Slug("web:a"))
}

// TestSlugsAreBranchNamesGitAccepts asks git itself.
func TestSlugsAreBranchNamesGitAccepts(t *testing.T) {
	for _, id := range []string{"telegram:-100123", "slack:C1:1.2", "web:..lock", "x@{y}", "-rf", ".hidden", "a/b//c", "ünïcödé 💥", strings.Repeat("z", 300), "", "HEAD"} {
		s := checkSlug(t, id)
		out, err := exec.Command("git", "check-ref-format", "--branch", worktree.BranchPrefix+s).CombinedOutput()
		require.NoError(t, err, "%q → %q: %s", id, s, out)
	}
}

func FuzzSlug(f *testing.F) {
	for _, s := range []string{"telegram:42", "slack:C0123:1700000000.000100", "web:abc", "term:local", "", "..", "-", "a..b.lock", "@{", "\x00\x7f", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, id string) { checkSlug(t, id) })
}

func TestParseIdentity(t *testing.T) {
	id, err := worktree.ParseIdentity("  Leash Bot <bot@example.com> ")
	require.NoError(t, err)
	assert.Equal(t, worktree.Identity{Name: "Leash Bot", Email: "bot@example.com"}, id)
	assert.Equal(t, "Leash Bot <bot@example.com>", id.String())

	for in, want := range map[string]string{
		"bot@example.com":    "has no <email>",
		"<bot@example.com>":  "has no name",
		"Bot <>":             "empty email",
		"Bot <a b@c>":        "may not contain <, > or spaces",
		"Bot <a<b@c>":        "may not contain <, > or spaces",
		"B>ot <a@c>":         "the name may not contain < or >",
		"Bot\x01 <a@c>":      "control or invalid character",
		"Bot <a@c> trailing": "has no <email>",
		"":                   "has no <email>",
	} {
		_, err := worktree.ParseIdentity(in)
		require.Error(t, err, in)
		assert.Contains(t, err.Error(), want, in)
		assert.Contains(t, err.Error(), `use "Name <email>"`, in)
	}
}

func FuzzParseIdentity(f *testing.F) {
	for _, s := range []string{"leashd <leashd@localhost>", "A B <a@b>", "<x>", "a <b> <c>", "a\n<b>", "x <\x00>", " <>", "é <ü@ö>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := worktree.ParseIdentity(s)
		if err != nil {
			return
		}
		if id.Name == "" || id.Email == "" || strings.ContainsAny(id.Name+id.Email, "<>\n") || strings.ContainsAny(id.Email, " ") {
			t.Fatalf("ParseIdentity(%q) = %+v", s, id)
		}
		for _, r := range id.Name + id.Email {
			if !unicode.IsPrint(r) {
				t.Fatalf("ParseIdentity(%q) kept %q", s, r)
			}
		}
		again, err := worktree.ParseIdentity(id.String())
		if err != nil || again != id {
			t.Fatalf("round trip of %q: %+v, %v", s, again, err)
		}
	})
}
