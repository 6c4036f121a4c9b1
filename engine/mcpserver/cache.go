package mcpserver

import (
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverCache keeps one server per chat (a session belongs to the server
// it started on), at most maxServers of them.
type serverCache struct {
	mu  sync.Mutex
	m   map[string]*mcp.Server
	new func(chat string) *mcp.Server
}

const maxServers = 1024

func newServerCache(f func(string) *mcp.Server) *serverCache {
	return &serverCache{m: make(map[string]*mcp.Server), new: f}
}

func (c *serverCache) get(chat string) *mcp.Server {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.m[chat]
	if s == nil {
		if len(c.m) >= maxServers {
			clear(c.m) // sessions keep their server; new ones get a fresh one
		}
		s = c.new(chat)
		c.m[chat] = s
	}
	return s
}
