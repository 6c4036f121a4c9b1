package config_test

import (
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/leashd/leashd/config"
)

// FuzzValidate feeds arbitrary values through the environment (so envconfig
// and list splitting see them) and Validate. Neither may panic; lists come
// out trimmed without empty entries; every problem Validate reports is one
// line starting with the variable it is about; and a secret's value is
// never printed.
func FuzzValidate(f *testing.F) {
	f.Add("300", "auto", "default", "127.0.0.1:8080", "", "123, 456", "U1,U2", "", "", "", "", "", "")
	f.Add("-1", "gpt", "yolo", "0.0.0.0:8080", "", "abc", "", "http://x", "", "xoxb-1", "", "", "ftp://")
	f.Add("0", "demo", "plan", "off", "", ",,", " , ", "https://bot.example.com/tg", "bad secret", "", "xapp", "sig", "")
	f.Add("0x10", "claude", "acceptEdits", "[::1]:8080", "tok", "9223372036854775808", "U\n1", "https://%zz", "s", "xoxb", "", "sig", "http://[::1]:namedport")
	f.Add("abc", "", "", ":", "", "1,\t2", "", "", strings.Repeat("a", 300), "", "", "", "\x00")
	f.Add("300", "auto", "default", "0.0.0.0:8080", " ", "", "", "", "", "", "", "", "")
	f.Add("300", "auto", "default", ":8080", strings.Repeat("z", 32), "", "", "https://bot.example.com/tg", "abc", "", "", "", "")
	f.Add("300", "auto", "default", "[::]:8080", "0123456789abcdef", "", "", "", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, timeout, agent, mode, webAddr, webToken, tgUsers, slackUsers, webhookURL, webhookSecret, slackBot, slackApp, slackSigning, apiURL string) {
		cleanEnv(t)
		set := func(k, v string) {
			if strings.ContainsRune(v, 0) || strings.ContainsRune(k, 0) {
				return // the environment cannot hold NUL
			}
			t.Setenv(k, v)
		}
		set("LEASHD_APPROVAL_TIMEOUT_SECONDS", timeout)
		set("LEASHD_AGENT", agent)
		set("LEASHD_DEFAULT_MODE", mode)
		set("LEASHD_WEB_ADDR", webAddr)
		set("LEASHD_WEB_TOKEN", webToken)
		set("LEASHD_TELEGRAM_BOT_TOKEN", "123:abc")
		set("LEASHD_TELEGRAM_ALLOWED_USERS", tgUsers)
		set("LEASHD_SLACK_ALLOWED_USERS", slackUsers)
		set("LEASHD_SLACK_APPROVERS", tgUsers+","+slackUsers)
		set("LEASHD_TELEGRAM_WEBHOOK_URL", webhookURL)
		set("LEASHD_TELEGRAM_WEBHOOK_SECRET", webhookSecret)
		set("LEASHD_SLACK_BOT_TOKEN", slackBot)
		set("LEASHD_SLACK_APP_TOKEN", slackApp)
		set("LEASHD_SLACK_SIGNING_SECRET", slackSigning)
		set("LEASHD_TELEGRAM_API_URL", apiURL)
		set("LEASHD_SLACK_API_URL", apiURL)

		c, err := config.Load()
		if err != nil {
			if !strings.Contains(err.Error(), "LEASHD_APPROVAL_TIMEOUT_SECONDS") {
				t.Fatalf("a load error must name the variable: %v", err)
			}
			// Validate a configuration built directly instead.
			c = config.Defaults()
			c.Agent, c.DefaultMode, c.WebAddr, c.WebToken = agent, mode, webAddr, webToken
			c.TelegramAllowedUsers = strings.Split(tgUsers, ",")
			c.TelegramWebhookURL, c.TelegramWebhookSecret = webhookURL, webhookSecret
			c.SlackBotToken, c.SlackAppToken, c.SlackSigningSecret = slackBot, slackApp, slackSigning
			c.TelegramApiURL, c.SlackApiURL = apiURL, apiURL
		} else {
			for _, list := range [][]string{c.TelegramAllowedUsers, c.SlackAllowedUsers, c.SlackApprovers} {
				for _, s := range list {
					if s == "" || s != strings.TrimSpace(s) || strings.Contains(s, ",") {
						t.Fatalf("list entry %q is not trimmed and split: %q", s, list)
					}
				}
			}
		}
		_ = c.Approvers()
		_ = c.WebEnabled()

		err = c.Validate()
		if err == nil {
			// A weak token never guards an address the network reaches.
			if host, _, herr := net.SplitHostPort(c.WebAddr); c.WebEnabled() && herr == nil && !config.IsLoopback(host) {
				if why := config.WeakSecret(c.WebToken); why != "" {
					t.Fatalf("LEASHD_WEB_ADDR=%s accepted with a weak token (%s)", c.WebAddr, why)
				}
			}
			return
		}
		msg := err.Error()
		for l := range strings.SplitSeq(msg, "\n") {
			if !strings.HasPrefix(l, "LEASHD_") {
				t.Fatalf("a problem does not start with its variable: %q in\n%s", l, msg)
			}
		}
		for l := range strings.SplitSeq(msg, "\n") {
			name, rest, ok := strings.Cut(l, "=")
			if !ok || strings.Contains(name, " ") || !secretVars[name] {
				continue
			}
			if !strings.HasPrefix(rest, `"…"`) {
				t.Fatalf("the value of secret %s is printed: %q", name, l)
			}
		}
	})
}

