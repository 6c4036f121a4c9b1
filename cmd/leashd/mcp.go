package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/mcpserver"
	"github.com/leashd/leashd/interactions/client"
)

// mcpUsage is printed by `leashd mcp -h` and after a bad flag.
const mcpUsage = `Usage: leashd mcp [--url URL] [--token T] [--chat CHAT] [--workdir DIR]

Serves leashd's MCP tools (ask_user, request_approval, permission_prompt)
on stdin/stdout for an MCP client that starts it, asking through a running
leashd: questions are shown in CHAT (default mcp) and answered there.
A leashd serves the same tools itself over HTTP at /mcp?chat=CHAT.

Flags:
  --url URL      leashd's address (default http://$LEASHD_WEB_ADDR)
  --token T      the API token (default $LEASHD_WEB_TOKEN, else the token
                 leashd generated: web-token beside LEASHD_DB_PATH)
  --chat CHAT    where to ask (default mcp)
  --workdir DIR  where a relative plan file is read (default: here)
`

// runMCP is `leashd mcp`: an MCP server on stdio, proxying to a running
// leashd's HTTP API.
func runMCP(ctx context.Context, cfg settings, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("leashd mcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	url := fs.String("url", "", "")
	token := fs.String("token", "", "")
	chat := fs.String("chat", mcpserver.DefaultChat, "")
	wd, _ := os.Getwd()
	workDir := fs.String("workdir", wd, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, mcpUsage)
			return nil
		}
		fmt.Fprintln(stderr, "leashd mcp: "+err.Error())
		fmt.Fprint(stderr, "\n"+mcpUsage)
		return errUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "leashd mcp: unexpected argument %q\n\n%s", fs.Arg(0), mcpUsage)
		return errUsage
	}
	if *url == "" {
		u, err := apiURL(cfg)
		if err != nil {
			fmt.Fprintln(stderr, "leashd mcp: "+err.Error())
			return errUsage
		}
		*url = u
	}
	tok, err := clientToken(cfg, *token)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	s := mcpserver.New(client.New(*url, tok), *chat, mcpserver.Options{WorkDir: *workDir, PermissionResult: claude.PermissionResult})
	if err := s.Run(ctx, &mcp.StdioTransport{}); err != nil && ctx.Err() == nil {
		return fmt.Errorf("mcp: %w", err)
	}
	return nil
}
