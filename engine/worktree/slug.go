package worktree

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// maxSlugPrefix bounds the readable part of a slug.
const maxSlugPrefix = 40

// Slug turns a chat ID into a name safe as a git branch component and a
// directory name: the chat ID lower-cased with every run of characters
// other than a-z and 0-9 replaced by "-" (at most 40 characters of it),
// then "-" and 8 hex digits of the chat ID's SHA-256, so that chat IDs that
// read alike (tg:1 and tg-1) still get different slugs.
func Slug(chatID string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(chatID) {
		if b.Len() >= maxSlugPrefix {
			break
		}
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	prefix := strings.TrimRight(b.String(), "-")
	if prefix == "" {
		prefix = "chat"
	}
	sum := sha256.Sum256([]byte(chatID))
	return prefix + "-" + hex.EncodeToString(sum[:4])
}

// ParseIdentity reads "Name <email>" (LEASHD_GIT_AUTHOR).
func ParseIdentity(s string) (Identity, error) {
	s = strings.TrimSpace(s)
	const accepted = `use "Name <email>", e.g. "leashd <leashd@example.com>"`
	lt := strings.IndexByte(s, '<')
	if lt < 0 || !strings.HasSuffix(s, ">") {
		return Identity{}, fmt.Errorf("%q has no <email>: %s", s, accepted)
	}
	name := strings.TrimSpace(s[:lt])
	email := s[lt+1 : len(s)-1]
	switch {
	case name == "":
		return Identity{}, fmt.Errorf("%q has no name before <email>: %s", s, accepted)
	case email == "":
		return Identity{}, fmt.Errorf("%q has an empty email: %s", s, accepted)
	case strings.ContainsAny(name, "<>"):
		return Identity{}, fmt.Errorf("%q: the name may not contain < or >: %s", s, accepted)
	case strings.ContainsAny(email, "<> "):
		return Identity{}, fmt.Errorf("%q: the email may not contain <, > or spaces: %s", s, accepted)
	}
	if err := printable(name + email); err != nil {
		return Identity{}, fmt.Errorf("%q: %w: %s", s, err, accepted)
	}
	return Identity{Name: name, Email: email}, nil
}

func printable(s string) error {
	for _, r := range s {
		if !unicode.IsPrint(r) || r == unicode.ReplacementChar {
			return errors.New("contains a control or invalid character")
		}
	}
	return nil
}

// String is "Name <email>".
func (id Identity) String() string { return id.Name + " <" + id.Email + ">" }
