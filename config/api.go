package config

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"unicode"
)

// API is what programs may do through leashd's API and /mcp (issue #30):
// their own credentials, how fast each may post, and how many requests
// programs may leave pending. Its variables are LEASHD_API_* (the section
// "api", APISection).
type API struct {
	Tokens            string  `desc:"Scoped credentials for programs, besides the page's token (LEASHD_WEB_TOKEN, which may do everything): entries name:token:scope separated by newlines, spaces or semicolons, or @/path/to/file holding them (one a line, # comments; mode 0600, like the state directory). scope is comma-separated: ask=CHAT (the chats it may ask in; * matches any run of characters, e.g. ask=slack:C123,ask=web:deploy-*) and answer (it may also list, watch and answer what is pending in those chats). Without answer a token asks, reads and withdraws only its own requests. The audit log names the token's name as who asked, answered or withdrew"`
	Rate              float64 `default:"20" desc:"POST requests per second each credential may make on average (the page's token and each of LEASHD_API_TOKENS alone); more are refused with 429 and Retry-After; 0 = no limit"`
	Burst             int     `default:"100" min:"1" max:"1000000" desc:"POST requests a credential may make at once before LEASHD_API_RATE paces it"`
	MaxPendingPerChat int     `split_words:"true" default:"100" min:"1" max:"1000000" desc:"Requests from programs (the API, leashd ask, /mcp) pending at once in one chat; more are refused with 429 until some are answered (agents' own requests are bounded by their turns and never refused)"`
	MaxPending        int     `split_words:"true" default:"1000" min:"1" max:"10000000" desc:"Requests from programs pending at once in all chats; more are refused with 503 until some are answered"`
}

// APISection is how the API's settings are read: LEASHD_API_*.
func APISection(a *API) Section { return Section{Name: "api", Settings: a} }

// APIToken is one entry of LEASHD_API_TOKENS.
type APIToken struct {
	Name  string
	Token string
	// Chats are the chat patterns it may ask in (* matches any run of
	// characters).
	Chats []string
	// Answer: it may also list, watch and answer what is pending in
	// Chats, as the page does.
	Answer bool
}

// MayAsk reports whether the token may ask in chat.
func (t APIToken) MayAsk(chat string) bool {
	for _, g := range t.Chats {
		if MatchChat(g, chat) {
			return true
		}
	}
	return false
}

// Scope is the token's scope as written (without the token), for messages.
func (t APIToken) Scope() string {
	var parts []string
	for _, c := range t.Chats {
		parts = append(parts, "ask="+c)
	}
	if t.Answer {
		parts = append(parts, "answer")
	}
	return strings.Join(parts, ",")
}

// MatchChat reports whether chat matches pattern, where * matches any run
// of characters (chat IDs hold colons and slashes, so path.Match's rules
// would not do).
func MatchChat(pattern, chat string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == chat
	}
	if !strings.HasPrefix(chat, parts[0]) {
		return false
	}
	rest := chat[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return len(rest) >= len(last) && strings.HasSuffix(rest, last)
}

// APITokensAccepted says what LEASHD_API_TOKENS accepts.
const APITokensAccepted = "entries name:token:scope (name: letters, digits, - or _; token: " +
	"16 or more random characters without spaces or colons; scope: ask=CHAT[,ask=CHAT…][,answer]) " +
	"separated by newlines, spaces or semicolons, or @/path/to/file holding them"

// ParseAPITokens reads LEASHD_API_TOKENS: the entries themselves, or
// @path to a file of them (which only leashd's user may read). Every bad
// entry is reported, named by its position and name, never by its token.
func ParseAPITokens(value string) ([]APIToken, error) {
	src := "LEASHD_API_TOKENS"
	if path, ok := strings.CutPrefix(strings.TrimSpace(value), "@"); ok {
		b, err := readPrivate(path)
		if err != nil {
			return nil, err
		}
		value, src = string(b), "LEASHD_API_TOKENS file "+path
	}
	var out []APIToken
	var errs []error
	seen := map[string]bool{}
	for i, e := range splitEntries(value) {
		t, err := parseAPIToken(e)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: entry %d %s; accepted: %s", src, i+1, err, APITokensAccepted))
			continue
		case seen[t.Name]:
			errs = append(errs, fmt.Errorf("%s: entry %d: the name %q is given twice; each token needs its own name (the audit log shows it)", src, i+1, t.Name))
			continue
		}
		for _, o := range out {
			if o.Token == t.Token {
				errs = append(errs, fmt.Errorf("%s: entry %d (%s) has the same token as %s; give each its own", src, i+1, t.Name, o.Name))
			}
		}
		seen[t.Name] = true
		out = append(out, t)
	}
	return out, errors.Join(errs...)
}

