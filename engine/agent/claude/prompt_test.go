package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent"
)

// TestMCPConfigHoldsNoCredential: the --mcp-config file, in the working
// directory other chats' agents may share, names an environment variable
// where the credential goes; only the session's process gets its value.
func TestMCPConfigHoldsNoCredential(t *testing.T) {
	dir := t.TempDir()
	const secret = "Bearer s3ss10n-cred3nt1al"
	path, env, remove, err := writeMCPConfig(dir, []agent.MCPServer{{Name: "leashd", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"Authorization": secret}}})
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(dir, ".leashd"), filepath.Dir(path))
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.NotContains(t, string(b), "s3ss10n", "the file holds no credential")
	var cfg mcpConfig
	require.NoError(t, json.Unmarshal(b, &cfg))
	ref := cfg.MCPServers["leashd"].Headers["Authorization"]
	require.True(t, strings.HasPrefix(ref, "${") && strings.HasSuffix(ref, "}"), ref)
	assert.Equal(t, []string{strings.Trim(ref, "${}") + "=" + secret}, env)
	st, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	remove()
	_, err = os.Stat(path)
	assert.True(t, os.IsNotExist(err), "removed when the session ends")
}

// TestUserContentCarriesImages: a prompt with pictures is image blocks
// then the text block; without, the plain text the CLI always took.
func TestUserContentCarriesImages(t *testing.T) {
	assert.Equal(t, "hi", userContent(agent.Text("hi")))
	b, err := json.Marshal(userContent(agent.Prompt{Text: "what is it?", Images: []agent.Image{{MediaType: "image/png", Data: []byte{1, 2}}}}))
	require.NoError(t, err)
	assert.JSONEq(t, `[{"type":"image","source":{"type":"base64","media_type":"image/png","data":"AQI="}},{"type":"text","text":"what is it?"}]`, string(b))
}
