package main

import (
	"sync/atomic"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/connectors/web"
	"github.com/leashd/leashd/engine/mcpserver"
)

// mcpLimits are the bounds of /mcp's clients: LEASHD_MCP_MAX_SESSIONS,
// LEASHD_MCP_SESSION_IDLE_SECONDS, and LEASHD_WEB_MAX_WAITS for tool
// calls in progress, counted with the API's long-polls when the web page's
// connector serves them (else on their own, under the same cap).
func mcpLimits(s settings, conns []connectors.Connector) mcpserver.Limits {
	idle := s.MCPSessionIdle()
	if idle == 0 {
		idle = -1 // never
	}
	l := mcpserver.Limits{MaxSessions: s.MCPMaxSessions, SessionIdle: idle}
	for _, c := range conns {
		if w, ok := c.(waitTaker); ok {
			l.TakeWait = w.TakeWait
			return l
		}
	}
	max := s.web.MaxWaits
	if max <= 0 {
		max = web.DefaultMaxWaits
	}
	l.TakeWait = (&waitCap{max: max}).TakeWait
	return l
}

// waitTaker is the web connector's count of requests waiting for a person.
type waitTaker interface {
	TakeWait() (release func(), err error)
}

// waitCap counts tool calls waiting for a person when no web connector
// does (LEASHD_WEB_PAGE=off).
type waitCap struct {
	max int
	n   atomic.Int64
}

func (w *waitCap) TakeWait() (func(), error) {
	if w.n.Add(1) > int64(w.max) {
		w.n.Add(-1)
		return nil, web.WaitsFull(w.max)
	}
	return func() { w.n.Add(-1) }, nil
}
