package config_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/url"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
)

// Realistic secrets of every kind the configuration holds.
const (
	tgToken     = "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"
	webToken    = "w3b-t0ken-9f8e7d6c5b4a"
	hookSecret  = "hook_Secret-0123456789abcdef"
	slackBot    = "xoxb-1111111111-2222222222-AbCdEfGhIjKlMnOpQrStUvWx"
	slackApp    = "xapp-1-A111-2222-abcdef0123456789"
	slackSigned = "8f742231b10e8888abcd99yyyzzz85a5"
)

// secretConfig is the configuration the secrets go with (the chat apps
// hold them and hand them to NewLogger).
func secretConfig() config.Config { return config.Defaults() }

func allSecrets() []string {
	return []string{tgToken, webToken, hookSecret, slackBot, slackApp, slackSigned}
}

type tokenHolder struct {
	Name  string
	Token string
}

type ptrHolder struct {
	Inner *tokenHolder `json:"inner"`
}

type stringer struct{ s string }

func (s stringer) String() string { return "conn to " + s.s }

type valuer struct{}

func (valuer) LogValue() slog.Value { return slog.StringValue("resolved " + slackBot) }

// logEverything writes the secrets through every path a log line can take.
func logEverything(log *slog.Logger) {
	apiURL, _ := url.Parse("https://api.telegram.org/bot" + tgToken + "/getUpdates")
	wrapped := fmt.Errorf("polling: %w", &url.Error{Op: "Post", URL: apiURL.String(), Err: errors.New("connection reset")})
	log.Info("starting with token " + tgToken)
	log.Info("attrs", "token", webToken, "err", wrapped, "url", apiURL)
	log.Warn("group", slog.Group("slack", slog.String("bot", slackBot), slog.Group("inner", "app", slackApp)))
	log.Error("any", "holder", tokenHolder{Name: "x", Token: hookSecret}, "ptr", ptrHolder{Inner: &tokenHolder{Token: slackSigned}},
		"list", []string{"a", slackApp}, "map", map[string]string{"k": slackBot})
	log.Info("stringer and valuer", "s", stringer{webToken}, "v", valuer{})
	log.Info("escaped", "query", "token="+url.QueryEscape(tgToken), "bytes", []byte(slackBot))
	log.With("pre", tgToken).WithGroup("g-"+webToken).Info("with", "x", hookSecret)
	log.Info("key as secret", slackSigned, "value")
	log.Debug("debug " + tgToken)
}

func TestNewLoggerNeverWritesSecrets(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			cfg := secretConfig()
			cfg.LogFormat = format
			cfg.LogLevel = "debug"
			var buf bytes.Buffer
			log, err := config.NewLogger(cfg, &buf, allSecrets()...)
			require.NoError(t, err)
			logEverything(log)

			out := buf.String()
			require.NotEmpty(t, out)
			for _, s := range allSecrets() {
				assert.NotContains(t, out, s)
				assert.NotContains(t, out, url.QueryEscape(s))
			}
			// Everything was logged, with the secrets replaced.
			assert.Equal(t, 9, strings.Count(out, "\n"), out)
			assert.GreaterOrEqual(t, strings.Count(out, config.Redacted), 16, out)
			assert.Contains(t, out, "connection reset", "the rest of the error survives")
			assert.Contains(t, out, "starting with token "+config.Redacted)
			if format == "json" {
				for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
					var m map[string]any
					require.NoError(t, json.Unmarshal([]byte(line), &m), line)
				}
			}
		})
	}
}

func TestNewLoggerFormatsAndLevels(t *testing.T) {
	cfg := config.Defaults()
	cfg.LogFormat = "json"
	cfg.LogLevel = "WARN"
	var buf bytes.Buffer
	log, err := config.NewLogger(cfg, &buf)
	require.NoError(t, err)
	log.Info("hidden")
	log.Warn("shown", "chat", "telegram:42", "latency", 1500*time.Millisecond)
	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m), buf.String())
	assert.Equal(t, "shown", m["msg"])
	assert.Equal(t, "WARN", m["level"])
	assert.Equal(t, "telegram:42", m["chat"])
	assert.EqualValues(t, 1.5e9, m["latency"], "non-secret values keep their type")

	cfg.LogFormat = "text"
	cfg.LogLevel = "debug"
	buf.Reset()
	log, err = config.NewLogger(cfg, &buf)
	require.NoError(t, err)
	log.Debug("detail", "n", 3)
	assert.Regexp(t, `^time=\S+ level=DEBUG msg=detail n=3\n$`, buf.String())
}

