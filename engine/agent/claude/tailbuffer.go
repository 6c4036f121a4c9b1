package claude

import (
	"bytes"
	"strings"
	"sync"
)

// tailBuffer keeps the last max bytes written to it (the CLI's stderr).
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// tail returns the last n bytes (at a line start when possible), trimmed.
func (t *tailBuffer) tail(n int) string {
	t.mu.Lock()
	b := bytes.TrimSpace(t.buf)
	if len(b) > n {
		b = b[len(b)-n:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)-1 {
			b = b[i+1:]
		}
	}
	s := strings.ToValidUTF8(string(b), "")
	t.mu.Unlock()
	return s
}
