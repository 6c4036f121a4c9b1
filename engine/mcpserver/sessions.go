package mcpserver

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/leashd/leashd/interactions"
)

// MCP sessions over HTTP. The SDK keeps a session per client until it is
// deleted, but it neither counts them (25,000 sessions held 848 MB) nor
// ends the tool calls of a client that went away: a call waits for a
// person, and the SDK's session close waits for the call, so a DELETE
// hung and the request stayed answerable with nobody to collect the
// answer. The table here caps the sessions, closes idle ones, and
// withdraws a call whose caller is gone (interactions.ErrAskerGone): its
// connection was cut, it cancelled the call, or it ended its session.

// Defaults of Limits.
const (
	DefaultMaxSessions = 1000
	DefaultSessionIdle = 10 * time.Minute
)

// Limits bound what MCP clients hold over HTTP (Handler).
type Limits struct {
	// MaxSessions caps the sessions open at once (default
	// DefaultMaxSessions); past it a new client is refused with 503,
	// naming LEASHD_MCP_MAX_SESSIONS.
	MaxSessions int
	// SessionIdle closes a session no request has used for this long
	// (0: DefaultSessionIdle; negative: never). A tool call waiting for a
	// person, or an open event stream, is a request in progress: that
	// session is never idle.
	SessionIdle time.Duration
	// TakeWait counts a tool call in progress against the cap of requests
	// waiting for a person at once (LEASHD_WEB_MAX_WAITS, shared with the
	// API's long-polls): it returns how to release it, or an error saying
	// why not, which the call returns as its error result. nil: not
	// counted.
	TakeWait func() (release func(), err error)
}

func (l Limits) withDefaults() Limits {
	if l.MaxSessions <= 0 {
		l.MaxSessions = DefaultMaxSessions
	}
	if l.SessionIdle == 0 {
		l.SessionIdle = DefaultSessionIdle
	}
	return l
}

// Header names: the SDK's session header, and the one leashd sets on each
// POST so that a tool call finds the HTTP request it came in (the SDK
// hands the call the request's header, not its context).
const (
	sessionHeader = "Mcp-Session-Id"
	callHeader    = "Leashd-Mcp-Post"
)

// sessionTable is what the handler knows of its sessions.
type sessionTable struct {
	limits Limits
	log    *slog.Logger
	mu     sync.Mutex
	byID   map[string]*liveSession
	posts  map[string]context.Context // POSTs being served, by their callHeader
	seq    uint64
	warned time.Time // when the cap was last logged
}

// liveSession is one session: how many of its requests are being served
// (busy), the timer that closes it once idle, and the cancel functions of
// its tool calls in progress.
type liveSession struct {
	ss    *mcp.ServerSession
	busy  int
	timer *time.Timer
	calls map[uint64]context.CancelCauseFunc
}

func newSessionTable(l Limits, log *slog.Logger) *sessionTable {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &sessionTable{limits: l.withDefaults(), log: log, byID: map[string]*liveSession{}, posts: map[string]context.Context{}}
}

// serve counts r against its session, withdraws a session's calls before
// the SDK closes it (DELETE), and marks each POST so that its tool calls
// end when it does.
func (t *sessionTable) serve(w http.ResponseWriter, r *http.Request, next http.Handler) {
	r.Header.Del(callHeader) // only leashd sets it
	sid := r.Header.Get(sessionHeader)
	switch {
	case sid == "" && r.Method == http.MethodPost:
		defer t.opened(w)
	case sid != "" && r.Method == http.MethodDelete:
		t.end(sid) // the SDK's close waits for the calls: end them first
	case sid != "":
		t.use(sid)
		defer t.used(sid)
	}
	if r.Method == http.MethodPost {
		tok := rand.Text()
		r.Header.Set(callHeader, tok)
		t.mu.Lock()
		t.posts[tok] = r.Context()
		t.mu.Unlock()
		defer func() {
			t.mu.Lock()
			delete(t.posts, tok)
			t.mu.Unlock()
		}()
	}
	next.ServeHTTP(w, r)
}

// opened: the session a POST started (its ID is in the response's
// header), if any, is idle from now on.
func (t *sessionTable) opened(w http.ResponseWriter) {
	if id := w.Header().Get(sessionHeader); id != "" {
		t.used(id)
	}
}

