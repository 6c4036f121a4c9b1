package claude

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/leashd/leashd/engine/agent"
)

// imageBlock is a stream-json image content block:
// {"type":"image","source":{"type":"base64","media_type":…,"data":…}}.
type imageBlock struct {
	Type   string      `json:"type"`
	Source imageSource `json:"source"`
}

type imageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// userContent is a user message's content: the prompt's text alone, as
// the CLI has always been sent it, or, with images, the image blocks
// followed by the text block.
func userContent(p agent.Prompt) any {
	if len(p.Images) == 0 {
		return p.Text
	}
	blocks := make([]any, 0, len(p.Images)+1)
	for _, im := range p.Images {
		blocks = append(blocks, imageBlock{Type: "image", Source: imageSource{
			Type: "base64", MediaType: im.MediaType, Data: base64.StdEncoding.EncodeToString(im.Data),
		}})
	}
	if p.Text != "" {
		blocks = append(blocks, textBlock{Type: "text", Text: p.Text})
	}
	return blocks
}

// mcpConfig is --mcp-config's shape.
type mcpConfig struct {
	MCPServers map[string]mcpEntry `json:"mcpServers"`
}

type mcpEntry struct {
	Type    string            `json:"type"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
}

// mcpConfigArg is the session's MCP servers as --mcp-config's inline JSON
// and the environment the CLI needs to read it. The credentials are not
// in it: it names environment variables the CLI expands (${NAME}), given
// to this process only, so the command line, which every local user's
// process list shows, carries none. Inline, not a file: the CLI may run
// on another machine (a runner), where no file of the server's exists.
func mcpConfigArg(servers []agent.MCPServer) (arg string, env []string, err error) {
	cfg := mcpConfig{MCPServers: map[string]mcpEntry{}}
	for i, s := range servers {
		e := mcpEntry{Type: "http", URL: s.URL, Headers: map[string]string{}}
		n := 0
		for k, v := range s.Headers {
			n++
			name := fmt.Sprintf("MCP_SERVER_%d_HEADER_%d", i+1, n)
			e.Headers[k] = "${" + name + "}"
			env = append(env, name+"="+v)
		}
		cfg.MCPServers[s.Name] = e
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return "", nil, err
	}
	return string(b), env, nil
}
