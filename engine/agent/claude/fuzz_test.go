package claude

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func FuzzParseLine(f *testing.F) {
	for _, s := range []string{
		``, `   `, `not json`, `{`, `{}`, `[]`, `null`, `{"type":""}`,
		`{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Bash","input":{"command":"ls"},"tool_use_id":"t","permission_suggestions":[]}}`,
		`{"type":"control_request","request_id":"r1","request":"x"}`,
		`{"type":"control_response","response":{"subtype":"success","request_id":"leashd_1","response":{}}}`,
		`{"type":"control_response","response":{"subtype":"error","request_id":"leashd_1","error":"bad"}}`,
		`{"type":"control_cancel_request","request_id":"r1"}`,
		`{"type":"system","subtype":"init","session_id":"s"}`,
		`{"type":"assistant","parent_tool_use_id":null,"message":{"content":[{"type":"text","text":"hi"},{"type":"tool_use","name":"Bash","input":{}}]}}`,
		`{"type":"assistant","message":{"content":"plain"}}`,
		`{"type":"assistant","message":{"content":42}}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s","total_cost_usd":0.1,"num_turns":1}`,
		`{"type":"result","total_cost_usd":"free"}`,
		`{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}},"parent_tool_use_id":null}`,
		`{"type":"stream_event","event":{"type":"message_start","message":{"id":"msg_1"}}}`,
		`{"type":"stream_event","event":[]}`,
		"{\"type\":\"assistant\",\"message\":{\"content\":\"\xff\xfe\"}}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := parseLine(b)
		if err != nil {
			require.Nil(t, l)
			msg := err.Error()
			assert.LessOrEqual(t, len(msg), 1200, "errors quote a bounded part of the line")
			return
		}
		if l == nil {
			assert.Empty(t, bytes.TrimSpace(b), "only blank lines give nothing")
			return
		}
		assert.NotEmpty(t, l.Type)
		switch l.Type {
		case typeControlRequest:
			assert.NotEmpty(t, l.RequestID)
			if r, err := l.request(); err == nil {
				_ = r.permissionRequest()
			}
		case typeControlResponse:
			_, _ = l.response()
		case typeControlCancel:
			assert.NotEmpty(t, l.RequestID)
		case typeAssistant:
			_, _, _ = l.blocks()
		case typeStreamEvent:
			_, _ = l.streamEvent()
		case typeResult:
			_ = l.result()
		case typeSystem, typeConversationReset:
			var sl systemLine
			if json.Unmarshal(b, &sl) == nil {
				if n, ok := sl.notice(l.Type, l.Subtype); ok {
					assert.NotEmpty(t, n.Kind)
					assert.NotEmpty(t, n.Text)
				}
			}
		}
	})
}

func TestQuoteIsBoundedAndValid(t *testing.T) {
	long := strings.Repeat("é", 500)
	q := quote([]byte(long))
	assert.True(t, utf8.ValidString(q))
	assert.Contains(t, q, "(1000 bytes)")
	assert.Equal(t, `"short"`, quote([]byte("short")))
}

// FuzzReadLine checks the line reader against bytes.Split: every line up to
// the limit comes back whole, longer ones are reported, nothing else.
func FuzzReadLine(f *testing.F) {
	f.Add([]byte("a\nbb\n\nccc"), 2, 3)
	f.Add([]byte("\n\n\n"), 0, 1)
	f.Add([]byte(strings.Repeat("x", 100)+"\nshort\n"), 16, 16)
	f.Add([]byte("no newline at all"), 16, 4)
	f.Fuzz(func(t *testing.T, in []byte, max, bufSize int) {
		max = max%64 + 1
		bufSize = bufSize%64 + 16 // bufio's minimum is 16
		if bufSize < 0 {
			bufSize = -bufSize + 16
		}
		if max < 0 {
			max = -max
		}
		br := bufio.NewReaderSize(bytes.NewReader(in), bufSize)
		want := bytes.Split(in, []byte("\n"))
		if len(want) > 0 && len(want[len(want)-1]) == 0 {
			want = want[:len(want)-1] // a final newline ends the last line
		}
		var got [][]byte
		for i := 0; i < len(in)+2; i++ {
			b, err := readLine(br, max)
			var tl *lineTooLongError
			if errors.As(err, &tl) {
				got = append(got, []byte("<too long>"))
				assert.Greater(t, tl.n, max)
				assert.LessOrEqual(t, len(tl.start), maxQuoted)
				assert.Equal(t, min(max, tl.n), len(tl.head), "the first max bytes are kept, no more")
				assert.True(t, bytes.HasPrefix(tl.head, tl.start))
				continue
			}
			if len(b) > 0 || err == nil {
				got = append(got, b)
			}
			if err != nil {
				require.ErrorIs(t, err, io.EOF)
				break
			}
		}
		require.Len(t, got, len(want))
		for i := range want {
			if len(want[i]) > max {
				assert.Equal(t, "<too long>", string(got[i]), "line %d", i)
			} else {
				assert.Equal(t, string(want[i]), string(got[i]), "line %d", i)
			}
		}
	})
}