// splitEntries splits the value into entries: lines, words, or
// semicolon-separated parts; # starts a comment to the end of its line.
func splitEntries(value string) []string {
	var out []string
	for _, line := range strings.Split(value, "\n") {
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		out = append(out, strings.FieldsFunc(line, func(r rune) bool { return r == ';' || unicode.IsSpace(r) })...)
	}
	return out
}

// parseAPIToken reads one name:token:scope entry; the error never holds
// the token.
func parseAPIToken(e string) (APIToken, error) {
	name, rest, ok1 := strings.Cut(e, ":")
	tok, scope, ok2 := strings.Cut(rest, ":")
	// A malformed entry may be a bare token pasted alone: none of it is
	// shown.
	if !ok1 || !ok2 {
		return APIToken{}, errors.New("is not name:token:scope (it has fewer than two colons)")
	}
	if !validTokenName(name) {
		return APIToken{}, errors.New("has a bad name: it must be 1 to 40 letters, digits, - or _")
	}
	if name == "web" {
		return APIToken{}, fmt.Errorf("(%s): the name web is the page's (LEASHD_WEB_TOKEN); choose another", name)
	}
	if why := WeakSecret(tok); why != "" {
		return APIToken{}, fmt.Errorf("(%s): the token is weak (%s): use %d or more %s", name, why, MinSecretLength, WeakSecretAdvice)
	}
	t := APIToken{Name: name, Token: tok}
	if err := t.parseScope(scope); err != nil {
		return APIToken{}, fmt.Errorf("(%s): %w", name, err)
	}
	return t, nil
}

// parseScope reads ask=CHAT and answer items, comma-separated.
func (t *APIToken) parseScope(scope string) error {
	for _, item := range strings.Split(scope, ",") {
		switch chat, isAsk := strings.CutPrefix(item, "ask="); {
		case item == "answer":
			t.Answer = true
		case isAsk && chat != "" && len(chat) <= 200:
			t.Chats = append(t.Chats, chat)
		case isAsk:
			return errors.New("ask= needs a chat of 1 to 200 characters, e.g. ask=slack:C123 or ask=web:deploy-*")
		default:
			return fmt.Errorf("the scope item %q is not ask=CHAT or answer", short(item))
		}
	}
	if len(t.Chats) == 0 {
		return errors.New("the scope names no chat: give ask=CHAT (ask=* for every chat)")
	}
	return nil
}

func validTokenName(s string) bool {
	if s == "" || len(s) > 40 {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

func short(s string) string {
	r := []rune(s)
	if len(r) > 8 {
		return string(r[:8])
	}
	return s
}

// readPrivate reads a file only leashd's user may read or write.
func readPrivate(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("LEASHD_API_TOKENS file %s: %w (give @/path/to/file of name:token:scope lines)", path, err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("LEASHD_API_TOKENS file %s is open to other users (mode %04o): whoever reads it can ask as those programs. Fix: chmod 600 %s",
			path, fi.Mode().Perm(), shellQuote(path))
	}
	return os.ReadFile(path)
}

// Validate checks the numbers and every entry of LEASHD_API_TOKENS, and
// returns the tokens; every problem is returned at once.
func (a API) Validate() ([]APIToken, error) {
	errs := []error{APISection(&a).CheckRanges()}
	if a.Rate < 0 || a.Rate > 1e6 {
		errs = append(errs, fmt.Errorf("LEASHD_API_RATE=%v is invalid: accepted: POST requests per second from 0 (no limit) to 1000000, e.g. 20 or 0.5", a.Rate))
	}
	toks, err := ParseAPITokens(a.Tokens)
	return toks, errors.Join(append(errs, err)...)
}

// Secrets are the tokens of LEASHD_API_TOKENS (when it is valid), which
// the log never shows.
func (a API) Secrets() []string {
	toks, _ := ParseAPITokens(a.Tokens)
	out := make([]string, 0, len(toks))
	for _, t := range toks {
		out = append(out, t.Token)
	}
	return out
}
