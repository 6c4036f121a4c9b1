package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/leashd/leashd/engine/agent"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/engine/agent/acp"
	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/agent/demo"
	"github.com/leashd/leashd/engine/agent/sandbox"
)

// selectAgent picks the agent LEASHD_AGENT names. auto runs Claude Code when
// LEASHD_CLAUDE_PATH is found and says so when it falls back to the demo
// agent; claude refuses to start without the CLI.
//
// The Claude driver logs its CLI's version in the background, warning when
// it is outside the tested range (a hung CLI does not delay the start).
//
// place, when not nil, wraps the sandbox: with runners on, it places
// agents on runners (runnerserve.go).
func selectAgent(ctx context.Context, cfg config.Config, log *slog.Logger, place func(sandbox.Sandbox) sandbox.Sandbox) (agent.Agent, error) {
	if cfg.Agent == config.AgentDemo {
		return demo.New(), nil
	}
	sb, err := selectSandbox(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	if place != nil {
		sb = place(sb)
	}
	if cfg.Agent == config.AgentACP {
		argv, err := config.SplitCommandLine(cfg.ACPCommand)
		if err != nil {
			return nil, fmt.Errorf("LEASHD_ACP_COMMAND=%q: %w", cfg.ACPCommand, err)
		}
		a := acp.New(argv, acp.WithLogger(log), acp.WithSandbox(sb), acp.WithMaxMessageBytes(cfg.MaxAgentMessageBytes))
		// A command that does not exist stops leashd now, as a missing
		// claude does, not at the first message.
		if err := a.Ready(); err != nil {
			return nil, fmt.Errorf("LEASHD_AGENT=acp: LEASHD_ACP_COMMAND=%q: %w; %s", cfg.ACPCommand, err, a.About().InstallHint)
		}
		return a, nil
	}
	path, err := claude.Find(sb.LookPath, cfg.ClaudePath)
	switch {
	case err == nil:
		a := claude.New(path, claude.WithLogger(log), claude.WithPartialText(true),
			claude.WithMaxMessageBytes(cfg.MaxAgentMessageBytes), claude.WithSandbox(sb))
		go a.LogVersion(ctx)
		return a, nil
	case cfg.Agent == config.AgentAuto && errors.Is(err, agent.ErrAgentNotFound):
		log.Warn("Claude Code not found: using the built-in demo agent (install @anthropic-ai/claude-code, set LEASHD_CLAUDE_PATH, or set LEASHD_AGENT=demo to silence this)",
			"claude_path", cfg.ClaudePath)
		return demo.New(), nil
	default:
		return nil, fmt.Errorf("LEASHD_AGENT=%s: %w", cfg.Agent, err)
	}
}
