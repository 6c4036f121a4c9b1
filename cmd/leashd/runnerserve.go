package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/leashd/leashd/connectors/web"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent/sandbox"
	"github.com/leashd/leashd/engine/agent/sandbox/remote"
)

// runnersFor is the server's runner hub when LEASHD_RUNNER_TOKENS is set,
// else nil.
func runnersFor(s settings, log *slog.Logger) *remote.Hub {
	if len(s.runner.Tokens) == 0 {
		return nil
	}
	return remote.NewHub(s.runner.Tokens, s.runner.Grace(), log.With("component", "runners"))
}

// placeOn is the sandbox wrapper that places agents on the hub's runners
// (nil without runners): up to LEASHD_LOCAL_AGENTS run here.
func placeOn(hub *remote.Hub, s settings) func(sandbox.Sandbox) sandbox.Sandbox {
	if hub == nil {
		return nil
	}
	localMax := localAgents(s)
	return func(sb sandbox.Sandbox) sandbox.Sandbox {
		return &remote.Placer{Local: sb, LocalMax: localMax, Hub: hub}
	}
}

// localAgents is how many agents the server itself may run
// (LEASHD_LOCAL_AGENTS; unset: LEASHD_MAX_CONCURRENT_AGENTS).
func localAgents(s settings) int {
	if s.local.Agents < 0 {
		return s.MaxConcurrentAgents
	}
	return s.local.Agents
}

// adoptWithin lets an answer given after a restart wait for the agent
// that asked, still on its runner, to be adopted: for as long as the
// runner may take to come back, and some.
func adoptWithin(c engine.Config, hub *remote.Hub, s settings) engine.Config {
	if hub != nil {
		c.AdoptWithin = s.runner.Grace() + 30*time.Second
	}
	return c
}

// useRunners connects the hub and the engine: /runner and /status, the
// slots the runners add (a runner connecting starts queued chats), the
// files agents on runners send, and a lost runner's chats are told.
func useRunners(hub *remote.Hub, eng *engine.Engine, s settings, files *phoneFiles, log *slog.Logger) {
	if hub == nil {
		return
	}
	hub.MaxFileBytes = int64(s.MaxUploadBytes)
	hub.Files = files.fromRunner(hub, log.With("component", "runners"))
	eng.SetRunners(runnerChats{hub: hub, local: localAgents(s)})
	hub.Connected = func(string) { eng.SlotsChanged() }
	// An agent the last run let go of, still running on its runner: the
	// chat carries on with it (a server restart interrupts nobody).
	hub.Adoptable = eng.Adopt
	hub.Lost = func(runner string, chats []string) {
		ended := fmt.Sprintf("Runner %s was lost (disconnected for longer than LEASHD_RUNNER_GRACE_SECONDS); this request ended with its agent. Your next message starts the agent on another runner.", runner)
		for _, c := range chats {
			eng.EndPending(c, ended)
			eng.Tell(context.Background(), c, fmt.Sprintf("⚠️ Runner %s was lost: it has been disconnected for longer than LEASHD_RUNNER_GRACE_SECONDS. Its agent for this chat was given up, with what it was doing; your next message starts the agent on another runner (resuming the session where its files are shared).", runner))
		}
	}
}

// runnerRoutes are the runners' connection endpoint (their own tokens)
// and GET /api/runners (the API's token).
type runnerRoutes struct {
	hub   *remote.Hub
	creds *web.Credentials
}

func (r runnerRoutes) Mount(mux *http.ServeMux) {
	mux.Handle(remote.ConnectPath, r.hub)
	mux.Handle("GET /api/runners", web.RequireCredential(r.creds, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"runners": r.hub.Runners()})
	})))
}

// runnerChats is the engine's view of the hub; local is how many agents
// the server itself may run.
type runnerChats struct {
	hub   *remote.Hub
	local int
}

// Slots implements engine.Runners.
func (rc runnerChats) Slots() int { return rc.local + rc.hub.Capacity() }

// OnRunner implements engine.Runners.
func (rc runnerChats) OnRunner(chat string) bool { return rc.hub.RunnerOf(chat) != "" }

