package acp

import (
	"encoding/base64"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/leashd/leashd/engine/agent"
)

// TakesImages implements agent.ImageTaker: the agent said at start-up
// that its prompts may carry images (promptCapabilities.image).
func (s *session) TakesImages() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.images
}

// promptBlocks is a prompt as session/prompt content: images first (only
// when the agent takes them; the engine does not send others any), then
// the text.
func (s *session) promptBlocks(p agent.Prompt) []sdk.ContentBlock {
	blocks := make([]sdk.ContentBlock, 0, len(p.Images)+1)
	if s.TakesImages() {
		for _, im := range p.Images {
			blocks = append(blocks, sdk.ImageBlock(base64.StdEncoding.EncodeToString(im.Data), im.MediaType))
		}
	}
	if p.Text != "" || len(blocks) == 0 {
		blocks = append(blocks, sdk.TextBlock(p.Text))
	}
	return blocks
}

// mcpServers are the session's MCP servers as session/new takes them:
// over HTTP, which the agent must support (mcpCapabilities.http); an agent
// without it gets none.
func mcpServers(servers []agent.MCPServer, http bool) []sdk.McpServer {
	out := []sdk.McpServer{}
	if !http {
		return out
	}
	for _, m := range servers {
		h := []sdk.HttpHeader{}
		for k, v := range m.Headers {
			h = append(h, sdk.HttpHeader{Name: k, Value: v})
		}
		out = append(out, sdk.McpServer{Http: &sdk.McpServerHttpInline{Name: m.Name, Type: "http", Url: m.URL, Headers: h}})
	}
	return out
}
