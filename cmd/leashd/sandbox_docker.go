package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/engine/agent/sandbox"
	"github.com/leashd/leashd/engine/agent/sandbox/docker"
)

// dockerSandbox is LEASHD_SANDBOX=docker: a container per agent process
// from LEASHD_SANDBOX_IMAGE. A daemon that does not answer or a missing
// image stops leashd, saying why.
func dockerSandbox(ctx context.Context, cfg config.Config, log *slog.Logger) (sandbox.Sandbox, error) {
	o, err := dockerOptions(cfg)
	if err != nil {
		return nil, fmt.Errorf("LEASHD_SANDBOX=docker: %w", err)
	}
	sb, err := docker.New(ctx, o)
	if err != nil {
		return nil, fmt.Errorf("LEASHD_SANDBOX=docker: %w", err)
	}
	network := "none"
	switch {
	case o.NetworkMode == "host":
		network = "the host's (LEASHD_SANDBOX_NETWORK=host)"
	case o.Network:
		network = "the daemon's default bridge"
	}
	log.Info("agents run in Docker containers, one per agent process: the image read-only, writable only the chat's working directory, the agent's home and a private /tmp, leashd's state hidden, no capabilities, leashd's uid, removed when the session ends",
		"image", o.Image, "daemon", sb.DaemonHost(), "api", sb.APIVersion(), "home", o.Home,
		"network", network, "cpus", limit(cfg.SandboxCpus), "memory", limit(cfg.SandboxMemory),
		"instance", o.Instance, "reaped", sb.Reaped())
	return sb, nil
}

// dockerOptions are the docker sandbox's options from the configuration
// (Validate has checked the numbers).
func dockerOptions(cfg config.Config) (docker.Options, error) {
	o := docker.Options{
		Image:    cfg.SandboxImage,
		Home:     sandboxHome(cfg),
		Hide:     stateHidden(cfg),
		Network:  cfg.SandboxNetwork != "off",
		AgentEnv: cfg.AgentEnv,
		Instance: instanceOf(cfg.StateDir()),
	}
	if cfg.SandboxNetwork == "host" {
		// The host's network, loopback included (a local model gateway);
		// leashd's API there still needs its token.
		o.NetworkMode = "host"
	}
	if cfg.SandboxCpus != "" {
		n, err := strconv.ParseFloat(cfg.SandboxCpus, 64)
		if err != nil {
			return o, fmt.Errorf("LEASHD_SANDBOX_CPUS=%q: %w", cfg.SandboxCpus, err)
		}
		o.CPUs = n
	}
	if cfg.SandboxMemory != "" {
		n, err := config.ParseMemory(cfg.SandboxMemory)
		if err != nil {
			return o, fmt.Errorf("LEASHD_SANDBOX_MEMORY=%q: %w", cfg.SandboxMemory, err)
		}
		o.Memory = n
	}
	return o, nil
}

// instanceOf names a leashd by its state directory: a restarted leashd
// reaps what it left; another leashd on the same daemon (another state
// directory) keeps its containers.
func instanceOf(stateDir string) string {
	abs, err := filepath.Abs(stateDir)
	if err != nil {
		abs = stateDir
	}
	sum := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(sum[:6])
}

func limit(s string) string {
	if s == "" {
		return "no limit"
	}
	return s
}