// PutFile implements engine.Runners.
func (rc runnerChats) PutFile(ctx context.Context, chat, path string, data []byte) error {
	return rc.hub.PutFile(ctx, chat, path, data)
}

// Where implements engine.Runners.
func (rc runnerChats) Where(chat string) string {
	name, labels := rc.hub.Placement(chat)
	if name == "" {
		if len(labels) > 0 {
			return "Runner: the next one with labels " + strings.Join(labels, ",")
		}
		return "Runner: none yet (this server, or a runner with room)"
	}
	for _, ri := range rc.hub.Runners() {
		if ri.Name == name {
			state := "connected"
			if !ri.Connected {
				state = "disconnected since " + ri.Since.Format("15:04:05")
			}
			return fmt.Sprintf("Runner: %s (%s, %d of %d agents)", name, state, ri.Agents, ri.MaxAgents)
		}
	}
	return "Runner: " + name
}

// Command implements engine.Runners: /runner, /runner NAME, /runner
// labels a,b, /runner any.
func (rc runnerChats) Command(chat, args string) string {
	fields := strings.Fields(args)
	switch {
	case len(fields) == 0:
		var b strings.Builder
		b.WriteString(rc.Where(chat) + "\nRunners:")
		for _, ri := range rc.hub.Runners() {
			fmt.Fprintf(&b, "\n• %s: %d of %d agents, labels %q, connected %v", ri.Name, ri.Agents, ri.MaxAgents, strings.Join(ri.Labels, ","), ri.Connected)
		}
		return b.String() + "\n/runner NAME pins this chat to a runner, /runner labels a,b asks for labels, /runner any lets leashd choose."
	case fields[0] == "any":
		_ = rc.hub.Pin(chat, "")
		_ = rc.hub.SetLabels(chat, nil)
		return "This chat's next agent goes wherever there is room."
	case fields[0] == "labels" && len(fields) == 2:
		if err := rc.hub.SetLabels(chat, splitLabels(fields[1])); err != nil {
			return "Not set: " + err.Error()
		}
		_ = rc.hub.Pin(chat, "")
		return "This chat's next agent starts on a runner with labels " + fields[1] + "."
	case len(fields) == 1:
		if err := rc.hub.Pin(chat, fields[0]); err != nil {
			return "Not set: " + err.Error() + " (/runner lists them)."
		}
		return "This chat's next agent starts on runner " + fields[0] + " (a running one is not moved; /clear ends it)."
	}
	return "Usage: /runner, /runner NAME, /runner labels a,b or /runner any."
}

// runnerCollector is /metrics' view of the runners: agents, capacity and
// connection state per runner (read at each scrape).
type runnerCollector struct{ hub *remote.Hub }

var (
	runnerAgentsDesc = prometheus.NewDesc("leashd_runner_agents", "Agent processes running on each runner.", []string{"runner"}, nil)
	runnerMaxDesc    = prometheus.NewDesc("leashd_runner_max_agents", "Agents each runner may run at once (its --max-agents).", []string{"runner"}, nil)
	runnerUpDesc     = prometheus.NewDesc("leashd_runner_connected", "1 while a runner is connected, 0 while it is away within the grace period.", []string{"runner"}, nil)
)

func (c runnerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- runnerAgentsDesc
	ch <- runnerMaxDesc
	ch <- runnerUpDesc
}

func (c runnerCollector) Collect(ch chan<- prometheus.Metric) {
	for _, ri := range c.hub.Runners() {
		up := 0.0
		if ri.Connected {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(runnerAgentsDesc, prometheus.GaugeValue, float64(ri.Agents), ri.Name)
		ch <- prometheus.MustNewConstMetric(runnerMaxDesc, prometheus.GaugeValue, float64(ri.MaxAgents), ri.Name)
		ch <- prometheus.MustNewConstMetric(runnerUpDesc, prometheus.GaugeValue, up, ri.Name)
	}
}

// registerRunnerMetrics adds the runners to /metrics.
func registerRunnerMetrics(reg prometheus.Registerer, hub *remote.Hub) {
	if hub != nil {
		reg.MustRegister(runnerCollector{hub})
	}
}
