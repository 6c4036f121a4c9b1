package config

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MinSecretLength is the fewest characters a web token (on a non-loopback
// address) or a Telegram webhook secret may have.
const MinSecretLength = 16

// WeakSecret says why s is too weak to guard something the network can
// reach, or returns "" when it is strong enough: at least MinSecretLength
// characters, not one character repeated, and no space or control
// character at either end or control character inside (an HTTP header
// cannot carry those faithfully).
func WeakSecret(s string) string {
	n := utf8.RuneCountInString(s)
	if n < MinSecretLength {
		if n == 1 {
			return "it is 1 character long"
		}
		return fmt.Sprintf("it is %d characters long", n)
	}
	first, _ := utf8.DecodeRuneInString(s)
	if strings.Trim(s, string(first)) == "" {
		return "it is one character repeated"
	}
	if strings.TrimSpace(s) != s || strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return "it begins or ends with a space or holds a control character"
	}
	return ""
}

// WeakSecretAdvice ends a weak-secret message with how to make a good one.
const WeakSecretAdvice = "random characters (not one repeated), e.g. from `openssl rand -hex 32`"
