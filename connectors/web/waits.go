package web

import "fmt"

// TakeWait counts one more request waiting for a person — an MCP tool call
// in progress on /mcp — against LEASHD_WEB_MAX_WAITS together with the
// long-polls, so that the two together still leave connections for
// replies, health checks and the page. It returns the release (call it
// once), or WaitsFull past the cap.
func (c *Connector) TakeWait() (release func(), err error) {
	if n := c.waits.Add(1); n > int64(c.maxWaits) {
		c.waits.Add(-1)
		return nil, WaitsFull(c.maxWaits)
	}
	return func() { c.waits.Add(-1) }, nil
}

// WaitsFull is the error of a request refused because max requests are
// waiting for a person already (LEASHD_WEB_MAX_WAITS).
func WaitsFull(max int) error {
	return fmt.Errorf("too many requests waiting for a person: at most %d long-polls and MCP tool calls wait at once (LEASHD_WEB_MAX_WAITS); call again in a moment, or raise LEASHD_WEB_MAX_WAITS", max)
}
