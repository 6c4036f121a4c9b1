package remote

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/hashicorp/yamux"
	"github.com/stretchr/testify/require"
)

// TestWrongTokenIsRefusedAndLoggedWithoutIt: the runner is told to check
// its token; the server's log names the address, never the token.
func TestWrongTokenIsRefusedAndLoggedWithoutIt(t *testing.T) {
	r := newRig(t, time.Minute)
	run := &Runner{URL: r.srv.URL, Token: "tok-onf", Name: "bad", MaxAgents: 1}
	err := run.session(context.Background())
	require.ErrorIs(t, err, errRefused)
	require.ErrorContains(t, err, "check --token")
	require.Contains(t, r.logs.String(), "a runner was refused: wrong or missing token")
	require.NotContains(t, r.logs.String(), "tok-onf")
	require.Empty(t, r.hub.Runners())
}

// dialRaw connects as a runner with a good token and returns the yamux
// session the test speaks through by hand.
func dialRaw(t *testing.T, r *rig) *yamux.Session {
	t.Helper()
	c, _, err := websocket.Dial(context.Background(), wsURL(r.srv.URL)+ConnectPath, &websocket.DialOptions{
		HTTPHeader: http.Header{"Authorization": {"Bearer tok-one"}}})
	require.NoError(t, err)
	sess, err := yamux.Server(websocket.NetConn(context.Background(), c, websocket.MessageBinary), muxConfig())
	require.NoError(t, err)
	t.Cleanup(func() { sess.Close() })
	return sess
}

// TestGarbageIsRefused: a hello that is not JSON, one that is too long,
// and one with a bad name each end the connection with the reason logged;
// no runner is registered.
func TestGarbageIsRefused(t *testing.T) {
	r := newRig(t, time.Minute)
	for _, tc := range []struct{ send, log string }{
		{"\x00\x01garbage\n", "not a JSON message"},
		{strings.Repeat("x", maxLine+10), "a message longer than"},
		{`{"version":1,"name":"a b","max_agents":1}` + "\n", "accepted are letters"},
		{`{"version":1,"name":"ok","max_agents":0}` + "\n", "max agents 0"},
	} {
		sess := dialRaw(t, r)
		st, err := sess.AcceptStream()
		require.NoError(t, err)
		_, _ = io.WriteString(st, tc.send)
		waitFor(t, "the refusal logged: "+tc.log, func() bool { return strings.Contains(r.logs.String(), tc.log) })
		waitFor(t, "the connection closed", sess.IsClosed)
	}
	require.Empty(t, r.hub.Runners())
}

// TestRunnerOpeningStreamsIsDropped: the only stream a runner may open is
// a file stream; one that starts with garbage, another op or a line too
// long drops its connection, with the reason logged.
func TestRunnerOpeningStreamsIsDropped(t *testing.T) {
	r := newRig(t, time.Minute)
	for _, tc := range []struct{ send, log string }{
		{"x\n", "not a JSON message"},
		{`{"op":"start","id":"a"}` + "\n", `(accepted: file)`},
		{strings.Repeat("x", maxLine+10), "a message longer than"},
	} {
		sess := rawRunner(t, r, "sneaky")
		st, err := sess.OpenStream()
		require.NoError(t, err)
		_, _ = io.WriteString(st, tc.send)
		waitFor(t, "the connection closed after "+tc.log, sess.IsClosed)
		require.Contains(t, r.logs.String(), "a runner opened a stream that is not a file request; dropping its connection")
		require.Contains(t, r.logs.String(), tc.log)
	}
}

// TestFloodingAgentStallsNobodyElse: an agent writing without end that
// nobody reads fills its own window; another agent on the same runner
// still answers.
func TestFloodingAgentStallsNobodyElse(t *testing.T) {
	r := newRig(t, time.Minute)
	run := r.runner(t, "box1", 4)
	flood, err := r.hub.Start(shSpec("flood", `yes xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx`))
	require.NoError(t, err)
	defer flood.End(time.Second)
	time.Sleep(500 * time.Millisecond) // let it fill what it can
	p, err := r.hub.Start(shSpec("calm", `read x; echo "calm $x"`))
	require.NoError(t, err)
	_, err = io.WriteString(p.Stdin(), "yes\n")
	require.NoError(t, err)
	line, err := bufio.NewReader(p.Stdout()).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "calm yes\n", line)
	// The runner holds at most MaxHeld unsent bytes (+ one read, + the
	// history kept for a re-attach) of the flood.
	run.mu.Lock()
	var heldBytes int
	for _, h := range run.procs {
		h.mu.Lock()
		heldBytes = max(heldBytes, len(h.out))
		h.mu.Unlock()
	}
	run.mu.Unlock()
	require.LessOrEqual(t, heldBytes, MaxHeld+keepSent+32<<10)
}
