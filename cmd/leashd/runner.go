package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/engine/agent/claude"
	"github.com/leashd/leashd/engine/agent/sandbox"
	"github.com/leashd/leashd/engine/agent/sandbox/remote"
	"github.com/leashd/leashd/engine/mcpserver"
)

// runRunner is `leashd runner`: it dials the server and runs the agents
// the server places on it, with this machine's agent, sandbox and working
// directory settings. Flags override the LEASHD_RUNNER_* variables.
func runRunner(ctx context.Context, s settings, args []string, stderr io.Writer) error {
	r := *s.runner
	fs := flag.NewFlagSet("leashd runner", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&r.Server, "server", r.Server, "the leashd server's URL (LEASHD_RUNNER_SERVER)")
	fs.StringVar(&r.Token, "token", r.Token, "one of the server's LEASHD_RUNNER_TOKENS (LEASHD_RUNNER_TOKEN)")
	fs.StringVar(&r.Name, "name", r.Name, "this runner's name (LEASHD_RUNNER_NAME; default: the host name)")
	fs.IntVar(&r.MaxAgents, "max-agents", r.MaxAgents, "agents it runs at once (LEASHD_RUNNER_MAX_AGENTS)")
	labels := fs.String("labels", strings.Join(r.Labels, ","), "its labels, comma-separated (LEASHD_RUNNER_LABELS)")
	fs.StringVar(&r.Workdir, "workdir", r.Workdir, "where its agents work (LEASHD_RUNNER_WORKDIR; default: the current directory)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	r.Labels = splitLabels(*labels)
	if err := r.CheckRunner(); err != nil {
		return err
	}
	name, err := runnerName(r.Name)
	if err != nil {
		return err
	}
	for _, l := range r.Labels {
		if err := remote.CheckName("LEASHD_RUNNER_LABELS (--labels): label", l); err != nil {
			return err
		}
	}
	dir := r.Workdir
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return err
		}
	}
	log, err := config.NewLogger(s.Config, stderr, append(s.secrets(), r.Token)...)
	if err != nil {
		return err
	}
	sb, err := selectSandbox(ctx, s.Config, log)
	if err != nil {
		return err
	}
	rn := &remote.Runner{URL: r.Server, Token: r.Token, Name: name, Labels: r.Labels, MaxAgents: r.MaxAgents,
		Sandbox: sb, Dir: dir, Log: log}
	// send_file reads here, where the agent's files are, and hands the
	// bytes to the server over the runner's connection.
	send, err := mcpserver.NewRunnerSendServer(dir, int64(s.MaxUploadBytes), func(ctx context.Context, chat, cred, name, caption string, data []byte) (string, error) {
		return rn.SendFile(ctx, remote.FileUpload{Chat: chat, Credential: cred, Name: name, Caption: caption, Data: data})
	}, log.With("component", "send_file"))
	if err != nil {
		return err
	}
	defer send.Close()
	if rn.Local, err = runnerLocal(s.Config, dir, send); err != nil {
		return err
	}
	log.Info("leashd runner starting", "server", r.Server, "name", name, "max_agents", r.MaxAgents, "labels", r.Labels, "workdir", dir, "sandbox", sb.Name())
	return rn.Run(ctx)
}

// runnerName is the runner's name: given, or the host name made valid.
func runnerName(name string) (string, error) {
	if name == "" {
		host, err := os.Hostname()
		if err != nil {
			return "", fmt.Errorf("no --name and no host name: %w", err)
		}
		name = strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-' || r == '_' {
				return r
			}
			return '-'
		}, host)
		name = name[:min(len(name), 64)]
	}
	return name, remote.CheckName("LEASHD_RUNNER_NAME (--name)", name)
}

