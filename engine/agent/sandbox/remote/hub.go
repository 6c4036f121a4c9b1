package remote

import (
	"bufio"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/hashicorp/yamux"
)

// DefaultGrace is how long a runner may be away before its agents are
// given up (LEASHD_RUNNER_GRACE_SECONDS).
const DefaultGrace = 30 * time.Second

// Hub is the server's side: it takes runners' connections (ServeHTTP),
// places agents on them (Start) and keeps each runner's agents through a
// broken connection for the grace period. Create it with NewHub.
type Hub struct {
	tokens [][]byte
	grace  time.Duration
	log    *slog.Logger
	// Lost, when set, is called once a runner has been away longer than
	// the grace period, with the chats whose agents it held, before those
	// agents are given up.
	Lost func(runner string, chats []string)
	// Connected, when set, is called after a runner connected: there may
	// be room for chats that wait.
	Connected func(runner string)
	// Adoptable, when set, is called once for each chat whose agent a
	// connecting runner holds that an earlier server let go of (an
	// orphan): Adopt(chat) takes it over. One not adopted within the
	// grace period is ended.
	Adoptable func(chat string)
	// Files, when set, takes a file an agent on the named runner sent;
	// its string is the answer for the agent, its error is shown to the
	// agent. nil: files from runners are refused with an error saying
	// this server takes none.
	Files func(ctx context.Context, runner string, f FileUpload) (string, error)
	// MaxFileBytes bounds one file from a runner; ≤ 0 means
	// DefaultMaxFileBytes.
	MaxFileBytes int64
	// fileWait, when set, replaces the waits for a file request and its
	// bytes (fileWaits): tests need no minutes.
	fileWait time.Duration

	mu      sync.Mutex
	runners map[string]*runnerState
	procs   map[string]*proc   // by ID, while they run
	orphans map[string]*orphan // by ID, until adopted
	// givenUp are the processes of runners lost: their chats were told
	// the agent is gone, so when the runner comes back they are ended,
	// never adopted. Bounded by maxGivenUp.
	givenUp map[string]bool
	pinned  map[string]string   // chat → runner it stays on
	labels  map[string][]string // chat → labels its runner must have
}

// runnerState is a runner the server knows: connected, or away for less
// than the grace period.
type runnerState struct {
	name      string
	labels    []string
	max       int
	conn      *runnerConn // nil while away
	since     time.Time   // connected or away since
	lostTimer *time.Timer
}

// NewHub returns a Hub accepting any of tokens; grace ≤ 0 is DefaultGrace.
func NewHub(tokens []string, grace time.Duration, log *slog.Logger) *Hub {
	if grace <= 0 {
		grace = DefaultGrace
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h := &Hub{grace: grace, log: log, runners: map[string]*runnerState{}, procs: map[string]*proc{},
		orphans: map[string]*orphan{}, givenUp: map[string]bool{}, pinned: map[string]string{}, labels: map[string][]string{}}
	for _, t := range tokens {
		if t != "" {
			h.tokens = append(h.tokens, []byte(t))
		}
	}
	return h
}

// authorized compares the request's bearer token with every token in
// constant time (no early exit on the first match either).
func (h *Hub) authorized(r *http.Request) bool {
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	match := 0
	for _, t := range h.tokens {
		match |= subtle.ConstantTimeCompare([]byte(got), t)
	}
	return match == 1
}

// ServeHTTP takes one runner's connection and serves it until it ends.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(r) {
		// Never log what was presented: a near-miss is half a secret.
		h.log.Warn("a runner was refused: wrong or missing token", "remote", r.RemoteAddr)
		http.Error(w, "wrong or missing runner token (Authorization: Bearer, one of LEASHD_RUNNER_TOKENS)", http.StatusUnauthorized)
		return
	}
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		h.log.Warn("a runner's connection could not be upgraded", "remote", r.RemoteAddr, "err", err)
		return
	}
	ctx := context.WithoutCancel(r.Context())
	nc := websocket.NetConn(ctx, c, websocket.MessageBinary)
	sess, err := yamux.Client(nc, muxConfig())
	if err != nil {
		nc.Close()
		return
	}
	defer sess.Close()
	rc, hl, adopt, err := h.greet(sess)
	if err != nil {
		h.log.Warn("a runner was refused", "remote", r.RemoteAddr, "err", err)
		return
	}
	h.log.Info("runner connected", "runner", hl.Name, "remote", r.RemoteAddr, "labels", hl.Labels, "max_agents", hl.MaxAgents, "agents", len(hl.Procs))
	go h.serveStreams(rc)
	h.connected(rc, hl)
	if h.Connected != nil {
		h.Connected(hl.Name)
	}
	if h.Adoptable != nil && len(adopt) > 0 {
		go func() {
			for _, chat := range adopt {
				h.Adoptable(chat)
			}
		}()
	}
	rc.control(h)
	h.away(rc)
}

