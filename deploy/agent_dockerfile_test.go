package deploy

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAgentDockerfile: the agent image for LEASHD_SANDBOX=docker installs
// the CLI and ACP adapter releases the tests run, and leaves the user, the
// entrypoint and the secrets to leashd.
func TestAgentDockerfile(t *testing.T) {
	b, err := os.ReadFile("agent.Dockerfile")
	require.NoError(t, err)
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	args := map[string]string{}
	var instrs []string
	for line := range strings.SplitSeq(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		instrs = append(instrs, line)
		if k, v, ok := strings.Cut(strings.TrimPrefix(line, "ARG "), "="); ok && strings.HasPrefix(line, "ARG ") {
			args[k] = v
		}
	}
	v := readVersions(t)
	assert.Equal(t, v["CLAUDE_CODE_VERSION"], args["CLAUDE_CODE_VERSION"], "deploy/agent.Dockerfile and .ci/versions.env disagree")
	assert.Equal(t, v["CLAUDE_AGENT_ACP_VERSION"], args["CLAUDE_AGENT_ACP_VERSION"], "deploy/agent.Dockerfile and .ci/versions.env disagree")
	all := strings.Join(instrs, "\n")
	assert.Contains(t, all, "@anthropic-ai/claude-code@${CLAUDE_CODE_VERSION}")
	assert.Contains(t, all, "@agentclientprotocol/claude-agent-acp@${CLAUDE_AGENT_ACP_VERSION}")
	assert.Contains(t, all, " git ")
	for _, instr := range instrs {
		for _, forbidden := range []string{"USER ", "ENTRYPOINT", "CMD ", "COPY ", "ADD "} {
			assert.False(t, strings.HasPrefix(instr, forbidden), "leashd sets the user and the program; nothing is copied in: %s", instr)
		}
		assert.NotContains(t, instr, "LEASHD_", "the agent image holds nothing of leashd's")
	}
}