func TestNewLoggerRejectsBadSettings(t *testing.T) {
	cfg := config.Defaults()
	cfg.LogLevel = "loud"
	_, err := config.NewLogger(cfg, &bytes.Buffer{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `LEASHD_LOG_LEVEL="loud"`)
	assert.Contains(t, err.Error(), "debug, info, warn, error")

	cfg = config.Defaults()
	cfg.LogFormat = "xml"
	_, err = config.NewLogger(cfg, &bytes.Buffer{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `LEASHD_LOG_FORMAT="xml"`)
	assert.Contains(t, err.Error(), "text, json")
}

func TestParseLogLevel(t *testing.T) {
	for in, want := range map[string]slog.Level{
		"debug": slog.LevelDebug, "INFO": slog.LevelInfo, "": slog.LevelInfo, " warn ": slog.LevelWarn,
		"warning": slog.LevelWarn, "Error": slog.LevelError,
	} {
		got, err := config.ParseLogLevel(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	_, err := config.ParseLogLevel("trace")
	assert.ErrorContains(t, err, `"trace"`)
}

func TestRedactingHandlerWithoutSecretsPassesThrough(t *testing.T) {
	var buf bytes.Buffer
	h := config.NewRedactingHandler(slog.NewJSONHandler(&buf, nil), []string{"", ""})
	log := slog.New(h).With("a", 1).WithGroup("g")
	log.Info("plain", "k", tokenHolder{Name: "n"})
	assert.JSONEq(t, `{"msg":"plain","level":"INFO","a":1,"g":{"k":{"Name":"n","Token":""}}}`,
		dropTime(t, buf.Bytes()))
}

func TestRedactingHandlerReformsNoSecret(t *testing.T) {
	// Replacing a secret leaves "[REDACTED]"; a second secret starting
	// with "D]" could form across that boundary. The handler repeats until
	// none is left.
	const first, second = "0123456789abcdefXY", "D]tail-tail-tail-00"
	var buf bytes.Buffer
	log := slog.New(config.NewRedactingHandler(slog.NewTextHandler(&buf, nil), []string{first, second}))
	log.Info("x", "v", first+"tail-tail-tail-00")
	out := buf.String()
	assert.NotContains(t, out, first)
	assert.NotContains(t, out, second)
	assert.Contains(t, out, "v=[REDACTE"+config.Redacted)
}

// TestRedactionReplacesWholeTokensOnly: a weak secret (allowed with a
// loopback web address) is replaced where it stands as a token, never
// inside other words: the token "a" used to turn every "a" of every line
// into [REDACTED], mangling the log and showing the token by what was left.
func TestRedactionReplacesWholeTokensOnly(t *testing.T) {
	tests := []struct {
		token, in, want string
	}{
		{"a", "a cat ate a banana", "[REDACTED] cat ate [REDACTED] banana"},
		{"a", "GET /api/chats?token=a&chat=telegram:42", "GET /api/chats?token=[REDACTED]&chat=telegram:42"},
		{"a", "Bearer a", "Bearer [REDACTED]"},
		{"abc", "abcd xabc x-abc abc_ abc", "abcd xabc x-abc abc_ [REDACTED]"},
		{" ", "hello world, all  fine", "hello world, all  fine"},
		{" ", " ", "[REDACTED]"},
		{"--", "a -- b --", "a -- b --"},
		{"hunter2", "pw=hunter2; hunter22 hunter2x", "pw=[REDACTED]; hunter22 hunter2x"},
		{"café", "un café, cafés", "un [REDACTED], cafés"},
		// A strong secret is replaced everywhere, also inside a word such
		// as the bot token in /bot<token>/getMe.
		{tgToken, "https://api.telegram.org/bot" + tgToken + "/getMe", "https://api.telegram.org/bot[REDACTED]/getMe"},
		{webToken, "x" + webToken + "y", "x[REDACTED]y"},
	}
	for _, tt := range tests {
		t.Run(tt.token+" in "+tt.in, func(t *testing.T) {
			cfg := config.Defaults()
			cfg.LogFormat = "json"
			require.NoError(t, cfg.Validate())
			var buf bytes.Buffer
			log, err := config.NewLogger(cfg, &buf, tt.token)
			require.NoError(t, err)
			log.Info(tt.in, "v", tt.in, "err", errors.New(tt.in), "unrelated", "banana bread")
			var m map[string]any
			require.NoError(t, json.Unmarshal(buf.Bytes(), &m), buf.String())
			assert.Equal(t, tt.want, m["msg"])
			assert.Equal(t, tt.want, m["v"])
			assert.Equal(t, tt.want, m["err"])
			assert.Equal(t, "banana bread", m["unrelated"])
			assert.Equal(t, "INFO", m["level"], "the keys of the line stay intact")
		})
	}
}

func TestRedactingHandlerEnabledFollowsNext(t *testing.T) {
	h := config.NewRedactingHandler(slog.NewTextHandler(&bytes.Buffer{}, &slog.HandlerOptions{Level: slog.LevelError}), []string{"s"})
	assert.False(t, h.Enabled(context.Background(), slog.LevelWarn))
	assert.True(t, h.Enabled(context.Background(), slog.LevelError))
}

func dropTime(t *testing.T, b []byte) string {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), string(b))
	delete(m, "time")
	out, err := json.Marshal(m)
	require.NoError(t, err)
	return string(out)
}

// FuzzRedact checks that a strong secret never survives, whatever the
// message, key and value it hides in, that a weak secret never survives as a
// whole token, and that text without the secret comes out unchanged (no
// mangling). Strong secrets checked in the text output are token-like
// (letters, digits, _ - :) so that they cannot be formed by the format's own
// punctuation around the logged values.
func FuzzRedact(f *testing.F) {
	f.Add(tgToken, "token "+tgToken+" end", "k", tgToken+tgToken)
	f.Add("abcabc", "aabcabcc", "abcabc", "ababcabcc")
	f.Add("123456", "n", "n", "123456")
	f.Add("xoxb-1", "x\"oxb-1", "xoxb-1\n", "é xoxb-1é")
	f.Add("a", "a cat ate a banana", "a", "?token=a&x=1")
	f.Add(" ", "hello world", " ", "  ")
	f.Add("aaaaaaaaaaaaaaaaaaaa", "aaaaaaaaaaaaaaaaaaaaaa", "k", "x aaaaaaaaaaaaaaaaaaaa")
	f.Add("0123456789abcdefXY", "[REDACTED]0123456789abcdefXY", "D]", "0123456789abcdefXY0123456789abcdefXY")
	f.Fuzz(func(t *testing.T, secret, msg, key, val string) {
		if secret == "" || strings.Contains(config.Redacted, secret) || !utf8.ValidString(secret) {
			t.Skip()
		}
		strong := config.WeakSecret(secret) == ""
		noTime := &slog.HandlerOptions{ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if len(groups) == 0 && a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}}
		var text, js bytes.Buffer
		for _, inner := range []slog.Handler{slog.NewTextHandler(&text, noTime), slog.NewJSONHandler(&js, noTime)} {
			log := slog.New(config.NewRedactingHandler(inner, []string{secret}))
			log.With("w", val).Info(msg, key, val, "err", errors.New(val), "g", slog.GroupValue(slog.String(key, msg)), "any", []string{val})
		}
		// The text handler escapes control characters, quotes and
		// backslashes ("\x00"); an escape can spell a digit-only secret
		// that was never logged, so only plain values are checked there.
		if strong && tokenLike(secret) && plain(msg) && plain(key) && plain(val) {
			require.NotContains(t, text.String(), secret)
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(js.Bytes(), &m), js.String())
		all := maps.Clone(m)
		if !strings.ContainsFunc(secret, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			// Punctuation or spaces alone are replaced only where they
			// are a whole string value, not an element of a logged list.
			delete(all, "any")
		}
		for _, s := range jsonStrings(all) {
			if strong {
				if tokenLike(secret) {
					require.NotContains(t, s, secret)
				}
			} else {
				require.False(t, standsAlone(s, secret), "weak secret %q left as a token in %q", secret, s)
			}
		}
		// Text in which the secret does not occur is not touched: the
		// message comes out as it went in (JSON turns invalid UTF-8 into
		// U+FFFD, so only valid text is compared).
		if utf8.ValidString(msg) && !strings.Contains(msg, secret) && !strings.Contains(msg, url.QueryEscape(secret)) &&
			!strings.Contains(msg, url.PathEscape(secret)) && !strings.Contains(msg, jsonEscaped(secret)) {
			require.Equal(t, msg, m[slog.MessageKey], "a message without the secret was changed")
		}
		if !strong && utf8.ValidString(msg) && !standsAloneAnyForm(msg, secret) {
			require.Equal(t, msg, m[slog.MessageKey], "a message where the weak secret is no token of its own was changed")
		}
	})
}

func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// standsAlone reports whether secret occurs in s as a token of its own,
// written independently of the handler: not next to a letter, digit, '_'
// or '-' (for a secret without letters and digits: only as the whole of s).
func standsAlone(s, secret string) bool {
	if !strings.ContainsFunc(secret, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		return s == secret
	}
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' }
	for i := 0; i+len(secret) <= len(s); i++ {
		if s[i:i+len(secret)] != secret {
			continue
		}
		before, _ := utf8.DecodeLastRuneInString(s[:i])
		after, _ := utf8.DecodeRuneInString(s[i+len(secret):])
		if (i == 0 || !word(before)) && (i+len(secret) == len(s) || !word(after)) {
			return true
		}
	}
	return false
}

func standsAloneAnyForm(s, secret string) bool {
	for _, f := range []string{secret, url.QueryEscape(secret), url.PathEscape(secret), jsonEscaped(secret)} {
		if standsAlone(s, f) {
			return true
		}
	}
	return false
}

func tokenLike(s string) bool {
	if len(s) < 6 || strings.Contains(config.Redacted, s) {
		return false
	}
	for _, r := range s {
		if !(r == '_' || r == '-' || r == ':' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}

func plain(s string) bool {
	for _, r := range s {
		if !unicode.IsPrint(r) || r == '\\' || r == '"' {
			return false
		}
	}
	return utf8.ValidString(s)
}

// jsonStrings returns every key and string value in a decoded JSON value.
func jsonStrings(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case map[string]any:
		var out []string
		for k, e := range x {
			out = append(out, k)
			out = append(out, jsonStrings(e)...)
		}
		return out
	case []any:
		var out []string
		for _, e := range x {
			out = append(out, jsonStrings(e)...)
		}
		return out
	}
	return nil
}

// FuzzParseLogLevel checks that every input is either one of the four
// levels, spelled as documented, or an error naming the variable.
func FuzzParseLogLevel(f *testing.F) {
	for _, s := range []string{"debug", "INFO", " warn ", "warning", "Error", "", "trace", "\x00", "infoo"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		level, err := config.ParseLogLevel(s)
		norm := strings.ToLower(strings.TrimSpace(s))
		accepted := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "": slog.LevelInfo,
			"warn": slog.LevelWarn, "warning": slog.LevelWarn, "error": slog.LevelError}
		want, ok := accepted[norm]
		if !ok {
			require.Error(t, err)
			require.Contains(t, err.Error(), "LEASHD_LOG_LEVEL=")
			require.Contains(t, err.Error(), "accepted: debug, info, warn, error")
			return
		}
		require.NoError(t, err)
		require.Equal(t, want, level)
	})
}

// BenchmarkRedactingLogger logs a typical line (message, a chat, an error
// with a URL) through the JSON logger with every secret configured: strong
// ones, and a weak loopback web token matched as a whole word.
func BenchmarkRedactingLogger(b *testing.B) {
	for _, weak := range []bool{false, true} {
		b.Run(fmt.Sprintf("weak_web_token=%v", weak), func(b *testing.B) {
			cfg := secretConfig()
			cfg.LogFormat = "json"
			secrets := allSecrets()
			if weak {
				secrets[1] = "a" // the web token
			}
			log, err := config.NewLogger(cfg, io.Discard, secrets...)
			require.NoError(b, err)
			apiErr := fmt.Errorf("polling: %w", &url.Error{Op: "Post", URL: "https://api.telegram.org/bot" + tgToken + "/getUpdates", Err: errors.New("connection reset")})
			b.ReportAllocs()
			for b.Loop() {
				log.Info("a message was sent to the chat", "chat", "telegram:42", "err", apiErr, "n", 3)
			}
		})
	}
}