// add registers a session about to be initialized, or returns the error
// that refuses it past the cap. Its initialize request is being served
// (busy). added is false for a session registered already.
func (t *sessionTable) add(ss *mcp.ServerSession) (added bool, err error) {
	id := ss.ID()
	if id == "" {
		return false, nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID[id] != nil {
		return false, nil
	}
	if len(t.byID) >= t.limits.MaxSessions {
		return false, t.refuseLocked()
	}
	ls := &liveSession{ss: ss, busy: 1, calls: map[uint64]context.CancelCauseFunc{}}
	if t.limits.SessionIdle > 0 {
		ls.timer = time.AfterFunc(t.limits.SessionIdle, func() { t.expire(id, ls) })
		ls.timer.Stop() // started when the initialize has been answered (used)
	}
	t.byID[id] = ls
	return true, nil
}

// use marks a request of session id in progress: it is not idle.
func (t *sessionTable) use(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ls := t.byID[id]; ls != nil {
		ls.busy++
		if ls.timer != nil {
			ls.timer.Stop()
		}
	}
}

// used ends what use began; with nothing else in progress the session's
// idle time starts.
func (t *sessionTable) used(id string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ls := t.byID[id]; ls != nil && ls.busy > 0 {
		ls.busy--
		if ls.busy == 0 && ls.timer != nil {
			ls.timer.Reset(t.limits.SessionIdle)
		}
	}
}

// expire closes session id when it has stayed idle (nothing began since
// its timer fired).
func (t *sessionTable) expire(id string, ls *liveSession) {
	t.mu.Lock()
	if t.byID[id] != ls || ls.busy > 0 {
		t.mu.Unlock()
		return
	}
	t.mu.Unlock()
	t.log.Info("closing an MCP session idle longer than LEASHD_MCP_SESSION_IDLE_SECONDS", "session", id, "idle", t.limits.SessionIdle)
	t.end(id)
	_ = ls.ss.Close()
}

// end forgets session id and withdraws its calls in progress.
func (t *sessionTable) end(id string) {
	t.mu.Lock()
	ls := t.byID[id]
	delete(t.byID, id)
	var cancels []context.CancelCauseFunc
	if ls != nil {
		if ls.timer != nil {
			ls.timer.Stop()
		}
		for _, c := range ls.calls {
			cancels = append(cancels, c)
		}
	}
	t.mu.Unlock()
	for _, c := range cancels {
		c(interactions.ErrAskerGone)
	}
}

// refuseLocked is the error that refuses a session past the cap, naming
// the variable; MCP clients show it as the initialize's error. The log
// says so at most once a minute.
func (t *sessionTable) refuseLocked() error {
	msg := fmt.Sprintf("too many MCP sessions: at most %d are open at once (LEASHD_MCP_MAX_SESSIONS); end the sessions you no longer use (DELETE /mcp with their Mcp-Session-Id), wait for idle ones to close (LEASHD_MCP_SESSION_IDLE_SECONDS), or raise LEASHD_MCP_MAX_SESSIONS", t.limits.MaxSessions)
	if time.Since(t.warned) > time.Minute {
		t.warned = time.Now()
		t.log.Warn("refusing new MCP sessions: " + msg)
	}
	return &jsonrpc.Error{Code: codeOverloaded, Message: msg}
}

// codeOverloaded is the JSON-RPC error code of a refusal past a cap (an
// implementation-defined server error).
const codeOverloaded = -32000

// middleware registers each session as it is initialized (refused past
// the cap) and runs each tool call under track.
func (t *sessionTable) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize":
			ss, ok := req.GetSession().(*mcp.ServerSession)
			if !ok {
				return next(ctx, method, req)
			}
			added, err := t.add(ss)
			if err != nil {
				return nil, err
			}
			res, err := next(ctx, method, req)
			if err != nil && added {
				t.end(ss.ID()) // not started: the SDK closes it
			}
			return res, err
		case "tools/call":
			return t.call(ctx, method, req, next)
		}
		return next(ctx, method, req)
	}
}

// call runs a tool call that waits for a person: counted against the
// waits cap, and withdrawn (interactions.ErrAskerGone, which the chat
// shows) when the client cancels it, its POST's connection is cut, or its
// session ends.
func (t *sessionTable) call(ctx context.Context, method string, req mcp.Request, next mcp.MethodHandler) (mcp.Result, error) {
	if t.limits.TakeWait != nil {
		release, err := t.limits.TakeWait()
		if err != nil {
			return toolError(err.Error()), nil
		}
		defer release()
	}
	cctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancel(nil)
	// The SDK cancels ctx on notifications/cancelled.
	defer context.AfterFunc(ctx, func() { cancel(interactions.ErrAskerGone) })()
	defer t.track(req, cancel)()
	return next(cctx, method, req)
}

// track ties a call to its POST and its session until the returned
// function is called. A POST already over means nobody reads the answer
// (there is no event store to resume from): the call is withdrawn at once.
func (t *sessionTable) track(req mcp.Request, cancel context.CancelCauseFunc) (untrack func()) {
	tok := postOf(req)
	sid := ""
	if ss, ok := req.GetSession().(*mcp.ServerSession); ok {
		sid = ss.ID()
	}
	t.mu.Lock()
	post, served := t.posts[tok]
	ls := t.byID[sid]
	t.seq++
	n := t.seq
	if ls != nil {
		ls.calls[n] = cancel
	}
	t.mu.Unlock()
	stop := func() bool { return false }
	switch {
	case served:
		stop = context.AfterFunc(post, func() { cancel(interactions.ErrAskerGone) })
	case tok != "":
		cancel(interactions.ErrAskerGone)
	}
	return func() {
		stop()
		if ls != nil {
			t.mu.Lock()
			delete(ls.calls, n)
			t.mu.Unlock()
		}
	}
}

// postOf is the callHeader of the POST req came in ("" for none).
func postOf(req mcp.Request) string {
	if ex := req.GetExtra(); ex != nil && ex.Header != nil {
		return ex.Header.Get(callHeader)
	}
	return ""
}
