package config_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
)

// A misspelt variable stops leashd, naming it and the variable meant;
// every variable leashd reads, a chat app's included, passes.
func TestCheckVariablesMisspelt(t *testing.T) {
	sec, _ := chatSection()
	for _, tc := range []struct{ env, want string }{
		{"LEASHD_WORK_DIR=/srv", "LEASHD_WORK_DIR is not a leashd variable, and leashd does not start with it set: did you mean LEASHD_WORKDIR? Rename it (leashd -h lists every variable)"},
		{"LEASHD_MAX_CONCURENT_AGENTS=8", "did you mean LEASHD_MAX_CONCURRENT_AGENTS?"},
		{"LEASHD_CHAT_BOTTOKEN=x", "did you mean LEASHD_CHAT_BOT_TOKEN?"},
		{"leashd_workdir=/srv", "leashd_workdir is not a leashd variable, and leashd does not start with it set: did you mean LEASHD_WORKDIR?"},
		{"LEASHD_FROBNICATE_EVERYTHING=1", "LEASHD_FROBNICATE_EVERYTHING is not a leashd variable, and leashd does not start with it set: remove it or correct its name (leashd -h lists every variable)"},
	} {
		err := config.CheckVariables([]string{"PATH=/bin", tc.env}, sec)
		require.Error(t, err, tc.env)
		assert.Contains(t, err.Error(), tc.want, tc.env)
	}
}

func TestCheckVariablesKnown(t *testing.T) {
	sec, _ := chatSection()
	var env []string
	for _, v := range config.Variables(sec) {
		env = append(env, v+"=")
	}
	assert.Contains(t, env, "LEASHD_MAX_CONCURRENT_AGENTS=")
	assert.Contains(t, env, "LEASHD_CHAT_API_URL=")
	// Variables only tests read, and other programs' variables, are let be.
	env = append(env, "LEASHD_TEST_CLAUDE=/opt/claude", "LEASHD_TEST_DOCKER=1", "HOME=/root", "LEASHDX=1")
	assert.NoError(t, config.CheckVariables(env, sec))
}

// Every misspelt variable is named at once.
func TestCheckVariablesAll(t *testing.T) {
	err := config.CheckVariables([]string{"LEASHD_AGNET=demo", "LEASHD_LOG_LEVLE=debug"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did you mean LEASHD_AGENT?")
	assert.Contains(t, err.Error(), "did you mean LEASHD_LOG_LEVEL?")
}

// Any environment entry is checked without panicking; a known variable
// never stops leashd, and a refused one is named in the message.
func FuzzCheckVariables(f *testing.F) {
	for _, s := range []string{"LEASHD_WEBADDR=:80", "LEASHD_AGENT=demo", "leashd_=", "LEASHD_TEST_X=1", "LEASHD_\xff=", "=LEASHD_X", "LEASHD_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, kv string) {
		err := config.CheckVariables([]string{kv})
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(config.Variables(), name) {
			assert.NoError(t, err)
		}
		if err != nil {
			assert.Contains(t, err.Error(), name+" is not a leashd variable")
		}
	})
}
