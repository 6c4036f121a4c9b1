package mcpserver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/mcpserver"
)

// BenchmarkSessionFlood opens 5,000 MCP sessions (initialize, then
// initialized) that are never ended, and reports what the server holds
// afterwards: Go heap and stacks (MB, and B/session for the sessions it
// kept), goroutines, and how many sessions it kept. With the default cap
// (LEASHD_MCP_MAX_SESSIONS=1000) the rest are refused; uncapped, every
// session stays until it is idle for LEASHD_MCP_SESSION_IDLE_SECONDS.
func BenchmarkSessionFlood(b *testing.B) {
	for _, bc := range []struct {
		name string
		max  int
	}{{"cap=default", 0}, {"cap=5000", 5000}} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				floodSessions(b, 5000, mcpserver.Limits{MaxSessions: bc.max})
			}
		})
	}
}

func floodSessions(b *testing.B, n int, l mcpserver.Limits) {
	coord, _ := newCoord()
	h := mcpserver.Handler(coord, func(string) error { return nil }, mcpserver.Options{PermissionResult: claude.PermissionResult, Limits: l})
	srv := httptest.NewServer(h)
	defer srv.Close()
	tr := &http.Transport{MaxIdleConnsPerHost: 8}
	hc := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	post := func(sid, body string) (*http.Response, error) {
		req, _ := http.NewRequest("POST", srv.URL+"/mcp?chat=c", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		return hc.Do(req)
	}
	before := retained()
	goBefore := runtime.NumGoroutine()
	kept := 0
	for range n {
		resp, err := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}`)
		if err != nil {
			b.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		sid := resp.Header.Get("Mcp-Session-Id")
		if strings.Contains(string(body), `"error"`) || sid == "" {
			continue // refused past the cap
		}
		kept++
		resp, err = post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
	tr.CloseIdleConnections()
	after := retained()
	b.ReportMetric(float64(after-before)/1e6, "MB")
	if kept > 0 {
		b.ReportMetric(float64(after-before)/float64(kept), "B/session")
	}
	b.ReportMetric(float64(runtime.NumGoroutine()-goBefore), "goroutines")
	b.ReportMetric(float64(kept), "sessions")
}

// retained is the Go heap in use plus goroutine stacks, after a GC.
func retained() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc + m.StackInuse)
}
