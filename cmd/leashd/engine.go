package main

import (
	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent"
	"time"
)

// engineConfig is the engine's part of leashd's configuration, the same for
// `leashd serve` and `leashd chat`.
func engineConfig(cfg config.Config) engine.Config {
	return engine.Config{
		DefaultMode:      agent.Mode(cfg.DefaultMode),
		WorkDir:          cfg.Workdir,
		Model:            cfg.ClaudeModel,
		MaxConcurrent:    cfg.MaxConcurrentAgents,
		Prewarm:          cfg.Prewarm,
		IdleTimeout:      cfg.AgentIdle(),
		TurnTimeout:      cfg.AgentTimeout(),
		MaxTurnOutput:    cfg.MaxTurnOutputBytes,
		ResumeAfterLimit: cfg.ResumeAfterLimitOn(),
		ApprovalQuorum:   cfg.ApprovalQuorum,
		MaxUploadBytes:   int64(cfg.MaxUploadBytes),
		AwayAfter:        time.Duration(cfg.AwayAfterSeconds) * time.Second,
	}
}
