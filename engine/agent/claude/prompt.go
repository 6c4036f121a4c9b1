package claude

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

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

// mcpConfig is the --mcp-config file's shape.
type mcpConfig struct {
	MCPServers map[string]mcpEntry `json:"mcpServers"`
}

type mcpEntry struct {
	Type    string            `json:"type"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
}

// writeMCPConfig writes the session's MCP servers to a file for
// --mcp-config and returns its path, the environment the CLI needs to
// read it and how to remove it. The credentials are not in the file: it
// names environment variables the CLI expands (${NAME}), given to this
// process only — a file in a working directory other chats' agents share
// would hand them this chat's credential, and the command line would show
// it in every local user's process list. The file is in the working
// directory's .leashd/ (ignored by git), which every sandbox shows the
// agent at the same path; without a working directory, in a private
// temporary directory.
func writeMCPConfig(workDir string, servers []agent.MCPServer) (path string, env []string, remove func(), err error) {
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
		return "", nil, nil, err
	}
	path, remove, err = writeConfigFile(workDir, b)
	return path, env, remove, err
}

// writeConfigFile writes b to a new private file (see writeMCPConfig).
func writeConfigFile(workDir string, b []byte) (path string, remove func(), err error) {
	if workDir == "" {
		dir, err := os.MkdirTemp("", "leashd-mcp-")
		if err != nil {
			return "", nil, fmt.Errorf("a directory for the MCP configuration: %w", err)
		}
		path = filepath.Join(dir, "mcp.json")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			_ = os.RemoveAll(dir)
			return "", nil, fmt.Errorf("writing the MCP configuration: %w", err)
		}
		return path, func() { _ = os.RemoveAll(dir) }, nil
	}
	dir := filepath.Join(workDir, ".leashd")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, fmt.Errorf("a directory for the MCP configuration: %w", err)
	}
	if f, err := os.OpenFile(filepath.Join(dir, ".gitignore"), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		_, _ = f.WriteString("*\n")
		_ = f.Close()
	}
	f, err := os.CreateTemp(dir, "mcp-*.json")
	if err != nil {
		return "", nil, fmt.Errorf("writing the MCP configuration: %w", err)
	}
	path = f.Name()
	remove = func() { _ = os.Remove(path) }
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		remove()
		return "", nil, fmt.Errorf("writing the MCP configuration: %w", err)
	}
	if err := f.Close(); err != nil {
		remove()
		return "", nil, err
	}
	return path, remove, nil
}
