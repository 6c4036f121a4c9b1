package main

import (
	"net"
	"strings"
	"testing"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/connectors/slack"
	"github.com/leashd/leashd/connectors/telegram"
	"github.com/leashd/leashd/connectors/web"
)

// fuzzValues are the values FuzzValidate sets, one variable each (some
// shared).
type fuzzValues struct {
	timeout, agent, mode, webAddr, webToken, tgUsers, slackUsers        string
	webhookURL, webhookSecret, slackBot, slackApp, slackSigning, apiURL string
}

// setEnv sets the variables to v (skipping what the environment cannot
// hold).
func (v fuzzValues) setEnv(t *testing.T) {
	set := func(k, val string) {
		if strings.ContainsRune(val, 0) || strings.ContainsRune(k, 0) {
			return // the environment cannot hold NUL
		}
		t.Setenv(k, val)
	}
	for k, val := range map[string]string{
		"LEASHD_APPROVAL_TIMEOUT_SECONDS": v.timeout, "LEASHD_AGENT": v.agent, "LEASHD_DEFAULT_MODE": v.mode,
		"LEASHD_WEB_ADDR": v.webAddr, "LEASHD_WEB_TOKEN": v.webToken, "LEASHD_TELEGRAM_BOT_TOKEN": "123:abc",
		"LEASHD_TELEGRAM_ALLOWED_USERS": v.tgUsers, "LEASHD_SLACK_ALLOWED_USERS": v.slackUsers,
		"LEASHD_SLACK_APPROVERS": v.tgUsers + "," + v.slackUsers, "LEASHD_TELEGRAM_WEBHOOK_URL": v.webhookURL,
		"LEASHD_TELEGRAM_WEBHOOK_SECRET": v.webhookSecret, "LEASHD_SLACK_BOT_TOKEN": v.slackBot,
		"LEASHD_SLACK_APP_TOKEN": v.slackApp, "LEASHD_SLACK_SIGNING_SECRET": v.slackSigning,
		"LEASHD_TELEGRAM_API_URL": v.apiURL, "LEASHD_SLACK_API_URL": v.apiURL,
	} {
		set(k, val)
	}
}

// settings builds the settings directly, for values the environment
// could not carry to a successful load.
func (v fuzzValues) settings() settings {
	s := defaultSettings()
	s.Agent, s.DefaultMode, s.web.Addr, s.web.Token = v.agent, v.mode, v.webAddr, v.webToken
	for _, a := range s.apps {
		switch a := a.(type) {
		case *telegram.App:
			a.Config.BotToken, a.Config.AllowedUsers = "123:abc", strings.Split(v.tgUsers, ",")
			a.Config.WebhookURL, a.Config.WebhookSecret, a.Config.ApiURL = v.webhookURL, v.webhookSecret, v.apiURL
		case *slack.App:
			a.Config.BotToken, a.Config.AppToken, a.Config.SigningSecret = v.slackBot, v.slackApp, v.slackSigning
			a.Config.ApiURL = v.apiURL
		}
	}
	return s
}

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
		v := fuzzValues{timeout, agent, mode, webAddr, webToken, tgUsers, slackUsers, webhookURL, webhookSecret, slackBot, slackApp, slackSigning, apiURL}
		v.setEnv(t)
		s, err := loadSettings()
		if err != nil {
			if !strings.Contains(err.Error(), "LEASHD_APPROVAL_TIMEOUT_SECONDS") {
				t.Fatalf("a load error must name the variable: %v", err)
			}
			s = v.settings() // validate a configuration built directly instead
		} else {
			checkListsTrimmed(t, s)
		}
		checkValidate(t, s)
	})
}

// checkListsTrimmed fails when a list entry kept spaces or commas.
func checkListsTrimmed(t *testing.T, s settings) {
	apps := appSettings(s)
	tg, sl := apps["telegram"].(telegram.Config), apps["slack"].(slack.Config)
	for _, list := range [][]string{tg.AllowedUsers, sl.AllowedUsers, sl.Approvers} {
		for _, e := range list {
			if e == "" || e != strings.TrimSpace(e) || strings.Contains(e, ",") {
				t.Fatalf("list entry %q is not trimmed and split: %q", e, list)
			}
		}
	}
}

// checkValidate validates s: a weak token never guards an address the
// network reaches, each problem is a line starting with its variable, and
// no secret's value is printed.
func checkValidate(t *testing.T, s settings) {
	err := s.Validate()
	if err == nil {
		if host, _, herr := net.SplitHostPort(s.web.Addr); s.web.Serves() && herr == nil && !web.IsLoopback(host) {
			if why := config.WeakSecret(s.web.Token); why != "" {
				t.Fatalf("LEASHD_WEB_ADDR=%s accepted with a weak token (%s)", s.web.Addr, why)
			}
		}
		return
	}
	msg := err.Error()
	for l := range strings.SplitSeq(msg, "\n") {
		if !strings.HasPrefix(l, "LEASHD_") {
			t.Fatalf("a problem does not start with its variable: %q in\n%s", l, msg)
		}
		name, rest, ok := strings.Cut(l, "=")
		if ok && !strings.Contains(name, " ") && secretVars[name] && !strings.HasPrefix(rest, `"…"`) {
			t.Fatalf("the value of secret %s is printed: %q", name, l)
		}
	}
}

// secretVars are never printed with their value.
var secretVars = map[string]bool{
	"LEASHD_WEB_TOKEN": true, "LEASHD_TELEGRAM_BOT_TOKEN": true, "LEASHD_TELEGRAM_WEBHOOK_SECRET": true,
	"LEASHD_SLACK_BOT_TOKEN": true, "LEASHD_SLACK_APP_TOKEN": true, "LEASHD_SLACK_SIGNING_SECRET": true,
}
