package config

import "time"

// MCPSessionIdle is LEASHD_MCP_SESSION_IDLE_SECONDS: how long an MCP
// session over HTTP may go without a request in progress before it is
// closed; 0 means never.
func (c Config) MCPSessionIdle() time.Duration { return seconds(c.MCPSessionIdleSeconds) }
