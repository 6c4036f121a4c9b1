package claude_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// BenchmarkRealCLIStart measures starting the CLI and its initialize
// handshake, then closing it.
func BenchmarkRealCLIStart(b *testing.B) { benchStart(b, newRealCLI(b)) }

// benchStart opens and closes c's CLI: the time until its initialize
// answer, and the time Close takes.
func benchStart(b *testing.B, c *realCLI) {
	var open, closing time.Duration
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		t0 := time.Now()
		s, err := c.agent.Open(ctx, agent.SessionOptions{ChatID: "b", WorkDir: c.dir})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if err := s.Close(ctx); err != nil {
			b.Fatal(err)
		}
		open += t1.Sub(t0)
		closing += time.Since(t1)
		cancel()
	}
	b.ReportMetric(float64(open.Milliseconds())/float64(b.N), "open-ms/op")
	b.ReportMetric(float64(closing.Milliseconds())/float64(b.N), "close-ms/op")
}

// BenchmarkRealCLITurn measures one prompt's round trip through a live CLI
// and the fake API.
func BenchmarkRealCLITurn(b *testing.B) {
	c := newRealCLI(b)
	c.api.Otherwise(func(*fakeapi.Request) fakeapi.Reply { return fakeapi.Text("ok") })
	ctx := context.Background()
	s, err := c.agent.Open(ctx, agent.SessionOptions{ChatID: "b", WorkDir: c.dir})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close(context.Background()) })
	i := 0
	for b.Loop() {
		i++
		res, err := s.Turn(ctx, agent.Text(fmt.Sprintf("prompt %d", i)), nopHandler{})
		if err != nil || res.Text != "ok" {
			b.Fatal(res, err)
		}
	}
}

type nopHandler struct{}

func (nopHandler) Text(string) {}

func (nopHandler) ToolUse(string, json.RawMessage) {}

func (nopHandler) Permission(context.Context, agent.PermissionRequest) agent.PermissionResponse {
	return agent.PermissionResponse{}
}

// BenchmarkE2EPromptToSummary measures a prompt's way through the engine,
// a live CLI and the fake API until the chat shows the turn's summary.
func BenchmarkE2EPromptToSummary(b *testing.B) {
	s := newStack(b)
	s.api.Otherwise(func(*fakeapi.Request) fakeapi.Reply { return fakeapi.Text("ok") })
	s.send(b, "warm up")
	s.conn.WaitDone(b, 1)
	n := 1
	for b.Loop() {
		n++
		s.send(b, fmt.Sprintf("prompt %d", n))
		s.conn.WaitDone(b, n)
	}
}
