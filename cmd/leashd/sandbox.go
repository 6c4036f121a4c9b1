package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/engine/agent/sandbox"
	"github.com/leashd/leashd/engine/agent/sandbox/bwrap"
)

// selectSandbox builds where agents run from LEASHD_SANDBOX. auto uses
// bubblewrap when a trial run works and otherwise says, once, what the
// agent can reach; bwrap and docker that cannot work stop leashd.
func selectSandbox(ctx context.Context, cfg config.Config, log *slog.Logger) (sandbox.Sandbox, error) {
	switch cfg.Sandbox {
	case config.SandboxOff:
		log.Info("agents run unsandboxed, as leashd's own user, with a minimal environment (LEASHD_SANDBOX=off)")
		return &sandbox.Host{AgentEnv: cfg.AgentEnv}, nil
	case config.SandboxDocker:
		return dockerSandbox(ctx, cfg, log)
	}
	w, err := bwrapFor(ctx, cfg)
	switch {
	case err == nil:
		log.Info("agents run in bubblewrap: the system read-only, leashd's state hidden", "home", sandboxHome(cfg), "network", cfg.SandboxNetwork)
		return &sandbox.Host{AgentEnv: cfg.AgentEnv, Wrap: w}, nil
	case cfg.Sandbox == config.SandboxBwrap:
		return nil, fmt.Errorf("LEASHD_SANDBOX=bwrap: %w", err)
	}
	log.Warn("agents run unsandboxed: a command a person allows can read and write everything leashd's user can (but gets no LEASHD_* variable, and the API needs its token); install bubblewrap (apt-get install bubblewrap) where it can create namespaces, or use LEASHD_SANDBOX=docker, or set LEASHD_SANDBOX=off to silence this",
		"why", err.Error())
	return &sandbox.Host{AgentEnv: cfg.AgentEnv}, nil
}

// bwrapFor finds bubblewrap and tries it.
func bwrapFor(ctx context.Context, cfg config.Config) (*bwrap.Wrapper, error) {
	w, err := bwrap.New(bwrap.Options{
		Home:    sandboxHome(cfg),
		Hide:    stateHidden(cfg),
		Network: cfg.SandboxNetwork != "off",
	})
	if err != nil {
		return nil, err
	}
	return w, w.Check(ctx)
}

// stateHidden is what of leashd's no agent may see: the state directory
// (the database, the web token, every chat's worktree), and its files one
// by one, for when the state directory is the agent's working directory.
func stateHidden(cfg config.Config) []string {
	db, dir := cfg.DBPath, cfg.StateDir()
	return []string{dir, db, db + "-wal", db + "-shm", db + "-journal", db + ".lock",
		filepath.Join(dir, config.TokenFileName), filepath.Join(dir, config.VAPIDFileName), filepath.Join(dir, "worktrees")}
}

// sandboxHome is the home a sandboxed agent sees and writes.
func sandboxHome(cfg config.Config) string {
	if cfg.SandboxHome != "" {
		return cfg.SandboxHome
	}
	home, _ := os.UserHomeDir()
	return home
}
