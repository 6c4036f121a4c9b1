package claude_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/enginetest"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// The real CLI without credentials: with no API key and no login it
// answers "Not logged in · Please run /login" without calling the API; with
// a key the API refuses (401) "Invalid API key · …". Either way leashd says
// how to log Claude Code in, on the machine, since /login cannot be done
// from a chat.
func TestRealCLINotLoggedInSaysHowToLogIn(t *testing.T) {
	for name, env := range map[string][]string{
		"no key":      {"ANTHROPIC_API_KEY="},
		"refused key": {"ANTHROPIC_API_KEY=sk-ant-refused", "CLAUDE_CODE_MAX_RETRIES=0"},
	} {
		t.Run(name, func(t *testing.T) {
			s, _ := newAgentStack(t, []claude.Option{claude.WithEnv(env)}, nil)
			s.api.Otherwise(func(*fakeapi.Request) fakeapi.Reply {
				return fakeapi.Reply{Status: http.StatusUnauthorized, Error: "invalid x-api-key"}
			})
			s.send(t, "hello")
			sum := s.conn.WaitDone(t, 1)
			assert.True(t, sum.IsError, "the turn failed")
			s.conn.WaitSaid(t, "Claude Code is not logged in, or its API key was refused, so the agent could not answer.")
			said := s.conn.SaidText()
			assert.Contains(t, said, "set ANTHROPIC_API_KEY in leashd's environment")
			assert.Contains(t, said, "run `claude` once as the user leashd runs as, type /login there")
			s.conn.Lock()
			streamed := strings.Join(enginetest.Texts(s.conn.Streamed), "")
			s.conn.Unlock()
			if name == "no key" {
				assert.Contains(t, streamed+sum.Result, "Please run /login", "what the CLI said")
				assert.Empty(t, s.api.Calls(), "no API call without a key")
			} else {
				assert.Contains(t, streamed+sum.Result, "Invalid API key")
			}
		})
	}
}

// /login is Claude Code's own command, which runs on the machine: leashd
// answers it with how to give Claude Code its credentials, and /help lists
// it, without starting the CLI.
func TestLoginCommandSaysHowToLogInToClaudeCode(t *testing.T) {
	s, _ := newAgentStack(t, nil, nil)
	s.send(t, "/login")
	s.conn.WaitSaid(t, "Claude Code logs in on the machine that runs leashd, not from the chat. On that machine, either set ANTHROPIC_API_KEY in leashd's environment")
	said := s.conn.SaidText()
	assert.Contains(t, said, "run `claude` once as the user leashd runs as, type /login there")
	assert.NotContains(t, said, "Unknown command")
	assert.Empty(t, s.api.Calls(), "/login is not sent to the agent")
	s.send(t, "/help")
	s.conn.WaitSaid(t, "/login — How to give the agent its credentials")
}
