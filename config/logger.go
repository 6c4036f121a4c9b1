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
)

// Redacted replaces every secret in log output.
const Redacted = "[REDACTED]"

// NewLogger returns the logger leashd writes to w: text or JSON
// (LEASHD_LOG_FORMAT), at the level of LEASHD_LOG_LEVEL, with every secret
// of cfg (tokens, signing and webhook secrets) replaced by [REDACTED]
// wherever it appears: the message, attribute keys and values, groups,
// errors and anything formatted with fmt.
func NewLogger(cfg Config, w io.Writer) (*slog.Logger, error) {
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
	return slog.New(NewRedactingHandler(h, cfg.Secrets())), nil
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
	secrets []string // non-empty, with their escaped forms, longest first
	rep     *strings.Replacer
}

// NewRedactingHandler returns next wrapped so that none of secrets (nor
// their URL-escaped or JSON-escaped forms) reaches it. Empty secrets are
// ignored. A secret that contains no '[' or ']' and is not part of
// "REDACTED" never appears in the output.
func NewRedactingHandler(next slog.Handler, secrets []string) *RedactingHandler {
	var all []string
	for _, s := range secrets {
		if s == "" {
			continue
		}
		all = append(all, s, url.QueryEscape(s), url.PathEscape(s))
		if b, err := json.Marshal(s); err == nil {
			all = append(all, string(b[1:len(b)-1]))
		}
	}
	slices.SortFunc(all, func(a, b string) int { return len(b) - len(a) }) // longest match wins
	all = slices.Compact(all)
	h := &RedactingHandler{next: next, secrets: all}
	if len(all) > 0 {
		pairs := make([]string, 0, 2*len(all))
		for _, s := range all {
			pairs = append(pairs, s, Redacted)
		}
		h.rep = strings.NewReplacer(pairs...)
	}
	return h
}

// Enabled reports whether the wrapped handler handles level.
func (h *RedactingHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

// Handle redacts the record's message and attributes, then passes it on.
func (h *RedactingHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.rep == nil {
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
	if h.rep == nil {
		return &RedactingHandler{next: h.next.WithAttrs(attrs)}
	}
	red := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		red[i] = h.attr(a)
	}
	return &RedactingHandler{next: h.next.WithAttrs(red), secrets: h.secrets, rep: h.rep}
}

// WithGroup returns a handler that puts later attributes in group name.
func (h *RedactingHandler) WithGroup(name string) slog.Handler {
	return &RedactingHandler{next: h.next.WithGroup(h.redact(name)), secrets: h.secrets, rep: h.rep}
}

// redact replaces secrets in s, repeating while a replacement has formed a
// new occurrence (bounded: a secret inside "[REDACTED]" cannot be removed).
func (h *RedactingHandler) redact(s string) string {
	if h.rep == nil {
		return s
	}
	for range 4 {
		if !h.contains(s) {
			return s
		}
		s = h.rep.Replace(s)
	}
	return s
}

func (h *RedactingHandler) contains(s string) bool {
	for _, sec := range h.secrets {
		if strings.Contains(s, sec) {
			return true
		}
	}
	return false
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