// secretVars are never printed with their value.
var secretVars = map[string]bool{
	"LEASHD_WEB_TOKEN": true, "LEASHD_TELEGRAM_BOT_TOKEN": true, "LEASHD_TELEGRAM_WEBHOOK_SECRET": true,
	"LEASHD_SLACK_BOT_TOKEN": true, "LEASHD_SLACK_APP_TOKEN": true, "LEASHD_SLACK_SIGNING_SECRET": true,
}

// FuzzLoadNumbers feeds arbitrary text to a *_SECONDS variable and to a
// plain number. Load either reads exactly the decimal value or says, in one
// line per variable, which variable, which value and what is accepted;
// Validate then accepts exactly the values in range, and a valid number of
// seconds comes out of its accessor unchanged (no wrap-around).
func FuzzLoadNumbers(f *testing.F) {
	for _, s := range [][2]string{
		{"300", "4"}, {"abc", "x"}, {"", ""}, {"010", "08"}, {"0x10", "1_0"}, {"18446744074", "1001"},
		{"9999999999", "0"}, {"99999999999999999999", "-1"}, {"5m", "1.5"}, {" 30", "+4"}, {"604800", "1000"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, secs, agents string) {
		if strings.ContainsRune(secs, 0) || strings.ContainsRune(agents, 0) {
			t.Skip("the environment cannot hold NUL")
		}
		cleanEnv(t)
		t.Setenv("LEASHD_APPROVAL_TIMEOUT_SECONDS", secs)
		t.Setenv("LEASHD_MAX_CONCURRENT_AGENTS", agents)
		ns, errS := strconv.ParseInt(secs, 10, 64)
		na, errA := strconv.ParseInt(agents, 10, 64)
		c, err := config.Load()
		if errS != nil || errA != nil {
			if err == nil {
				t.Fatalf("%q, %q loaded without error", secs, agents)
			}
			lines := strings.Split(err.Error(), "\n")
			want := 0
			for _, v := range []struct {
				name, value string
				bad         error
			}{{"LEASHD_APPROVAL_TIMEOUT_SECONDS", secs, errS}, {"LEASHD_MAX_CONCURRENT_AGENTS", agents, errA}} {
				if v.bad == nil {
					continue
				}
				want++
				prefix := v.name + "=" + strconv.Quote(v.value) + " is invalid: "
				found := false
				for _, l := range lines {
					if strings.HasPrefix(l, prefix) && strings.Contains(l, "; accepted: a whole number") {
						found = true
					}
				}
				if !found {
					t.Fatalf("no line %q…accepted in\n%v", prefix, err)
				}
			}
			if len(lines) != want {
				t.Fatalf("%d problems, %d lines:\n%v", want, len(lines), err)
			}
			return
		}
		if err != nil {
			t.Fatalf("%q, %q: %v", secs, agents, err)
		}
		if int64(c.ApprovalTimeoutSeconds) != ns || int64(c.MaxConcurrentAgents) != na {
			t.Fatalf("read %d, %d from %q, %q", c.ApprovalTimeoutSeconds, c.MaxConcurrentAgents, secs, agents)
		}
		err = c.Validate()
		inRange := ns >= 0 && ns <= 604800 && na >= 1 && na <= 1000
		if inRange != (err == nil) {
			t.Fatalf("%d s, %d agents: in range %v, Validate: %v", ns, na, inRange, err)
		}
		if inRange && c.ApprovalTimeout() != time.Duration(ns)*time.Second {
			t.Fatalf("%d s became %v", ns, c.ApprovalTimeout())
		}
		if ns > 0 && c.ApprovalTimeout() < time.Duration(min(ns, 604800))*time.Second {
			t.Fatalf("%d s wrapped around to %v", ns, c.ApprovalTimeout())
		}
	})
}
