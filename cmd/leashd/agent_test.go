package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/config"
)

// LEASHD_AGENT=acp runs the command LEASHD_ACP_COMMAND names, split like a
// shell would; the agent says which program it runs.
func TestSelectAgentACP(t *testing.T) {
	cfg := config.Defaults()
	cfg.Agent, cfg.ACPCommand = config.AgentACP, `"`+fakeProgram(t, "my agents", "gemini")+`" --acp`
	a, err := selectAgent(context.Background(), cfg, slog.New(slog.DiscardHandler), nil)
	require.NoError(t, err)
	assert.Equal(t, "acp", a.Name())
	assert.Equal(t, "the ACP agent gemini", a.About().Label)

	cfg.ACPCommand = "gemini --acp | tee log"
	_, err = selectAgent(context.Background(), cfg, slog.New(slog.DiscardHandler), nil)
	assert.ErrorContains(t, err, "needs a shell, and none is run")
}

// fakeProgram makes an executable named name in a directory named dir.
func fakeProgram(t *testing.T, dir, name string) string {
	t.Helper()
	d := filepath.Join(t.TempDir(), dir)
	require.NoError(t, os.MkdirAll(d, 0o755))
	p := filepath.Join(d, name)
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755))
	return p
}
