package httpserver

import (
	"net/http"
	"time"
)

// Waiting serves h, a handler that may wait for a person before it writes
// (a long-poll for an answer, an MCP tool call, an MCP event stream). The
// server's WriteTimeout counts from when the request arrived, so it would
// cut such a response off even though nothing is wrong: the answer is
// recorded and the caller never gets it. Under Waiting there is no write
// deadline while h waits; instead each write (header, body, flush) must
// finish within writeTimeout of when it starts [15s], so a client that
// stops reading is still cut off.
func Waiting(h http.Handler, writeTimeout time.Duration) http.Handler {
	if writeTimeout <= 0 {
		writeTimeout = 15 * time.Second
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Time{}) // nothing is written while it waits
		ww := &waitingWriter{ResponseWriter: w, rc: rc, d: writeTimeout}
		h.ServeHTTP(ww, r)
		ww.arm() // what is buffered goes out after h returns
	})
}

// waitingWriter sets the write deadline before each write.
type waitingWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
	d  time.Duration
}

func (w *waitingWriter) arm() { _ = w.rc.SetWriteDeadline(time.Now().Add(w.d)) }

func (w *waitingWriter) WriteHeader(code int) {
	w.arm()
	w.ResponseWriter.WriteHeader(code)
}

func (w *waitingWriter) Write(b []byte) (int, error) {
	w.arm()
	return w.ResponseWriter.Write(b)
}

// Flush implements http.Flusher (the MCP SDK's event streams use it).
func (w *waitingWriter) Flush() { _ = w.FlushError() }

// FlushError is what http.ResponseController.Flush calls.
func (w *waitingWriter) FlushError() error {
	w.arm()
	return w.rc.Flush()
}

// Unwrap lets http.ResponseController reach the server's writer.
func (w *waitingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
