package config_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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

func secretConfig() config.Config {
	c := config.Defaults()
	c.TelegramBotToken = tgToken
	c.WebToken = webToken
	c.TelegramWebhookSecret = hookSecret
	c.SlackBotToken = slackBot
	c.SlackAppToken = slackApp
	c.SlackSigningSecret = slackSigned
	return c
}

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
			log, err := config.NewLogger(cfg, &buf)
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
	// Replacing "ab" in "aab" leaves "a[REDACTED]": no new occurrence. A
	// secret ending in the replacement's first letters could form one
	// across the boundary; the handler repeats until none is left.
	var buf bytes.Buffer
	log := slog.New(config.NewRedactingHandler(slog.NewTextHandler(&buf, nil), []string{"ab", "D]x"}))
	log.Info("aab", "v", "abxx")
	out := buf.String()
	assert.NotContains(t, out, "ab")
	assert.NotContains(t, out, "D]x")
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

// FuzzRedact checks that a secret never survives, whatever the message,
// key and value it hides in. Secrets are token-like (letters, digits, _ - :
// and at least 6 long) so that they cannot be formed by the format's own
// punctuation around the logged values.
func FuzzRedact(f *testing.F) {
	f.Add(tgToken, "token "+tgToken+" end", "k", tgToken+tgToken)
	f.Add("abcabc", "aabcabcc", "abcabc", "ababcabcc")
	f.Add("123456", "n", "n", "123456")
	f.Add("xoxb-1", "x\"oxb-1", "xoxb-1\n", "é xoxb-1é")
	f.Fuzz(func(t *testing.T, secret, msg, key, val string) {
		if !tokenLike(secret) {
			t.Skip()
		}
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
		if plain(msg) && plain(key) && plain(val) {
			require.NotContains(t, text.String(), secret)
		}
		var m any
		require.NoError(t, json.Unmarshal(js.Bytes(), &m), js.String())
		for _, s := range jsonStrings(m) {
			require.NotContains(t, s, secret)
		}
	})
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