func splitLabels(s string) []string {
	var out []string
	for _, l := range strings.Split(s, ",") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// runnerLocal maps the server's spec to this machine. The server's
// program path and working directory are the server's: the runner runs
// its own agent (LEASHD_AGENT with its LEASHD_CLAUDE_PATH or
// LEASHD_ACP_COMMAND) in its own working directory. What a driver says
// through its arguments stays: for Claude Code they are the protocol's
// flags (mode, model, --resume, which finds the session files here
// because a chat stays on its runner), but leashd's send_file server is
// this runner's (send), not the server's loopback address, and the
// session's credential is granted there for its chat; an ACP
// agent's are the operator's, so the runner's LEASHD_ACP_COMMAND gives
// them. The driver's variables pass, on top of this runner's minimal
// environment.
func runnerLocal(cfg config.Config, dir string, send sendGranter) (func(sandbox.Spec) (sandbox.Spec, error), error) {
	switch cfg.Agent {
	case config.AgentDemo:
		return nil, errors.New("LEASHD_AGENT=demo runs inside the server, not on a runner; set LEASHD_AGENT=claude or acp here")
	case config.AgentACP:
		argv, err := config.SplitCommandLine(cfg.ACPCommand)
		if err != nil || len(argv) == 0 {
			return nil, fmt.Errorf("LEASHD_ACP_COMMAND=%q: give the ACP agent's command line", cfg.ACPCommand)
		}
		return func(spec sandbox.Spec) (sandbox.Spec, error) {
			spec.Path, spec.Dir = argv[0], dir
			if spec.Name != "version" {
				spec.Args = argv[1:]
			}
			return spec, nil
		}, nil
	}
	path := cmpOr(cfg.ClaudePath, claude.DefaultProgram)
	return func(spec sandbox.Spec) (sandbox.Spec, error) {
		spec.Path, spec.Dir = path, dir
		args, credVar, err := localMCPConfig(spec.Args, send.URL())
		if err != nil {
			return spec, err
		}
		spec.Args = args
		if cred := bearerIn(spec.Env, credVar); cred != "" {
			send.Grant(cred, spec.Name)
		}
		return spec, nil
	}, nil
}

// sendGranter is the runner's send_file server (mcpserver.RunnerSendServer).
type sendGranter interface {
	URL() string
	Grant(credential, chat string)
}

// bearerIn is the bearer credential in the variable name of env, or "".
func bearerIn(env []string, name string) string {
	if name == "" {
		return ""
	}
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			cred, _ := strings.CutPrefix(v, "Bearer ")
			return cred
		}
	}
	return ""
}

// localMCPConfig points leashd's server in a Claude Code command line's
// inline --mcp-config at this runner's send_file address; the rest of
// the arguments, and the other servers, stay as they are. credVar names
// the variable that holds the session's credential (the header is
// "${NAME}"), "" without one.
func localMCPConfig(args []string, sendURL string) (out []string, credVar string, err error) {
	out = slices.Clone(args)
	for i := 0; i+1 < len(out); i++ {
		if out[i] != "--mcp-config" {
			continue
		}
		var cfg map[string]map[string]json.RawMessage
		if err := json.Unmarshal([]byte(out[i+1]), &cfg); err != nil {
			return nil, "", fmt.Errorf("the server's --mcp-config is not inline JSON (is the server older than this runner?): %w", err)
		}
		own, ok := cfg["mcpServers"][mcpserver.SendServerName]
		if !ok {
			continue
		}
		var entry map[string]any
		if err := json.Unmarshal(own, &entry); err != nil {
			return nil, "", fmt.Errorf("the server's --mcp-config: %w", err)
		}
		entry["url"] = sendURL
		if h, ok := entry["headers"].(map[string]any); ok {
			ref, _ := h["Authorization"].(string)
			if name, ok := strings.CutPrefix(ref, "${"); ok {
				credVar = strings.TrimSuffix(name, "}")
			}
		}
		b, _ := json.Marshal(entry)
		cfg["mcpServers"][mcpserver.SendServerName] = b
		b, _ = json.Marshal(cfg)
		out[i+1] = string(b)
	}
	return out, credVar, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
