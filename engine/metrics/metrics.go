// Package metrics exposes leashd's Prometheus metrics and its health
// endpoints. A Metrics has its own registry (no global state): it counts the
// engine's turns and sessions (engine.Metrics), what connectors send
// (connectors.Stats), and follows the interaction coordinator's events for
// pending, resolved and answer-time series, logging each interaction once
// when asked and once when resolved.
//
// Every series is present from start-up, at zero, for the known interaction
// kinds, statuses and connectors.
package metrics

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/leashd/leashd/interactions"
)

// Kinds, Statuses and Connectors are the label values present from start-up.
// Connectors are the chat apps whose APIs leashd sends to and that rate-limit
// it; the web page and the terminal have no outbound API to count.
var (
	Kinds      = []interactions.Kind{interactions.KindQuestion, interactions.KindPlanReview, interactions.KindToolApproval}
	Statuses   = []interactions.Status{interactions.StatusAnswered, interactions.StatusRejected, interactions.StatusExpired, interactions.StatusCancelled, interactions.StatusInterrupted}
	Connectors = []string{"telegram", "slack"}
	// StoreOps are the store's writes (store.Ops; a test keeps them equal).
	StoreOps = []string{"requested", "presented", "resolved", "recovered", "interrupt", "session", "file", "again", "selected", "notice", "approved", "turn", "push"}
)

// AnswerBuckets are the bounds (seconds) of leashd_interaction_answer_seconds:
// a person answers in seconds to an hour.
var AnswerBuckets = []float64{0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600}

// Metrics holds leashd's series. Use New; its methods are safe for
// concurrent use.
type Metrics struct {
	reg       *prometheus.Registry
	log       *slog.Logger
	noRuntime bool

	pending     *prometheus.GaugeVec
	resolved    *prometheus.CounterVec
	answer      *prometheus.HistogramVec
	turns       prometheus.Counter
	agentErrors prometheus.Counter
	outbound    *prometheus.CounterVec
	rateLimited *prometheus.CounterVec
	sessions    prometheus.Gauge
	storeErrors *prometheus.CounterVec
}

// Option configures New.
type Option func(*Metrics)

// WithLogger logs every interaction once when asked and once when resolved
// (chat, kind, id, status, latency) while Watch runs. Without it nothing is
// logged. (The coordinator can log the same lines itself with
// interactions.WithLogger; give the logger to one of them.)
func WithLogger(l *slog.Logger) Option { return func(m *Metrics) { m.log = l } }

// WithoutRuntimeCollectors leaves out the Go runtime and process series
// (go_*, process_*), e.g. in benchmarks.
func WithoutRuntimeCollectors() Option { return func(m *Metrics) { m.noRuntime = true } }

// New returns Metrics registered on a registry of their own, with the Go
// runtime and process collectors (go_*, process_resident_memory_bytes…).
func New(opts ...Option) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "leashd_interactions_pending",
			Help: "Interactions (questions, plan reviews, tool approvals) waiting for a person.",
		}, []string{"kind"}),
		resolved: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leashd_interactions_resolved_total",
			Help: "Interactions resolved, by kind and status (answered, rejected, expired, cancelled, interrupted).",
		}, []string{"kind", "status"}),
		answer: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "leashd_interaction_answer_seconds",
			Help:    "Time from asking to a person's answer (answered or rejected; not expired, cancelled or interrupted).",
			Buckets: AnswerBuckets,
		}, []string{"kind"}),
		turns: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "leashd_agent_turns_total",
			Help: "Agent turns finished (including failed ones).",
		}),
		agentErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "leashd_agent_errors_total",
			Help: "Agent turns that failed: the agent could not run, or its result was an error. A turn stopped with /stop is not an error.",
		}),
		outbound: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leashd_outbound_messages_total",
			Help: "Messages sent or edited in chat apps, by connector.",
		}, []string{"connector"}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leashd_outbound_rate_limited_total",
			Help: "Times a chat app answered 429 (rate limited), by connector.",
		}, []string{"connector"}),
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "leashd_sessions_active",
			Help: "Agent processes running.",
		}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leashd_store_errors_total",
			Help: "Database writes that failed (disk full, I/O error, read-only or deleted file), by op: requested, presented, resolved, recovered, interrupt, session; file counts the database file found deleted or replaced.",
		}, []string{"op"}),
	}
	for _, o := range opts {
		o(m)
	}
	m.reg.MustRegister(m.pending, m.resolved, m.answer, m.turns, m.agentErrors, m.outbound, m.rateLimited, m.sessions, m.storeErrors)
	if !m.noRuntime {
		m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	}
	for _, k := range Kinds {
		m.pending.WithLabelValues(string(k))
		m.answer.WithLabelValues(string(k))
		for _, s := range Statuses {
			m.resolved.WithLabelValues(string(k), string(s))
		}
	}
	for _, c := range Connectors {
		m.outbound.WithLabelValues(c)
		m.rateLimited.WithLabelValues(c)
	}
	for _, op := range StoreOps {
		m.storeErrors.WithLabelValues(op)
	}
	return m
}

