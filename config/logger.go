package config

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Redacted replaces every secret in log output.
const Redacted = "[REDACTED]"

// NewLogger returns the logger leashd writes to w: text or JSON
// (LEASHD_LOG_FORMAT), at the level of LEASHD_LOG_LEVEL, with every one of
// secrets (the chat apps' tokens, signing and webhook secrets) replaced by [REDACTED]
// wherever it appears: the message, attribute keys and values, groups,
// errors and anything formatted with fmt.
func NewLogger(cfg Config, w io.Writer, secrets ...string) (*slog.Logger, error) {
	level, err := ParseLogLevel(cfg.LogLevel)
	if err != nil {
		return nil, err
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	switch strings.ToLower(cfg.LogFormat) {
	case "text", "":
		h = slog.NewTextHandler(w, opts)
	case "json":
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("%s_LOG_FORMAT=%q is invalid: accepted: text, json", Prefix, cfg.LogFormat)
	}
	return slog.New(NewRedactingHandler(h, secrets)), nil
}

// ParseLogLevel reads a LEASHD_LOG_LEVEL value: debug, info, warn (or
// warning) or error, in any case; empty is info.
func ParseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "info", "":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("%s_LOG_LEVEL=%q is invalid: accepted: debug, info, warn, error", Prefix, s)
}

// RedactingHandler wraps a slog.Handler and replaces every secret with
// [REDACTED] before the wrapped handler sees the record. Use
// NewRedactingHandler.
type RedactingHandler struct {
	next    slog.Handler
	secrets []pattern // with their escaped forms, longest first
}

// pattern is one form of a secret and where it is replaced.
type pattern struct {
	s    string
	mode matchMode
}

type matchMode int

const (
	// anywhere: a strong secret (see WeakSecret) is replaced wherever it
	// appears, also inside a word such as the URL path /bot<token>/getMe:
	// 16 or more varied characters do not occur in other text by chance.
	anywhere matchMode = iota
	// asWord: a weak secret (possible on a loopback address) is replaced
	// only where it stands as a whole token, not next to a letter, digit,
	// '_' or '-': replacing the token "a" inside every word would mangle
	// every line and, by what it left, reveal the token.
	asWord
	// whole: a weak secret without a letter or digit (" ", "--") cannot
	// be told apart from punctuation; it is replaced only where it is the
	// whole message, key or value.
	whole
)

// NewRedactingHandler returns next wrapped so that none of secrets (nor
// their URL-escaped or JSON-escaped forms) reaches it. Empty secrets are
// ignored. A strong secret (WeakSecret returns "") that contains no '[' or
// ']' and is not part of "REDACTED" never appears in the output; a weak one
// is replaced only where it stands as a whole token, so the rest of the
// text stays as it was.
func NewRedactingHandler(next slog.Handler, secrets []string) *RedactingHandler {
	modes := map[string]matchMode{}
	for _, s := range secrets {
		if s == "" {
			continue
		}
		mode := anywhere
		if WeakSecret(s) != "" {
			mode = asWord
			if strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
				mode = whole
			}
		}
		forms := []string{s, url.QueryEscape(s), url.PathEscape(s)}
		if b, err := json.Marshal(s); err == nil {
			forms = append(forms, string(b[1:len(b)-1]))
		}
		for _, f := range forms {
			if m, ok := modes[f]; !ok || mode < m { // the widest match wins
				modes[f] = mode
			}
		}
	}
	var all []pattern
	for s, m := range modes {
		all = append(all, pattern{s, m})
	}
	slices.SortFunc(all, func(a, b pattern) int { // longest match wins
		if d := len(b.s) - len(a.s); d != 0 {
			return d
		}
		return strings.Compare(a.s, b.s)
	})
	return &RedactingHandler{next: next, secrets: all}
}

