package claude

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent"
)

// TestMCPConfigHoldsNoCredential: the inline --mcp-config, which every
// local user's process list shows, names an environment variable where
// the credential goes; only the session's process gets its value.
func TestMCPConfigHoldsNoCredential(t *testing.T) {
	const secret = "Bearer s3ss10n-cred3nt1al"
	arg, env, err := mcpConfigArg([]agent.MCPServer{{Name: "leashd", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"Authorization": secret}}})
	require.NoError(t, err)
	assert.NotContains(t, arg, "s3ss10n", "the command line holds no credential")
	var cfg mcpConfig
	require.NoError(t, json.Unmarshal([]byte(arg), &cfg))
	assert.Equal(t, "http://127.0.0.1:1/mcp", cfg.MCPServers["leashd"].URL)
	ref := cfg.MCPServers["leashd"].Headers["Authorization"]
	require.True(t, strings.HasPrefix(ref, "${") && strings.HasSuffix(ref, "}"), ref)
	assert.Equal(t, []string{strings.Trim(ref, "${}") + "=" + secret}, env)
}

// TestUserContentCarriesImages: a prompt with pictures is image blocks
// then the text block; without, the plain text the CLI always took.
func TestUserContentCarriesImages(t *testing.T) {
	assert.Equal(t, "hi", userContent(agent.Text("hi")))
	b, err := json.Marshal(userContent(agent.Prompt{Text: "what is it?", Images: []agent.Image{{MediaType: "image/png", Data: []byte{1, 2}}}}))
	require.NoError(t, err)
	assert.JSONEq(t, `[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AQI="}},{"type":"text","text":"what is it?"}]`, string(b))
}