// greet opens the control stream and reads the runner's hello; it
// returns the chats of the orphans it holds (sortUnknown).
func (h *Hub) greet(sess *yamux.Session) (*runnerConn, hello, []string, error) {
	var hl hello
	st, err := sess.OpenStream()
	if err != nil {
		return nil, hl, nil, err
	}
	_ = st.SetDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(st)
	if err := readMsg(br, &hl); err != nil {
		return nil, hl, nil, fmt.Errorf("reading its hello: %w", err)
	}
	if err := hl.check(); err != nil {
		_ = writeMsg(st, welcome{Error: err.Error()})
		return nil, hl, nil, fmt.Errorf("its hello: %w", err)
	}
	end, adopt := h.sortUnknown(hl)
	if err := writeMsg(st, welcome{End: end, MaxFileBytes: h.maxFileBytes()}); err != nil {
		return nil, hl, nil, err
	}
	_ = st.SetDeadline(time.Time{})
	return &runnerConn{name: hl.Name, sess: sess, ctl: st, br: br}, hl, adopt, nil
}

// connected records a runner's connection, replacing an earlier one of the
// same name, and re-attaches the processes it still holds.
func (h *Hub) connected(rc *runnerConn, hl hello) {
	h.mu.Lock()
	rs := h.runners[hl.Name]
	if rs == nil {
		rs = &runnerState{name: hl.Name}
		h.runners[hl.Name] = rs
	}
	old := rs.conn
	rs.labels, rs.max, rs.conn, rs.since = slices.Clone(hl.Labels), hl.MaxAgents, rc, time.Now()
	if rs.lostTimer != nil {
		rs.lostTimer.Stop()
		rs.lostTimer = nil
	}
	var mine []*proc
	for _, p := range h.procs {
		if p.runner == hl.Name {
			mine = append(mine, p)
		}
	}
	h.mu.Unlock()
	if old != nil {
		old.sess.Close()
	}
	held := map[string]procInfo{}
	for _, pi := range hl.Procs {
		held[pi.ID] = pi
	}
	for _, p := range mine {
		pi, ok := held[p.id]
		switch {
		case !ok:
			p.exit(fmt.Errorf("runner %s no longer has the agent (it restarted)", hl.Name))
		case pi.Exited:
			p.exit(exitError(pi.Err))
		default:
			go p.reattach(rc)
		}
		delete(held, p.id)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, pi := range held {
		switch {
		case pi.Exited:
		case h.orphans[pi.ID] != nil:
			h.log.Info("an agent an earlier server let go of waits to be adopted", "runner", hl.Name, "pid", pi.PID, "chat", pi.Chat, "acked", pi.Acked)
		default:
			// The welcome told the runner to end it: nobody here reads it.
			h.log.Info("the runner ends an agent this server does not know", "runner", hl.Name, "pid", pi.PID, "chat", pi.Chat)
		}
	}
}

// away records that a runner's connection ended, and gives its agents up
// when it is not back within the grace period.
func (h *Hub) away(rc *runnerConn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	rs := h.runners[rc.name]
	if rs == nil || rs.conn != rc {
		return // replaced by a newer connection
	}
	rs.conn, rs.since = nil, time.Now()
	h.log.Warn("runner disconnected; its agents wait for it", "runner", rc.name, "grace", h.grace)
	for _, p := range h.procs {
		if p.runner == rc.name {
			p.detach(rc)
		}
	}
	rs.lostTimer = time.AfterFunc(h.grace, func() { h.lose(rs) })
}

// lose gives up a runner that stayed away: its agents end (their
// sessions see an error naming it), its chats go elsewhere next time.
func (h *Hub) lose(rs *runnerState) {
	h.mu.Lock()
	if rs.conn != nil || h.runners[rs.name] != rs {
		h.mu.Unlock()
		return
	}
	delete(h.runners, rs.name)
	var procs []*proc
	var chats []string
	for _, p := range h.procs {
		if p.runner == rs.name {
			procs = append(procs, p)
			if p.chat != "" {
				chats = append(chats, p.chat)
			}
		}
	}
	for chat, r := range h.pinned {
		if r == rs.name {
			delete(h.pinned, chat)
		}
	}
	for id, o := range h.orphans {
		if o.runner == rs.name {
			o.timer.Stop()
			delete(h.orphans, id)
			h.giveUpLocked(id)
		}
	}
	for _, p := range procs {
		h.giveUpLocked(p.id)
	}
	h.mu.Unlock()
	h.log.Warn("runner lost: away longer than the grace period; its agents are given up", "runner", rs.name, "grace", h.grace, "agents", len(procs))
	// The chats hear it first, while their agents still run: what was
	// pending there ends with the runner's name, not with the generic
	// "the agent stopped" of a turn whose process ended.
	if h.Lost != nil && len(chats) > 0 {
		slices.Sort(chats)
		h.Lost(rs.name, slices.Compact(chats))
	}
	err := &LostError{Runner: rs.name, Grace: h.grace}
	for _, p := range procs {
		p.exit(err)
	}
}

// LostError ends the agents of a runner that stayed away too long.
type LostError struct {
	Runner string
	Grace  time.Duration
}

func (e *LostError) Error() string {
	return fmt.Sprintf("runner %s was lost (no connection for %s); the agent there was given up, and the next prompt starts it on another runner", e.Runner, e.Grace)
}

// exitError is the error an exit reported as text stands for.
func exitError(s string) error {
	if s == "" {
		return nil
	}
	return errors.New(s)
}

// forget drops a process that ended.
func (h *Hub) forget(p *proc) {
	h.mu.Lock()
	if h.procs[p.id] == p {
		delete(h.procs, p.id)
	}
	h.mu.Unlock()
}