// Enabled reports whether the wrapped handler handles level.
func (h *RedactingHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle redacts the record's message and attributes, then passes it on.
func (h *RedactingHandler) Handle(ctx context.Context, r slog.Record) error {
	if len(h.secrets) == 0 {
		return h.next.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, h.redact(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

// WithAttrs redacts attrs and returns a handler that adds them.
func (h *RedactingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(h.secrets) == 0 {
		return &RedactingHandler{next: h.next.WithAttrs(attrs)}
	}
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.attr(a)
	}
	return &RedactingHandler{next: h.next.WithAttrs(red), secrets: h.secrets}
}

// WithGroup returns a handler that puts later attributes in group name.
func (h *RedactingHandler) WithGroup(name string) slog.Handler {
	return &RedactingHandler{next: h.next.WithGroup(h.redact(name)), secrets: h.secrets}
}

// redact replaces secrets in s, repeating while a replacement has formed a
// new occurrence (bounded: a secret inside "[REDACTED]" cannot be removed).
func (h *RedactingHandler) redact(s string) string {
	for range 4 {
		if !h.contains(s) {
			return s
		}
		out, changed := h.replace(s)
		if !changed {
			return s
		}
		s = out
	}
	return s
}

// contains reports whether s holds a secret redact would replace.
func (h *RedactingHandler) contains(s string) bool {
	for _, p := range h.secrets {
		for off := 0; off <= len(s); {
			i := strings.Index(s[off:], p.s)
			if i < 0 {
				break
			}
			if p.fits(s, off+i, off+i+len(p.s)) {
				return true
			}
			off += i + 1
		}
	}
	return false
}

// replace makes one pass over s, replacing at each position the longest
// form of a secret that matches there.
func (h *RedactingHandler) replace(s string) (string, bool) {
	var cands []pattern
	for _, p := range h.secrets {
		if strings.Contains(s, p.s) {
			cands = append(cands, p)
		}
	}
	if len(cands) == 0 {
		return s, false
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		n := 0
		for _, p := range cands {
			if strings.HasPrefix(s[i:], p.s) && p.fits(s, i, i+len(p.s)) {
				n = len(p.s)
				break
			}
		}
		if n == 0 {
			i++
			continue
		}
		b.WriteString(s[last:i])
		b.WriteString(Redacted)
		i += n
		last = i
	}
	if last == 0 {
		return s, false
	}
	b.WriteString(s[last:])
	return b.String(), true
}

// fits reports whether the occurrence s[i:j] of p is one to replace.
func (p pattern) fits(s string, i, j int) bool {
	switch p.mode {
	case asWord:
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[j:])
		return (i == 0 || !wordRune(before)) && (j == len(s) || !wordRune(after))
	case whole:
		return i == 0 && j == len(s)
	}
	return true
}

// wordRune reports whether r continues a token: a letter, digit, '_' or '-'.
func wordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-'
}

func (h *RedactingHandler) attr(a slog.Attr) slog.Attr {
	a.Key = h.redact(a.Key)
	a.Value = h.value(a.Value)
	return a
}

func (h *RedactingHandler) value(v slog.Value) slog.Value {
	v = v.Resolve() // LogValuers could reveal anything
	switch v.Kind() {
	case slog.KindString:
		return slog.StringValue(h.redact(v.String()))
	case slog.KindGroup:
		as := v.Group()
		red := make([]slog.Attr, len(as))
		for i, a := range as {
			red[i] = h.attr(a)
		}
		return slog.GroupValue(red...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			// Handlers print errors with Error(); a wrapped error may carry a
			// URL with the bot token in it.
			if s := x.Error(); h.contains(s) {
				return slog.StringValue(h.redact(s))
			}
			return v
		case []byte:
			// Text prints bytes as a string, JSON as base64: either shows
			// the secret.
			if s := string(x); h.contains(s) {
				return slog.StringValue(h.redact(s))
			}
			return v
		case fmt.Stringer:
			if s := x.String(); h.contains(s) {
				return slog.StringValue(h.redact(s))
			}
		}
		// Structs, maps, slices: the text handler prints them with fmt, the
		// JSON handler with encoding/json. If either form shows a secret,
		// log the redacted fmt form instead.
		s := fmt.Sprintf("%+v", v.Any())
		if h.contains(s) {
			return slog.StringValue(h.redact(s))
		}
		if b, err := json.Marshal(v.Any()); err == nil && h.contains(string(b)) {
			return slog.StringValue(h.redact(string(b)))
		}
		return v
	default:
		// Numbers, times, durations and booleans: only their text form
		// could match a (numeric) secret.
		if s := v.String(); h.contains(s) {
			return slog.StringValue(h.redact(s))
		}
		return v
	}
}
