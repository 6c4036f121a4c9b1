package remote

import (
	"errors"
	"io"
	"strings"
	"time"

	"github.com/hashicorp/yamux"
)

// streamWindow is a stream's yamux window: the most of one agent's output
// (or input) in flight, unread by the other side.
const streamWindow = 1 << 20

// muxConfig is yamux's configuration on both sides: keepalives find a
// dead connection within 25 s; few streams may wait to be accepted.
func muxConfig() *yamux.Config {
	c := yamux.DefaultConfig()
	c.AcceptBacklog = 64
	c.KeepAliveInterval = 10 * time.Second
	c.ConnectionWriteTimeout = 15 * time.Second
	c.MaxStreamWindowSize = streamWindow
	c.StreamOpenTimeout = 30 * time.Second
	// stdin closes long before stdout ends (a CLI finishing its work).
	c.StreamCloseTimeout = time.Hour
	c.LogOutput = io.Discard
	return c
}

// wsURL turns the server's http(s) URL into its ws(s) one.
func wsURL(u string) string {
	u = strings.TrimRight(u, "/")
	switch {
	case strings.HasPrefix(u, "https://"):
		return "wss://" + strings.TrimPrefix(u, "https://")
	case strings.HasPrefix(u, "http://"):
		return "ws://" + strings.TrimPrefix(u, "http://")
	}
	return u
}

// finished reports whether err, from reading r, is the other side closing
// its end (io.EOF of a live connection). yamux gives io.EOF on every
// stream of a connection that broke too: that is not the end.
func finished(r io.Reader, err error) bool {
	if !errors.Is(err, io.EOF) {
		return false
	}
	if st, ok := r.(*yamux.Stream); ok {
		return !st.Session().IsClosed()
	}
	return true
}
