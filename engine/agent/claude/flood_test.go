package claude

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/leashd/leashd/engine/agent"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHugeAgentLinesAreCappedWithANote runs a fake CLI that prints 50 MB
// lines: an assistant text, a Write permission request and the result.
// With a 1 MiB message limit the turn still ends; the text and the result
// arrive cut to the limit with a visible "… truncated (N bytes)" note; the
// Write is refused to the agent with a reason and nobody is asked about a
// tool call whose input they could not see whole.
func TestHugeAgentLinesAreCappedWithANote(t *testing.T) {
	const limit = 1 << 20
	a, logs := fakeAgent(t, "normal", WithMaxMessageBytes(limit))
	a.maxLine = limit // fakeAgent sets its own
	s := openFake(t, a, agent.SessionOptions{ChatID: "c"})
	asked := false
	h := &handler{decide: func(context.Context, agent.PermissionRequest) agent.PermissionResponse {
		asked = true
		return agent.PermissionResponse{Allow: true}
	}}
	res, err := s.Turn(turnCtx(t), agent.Text("flood"), h)
	require.NoError(t, err)

	big := floodBytes()
	require.Len(t, h.texts, 3, "the cut text, the note that the Write was refused, the fake's echo of the refusal")
	text := h.texts[0]
	assert.LessOrEqual(t, len(text), limit+100, "the text is cut to the limit")
	assert.Greater(t, len(text), limit/2, "and keeps what fits")
	assert.True(t, strings.HasPrefix(text, "AAAA"))
	envelope := len(`{"type":"assistant","parent_tool_use_id":null,"message":{"id":"msg_f","content":[{"type":"text","text":"` + `"}]}}`)
	assert.True(t, strings.HasSuffix(text, fmt.Sprintf("\n\n… truncated (%d bytes)", big+envelope-limit)), "ends with the note: %q", text[len(text)-60:])

	assert.False(t, asked, "nobody is asked about a tool request too long to read whole")
	assert.Contains(t, h.texts[1], "a Write request of")
	assert.Contains(t, h.texts[1], "was refused")
	assert.Contains(t, h.texts[2], `"behavior":"deny"`, "the agent is told no")
	assert.Contains(t, h.texts[2], "LEASHD_MAX_AGENT_MESSAGE_BYTES")

	assert.LessOrEqual(t, len(res.Text), limit)
	assert.True(t, strings.HasPrefix(res.Text, "AAAA"))
	assert.Contains(t, res.Text, "… truncated (")
	assert.Equal(t, "fake-session-1", s.ID())
	assert.InDelta(t, 0.5, res.CostUSD, 1e-9)
	assert.Contains(t, logs.String(), "longer than the message limit")

	// and the session goes on
	res, err = s.Turn(turnCtx(t), agent.Text("echo still here"), &handler{})
	require.NoError(t, err)
	assert.Equal(t, "you said: still here", res.Text)
}

// hugeLine is an io.Reader of one JSON line of n text bytes, made up as it
// is read, so that the benchmark measures leashd's memory, not the input's.
type hugeLine struct {
	prefix, suffix string
	n, off         int
}

func (h *hugeLine) Read(p []byte) (int, error) {
	total := len(h.prefix) + h.n + len(h.suffix)
	if h.off >= total {
		return 0, io.EOF
	}
	w := 0
	for w < len(p) && h.off < total {
		switch {
		case h.off < len(h.prefix):
			c := copy(p[w:], h.prefix[h.off:])
			w, h.off = w+c, h.off+c
		case h.off < len(h.prefix)+h.n:
			c := min(len(p)-w, len(h.prefix)+h.n-h.off)
			for i := range c {
				p[w+i] = 'A'
			}
			w, h.off = w+c, h.off+c
		default:
			c := copy(p[w:], h.suffix[h.off-len(h.prefix)-h.n:])
			w, h.off = w+c, h.off+c
		}
	}
	return w, nil
}

// BenchmarkHugeAgentLine reads one 50 MB assistant line as the session's
// reader does (the default 4 MiB limit) and hands its text on: B/op is the
// memory one such line costs leashd.
func BenchmarkHugeAgentLine(b *testing.B) {
	const n = 50 << 20
	for b.Loop() {
		r := &hugeLine{prefix: `{"type":"assistant","parent_tool_use_id":null,"message":{"id":"m","content":[{"type":"text","text":"`, suffix: "\"}]}}\n", n: n}
		br := bufio.NewReaderSize(r, 64<<10)
		_, err := readLine(br, MaxLineBytes)
		tl, ok := err.(*lineTooLongError)
		if !ok {
			b.Fatalf("want a too-long line, got %v", err)
		}
		fixed, noted, ok := closeTruncated(tl.head, "\n\n"+agent.TruncatedNote(tl.n-len(tl.head)))
		if !ok || !noted {
			b.Fatal("not repaired")
		}
		l, err := parseLine(fixed)
		if err != nil {
			b.Fatal(err)
		}
		_, blocks, err := l.blocks()
		if err != nil || len(blocks) != 1 || len(blocks[0].Text) > MaxLineBytes {
			b.Fatalf("blocks %v %v", err, len(blocks))
		}
	}
}