// Registry is where the series are registered, for adding more or for
// gathering them in tests.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text format (/metrics).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, ErrorHandling: promhttp.ContinueOnError})
}

// TurnFinished counts an agent turn, and an error when err is set (other
// than a cancellation: /stop, shutdown) or the agent reported one.
func (m *Metrics) TurnFinished(err error, isError bool) {
	m.turns.Inc()
	if isError || (err != nil && !errors.Is(err, context.Canceled)) {
		m.agentErrors.Inc()
	}
}

// SessionsActive sets the number of running agent processes.
func (m *Metrics) SessionsActive(n int) { m.sessions.Set(float64(n)) }

// Outbound counts a message sent or edited by connector.
func (m *Metrics) Outbound(connector string) { m.outbound.WithLabelValues(connector).Inc() }

// StoreError counts a failed database write (store.ErrorCounter).
func (m *Metrics) StoreError(op string) { m.storeErrors.WithLabelValues(op).Inc() }

// RateLimited counts a 429 answer to connector.
func (m *Metrics) RateLimited(connector string) { m.rateLimited.WithLabelValues(connector).Inc() }

// Watch follows coord's events: it subscribes before returning (so nothing
// asked after Watch returns is missed), then counts and logs in the
// background until ctx is done, after which it still handles every event
// published before. The returned function waits for that to finish.
//
// Interactions interrupted at shutdown are resolved after the engine's
// context ends; to count and log them, give Watch a context that ends after
// the engine has stopped.
func (m *Metrics) Watch(ctx context.Context, coord *interactions.Coordinator) (wait func()) {
	events, unsubscribe := coord.Subscribe()
	done := make(chan struct{})
	go func() {
		<-ctx.Done()
		unsubscribe()
	}()
	go func() {
		defer close(done)
		for ev := range events { // closed after unsubscribe, once drained
			m.Observe(ev)
		}
	}()
	return func() { <-done }
}

// Observe applies one coordinator event: Watch calls it for each.
func (m *Metrics) Observe(ev interactions.Event) {
	it := ev.Interaction
	kind := string(it.Kind)
	switch ev.Type {
	case interactions.EventRequested:
		m.pending.WithLabelValues(kind).Inc()
		if m.log != nil {
			m.log.Info("interaction asked", "chat", it.ChatID, "kind", kind, "id", it.ID)
		}
	case interactions.EventResolved:
		res := ev.Resolution
		m.pending.WithLabelValues(kind).Dec()
		m.resolved.WithLabelValues(kind, string(res.Status)).Inc()
		latency := res.At.Sub(it.AskedAt)
		if latency < 0 {
			latency = 0
		}
		if res.Status == interactions.StatusAnswered || res.Status == interactions.StatusRejected {
			m.answer.WithLabelValues(kind).Observe(latency.Seconds())
		}
		if m.log != nil {
			m.log.Info("interaction resolved", "chat", it.ChatID, "kind", kind, "id", it.ID,
				"status", string(res.Status), "latency", latency, "by", res.By)
		}
	}
}
