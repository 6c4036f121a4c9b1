package claude_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/leashd/leashd/engine/agent"

	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
)

// realCLI is the pinned CLI pointed at a fresh fake API, with a temp HOME
// and working directory.
type realCLI struct {
	api   *fakeapi.Server
	agent *claude.Agent
	dir   string
	home  string
}

func newRealCLI(t testing.TB, opts ...claude.Option) *realCLI {
	t.Helper()
	path := testenv.Claude(t)
	api := fakeapi.New(t)
	home := t.TempDir()
	dir := t.TempDir()
	opts = append([]claude.Option{claude.WithEnv(api.Env(home)), claude.WithLogger(newTestLogger(t)), claude.WithCloseTimeout(3 * time.Second)}, opts...)
	return &realCLI{api: api, agent: claude.New(path, opts...), dir: dir, home: home}
}

type slogLogger = slog.Logger

// newTestLogger logs warnings (everything with LEASHD_TEST_VERBOSE=1) to
// the test's log.
func newTestLogger(t testing.TB) *slog.Logger {
	level := slog.LevelWarn
	if os.Getenv("LEASHD_TEST_VERBOSE") != "" {
		level = slog.LevelDebug
	}
	w := &testWriter{t: t}
	t.Cleanup(func() { w.mu.Lock(); w.over = true; w.mu.Unlock() })
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: level}))
}

// testWriter writes to the test log until the test's cleanups have run
// (goroutines may log after that; t.Log would panic).
type testWriter struct {
	t    testing.TB
	mu   sync.Mutex
	over bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.over {
		w.t.Log(strings.TrimSpace(string(p)))
	}
	return len(p), nil
}

func (c *realCLI) open(t *testing.T, o agent.SessionOptions) agent.Session {
	t.Helper()
	if o.WorkDir == "" {
		o.WorkDir = c.dir
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	s, err := c.agent.Open(ctx, o)
	require.NoError(t, err)
	t.Logf("claude started and initialized in %s", time.Since(start).Round(time.Millisecond))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = s.Close(ctx)
	})
	return s
}

// recHandler records a turn's stream and answers permissions with decide.
type recHandler struct {
	decide func(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse

	mu    sync.Mutex
	texts []string
	tools []string
	perms []agent.PermissionRequest
}

func (h *recHandler) Text(s string) {
	h.mu.Lock()
	h.texts = append(h.texts, s)
	h.mu.Unlock()
}

func (h *recHandler) ToolUse(name string, _ json.RawMessage) {
	h.mu.Lock()
	h.tools = append(h.tools, name)
	h.mu.Unlock()
}

func (h *recHandler) Permission(ctx context.Context, req agent.PermissionRequest) agent.PermissionResponse {
	h.mu.Lock()
	h.perms = append(h.perms, req)
	h.mu.Unlock()
	if h.decide == nil {
		return agent.PermissionResponse{Message: "no decision configured"}
	}
	return h.decide(ctx, req)
}
