package discordfake

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Gateway opcodes.
const (
	opDispatch     = 0
	opHeartbeat    = 1
	opIdentify     = 2
	opResume       = 6
	opInvalid      = 9
	opHello        = 10
	opHeartbeatAck = 11
)

// Intents leashd needs: guild messages, direct messages, message content.
const (
	intentGuildMessages  = 1 << 9
	intentDirectMessages = 1 << 12
	intentMessageContent = 1 << 15
)

// wsConn is one Gateway connection; writes take mu.
type wsConn struct {
	c       *websocket.Conn
	mu      sync.Mutex
	session *session // set by IDENTIFY or RESUME
}

func (w *wsConn) write(v any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return w.c.WriteJSON(v)
}

// session is a Gateway session: its sequence and every event dispatched
// in it, so a RESUME can replay what the client missed.
type session struct {
	id     string
	seq    int64
	events []event
	conn   *wsConn // nil while disconnected
}

type event struct {
	seq  int64
	typ  string
	data json.RawMessage
	sent func() // called when written (e.g. an interaction's clock starts)
}

type frame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d,omitempty"`
	S  int64           `json:"s,omitempty"`
	T  string          `json:"t,omitempty"`
}

// SetHeartbeat sets the heartbeat interval HELLO announces (default 1s).
func (s *Server) SetHeartbeat(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.heartbeat = d
}

// DisableMessageContent refuses the Message Content intent, as Discord
// does while it is off in the Developer Portal (close code 4014); leashd
// needs it.
func (s *Server) DisableMessageContent() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.contentOff = true
}

// Connected reports how many Gateway connections are open with a session.
func (s *Server) Connected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.conns {
		if c.session != nil && c.session.conn == c {
			n++
		}
	}
	return n
}

// Accepted, Identifies, Resumes and Heartbeats count what the Gateway saw.
func (s *Server) Accepted() int   { return s.count(func(c counts) int { return c.accepted }) }
func (s *Server) Identifies() int { return s.count(func(c counts) int { return c.identifies }) }
func (s *Server) Resumes() int    { return s.count(func(c counts) int { return c.resumes }) }
func (s *Server) Heartbeats() int { return s.count(func(c counts) int { return c.heartbeats }) }

func (s *Server) count(f func(counts) int) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return f(s.counts)
}

// Drop cuts every Gateway connection without a close frame, as a network
// failure does; the sessions stay resumable, and events dispatched
// meanwhile wait for the RESUME.
func (s *Server) Drop() {
	s.mu.Lock()
	conns := slices.Clone(s.conns)
	s.conns = nil
	for _, c := range conns {
		if c.session != nil && c.session.conn == c {
			c.session.conn = nil
		}
	}
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.c.Close()
	}
}

// gateway serves one Gateway connection.
func (s *Server) gateway(w http.ResponseWriter, r *http.Request) {
	c, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	conn := &wsConn{c: c}
	s.mu.Lock()
	s.conns = append(s.conns, conn)
	s.counts.accepted++
	hb := s.heartbeat
	s.mu.Unlock()
	s.notify()
	defer func() {
		s.mu.Lock()
		if conn.session != nil && conn.session.conn == conn {
			conn.session.conn = nil
		}
		s.mu.Unlock()
		_ = c.Close()
	}()
	hello, _ := json.Marshal(map[string]any{"heartbeat_interval": hb.Milliseconds()})
	if conn.write(frame{Op: opHello, D: hello}) != nil {
		return
	}
	for {
		var f frame
		if err := c.ReadJSON(&f); err != nil {
			return
		}
		if !s.gatewayOp(conn, f) {
			return
		}
	}
}

// gatewayOp handles one client frame; false closes the connection.
func (s *Server) gatewayOp(conn *wsConn, f frame) bool {
	switch f.Op {
	case opHeartbeat:
		s.mu.Lock()
		s.counts.heartbeats++
		s.mu.Unlock()
		return conn.write(frame{Op: opHeartbeatAck}) == nil
	case opIdentify:
		return s.identify(conn, f.D)
	case opResume:
		return s.resume(conn, f.D)
	}
	return true
}

func (s *Server) tokenOK(t string) bool {
	return strings.TrimPrefix(t, "Bot ") == s.Token && s.Token != ""
}

// identify starts a new session and sends READY; a bad token or missing
// intents close the connection with Discord's codes.
func (s *Server) identify(conn *wsConn, d json.RawMessage) bool {
	var id struct {
		Token   string `json:"token"`
		Intents int    `json:"intents"`
	}
	_ = json.Unmarshal(d, &id)
	if !s.tokenOK(id.Token) {
		s.closeWith(conn, 4004, "Authentication failed.")
		return false
	}
	need := intentGuildMessages | intentDirectMessages | intentMessageContent
	s.mu.Lock()
	off := s.contentOff
	s.mu.Unlock()
	if id.Intents&need != need || off {
		s.closeWith(conn, 4014, "Disallowed intent(s).") // a privileged intent the application does not have
		return false
	}
	s.mu.Lock()
	s.counts.identifies++
	sess := &session{id: "sess-" + s.nextID(), conn: conn}
	s.sessions[sess.id] = sess
	conn.session = sess
	s.mu.Unlock()
	ready := map[string]any{
		"v": 10, "session_id": sess.id, "resume_gateway_url": strings.Replace(s.srv.URL, "http", "ws", 1) + "/gateway/",
		"user":        map[string]any{"id": BotID, "username": "leashd", "bot": true},
		"application": map[string]any{"id": AppID, "flags": 0},
		"guilds":      []any{map[string]any{"id": GuildID, "unavailable": true}},
	}
	s.dispatch(sess, "READY", ready, nil)
	s.notify()
	return true
}

// resume takes a session back and replays the events after the client's
// sequence, then RESUMED; an unknown session gets INVALID_SESSION.
func (s *Server) resume(conn *wsConn, d json.RawMessage) bool {
	var r struct {
		Token     string `json:"token"`
		SessionID string `json:"session_id"`
		Seq       int64  `json:"seq"`
	}
	_ = json.Unmarshal(d, &r)
	s.mu.Lock()
	sess := s.sessions[r.SessionID]
	if !s.tokenOK(r.Token) || sess == nil {
		s.mu.Unlock()
		return conn.write(frame{Op: opInvalid, D: json.RawMessage("false")}) == nil
	}
	s.counts.resumes++
	sess.conn = conn
	conn.session = sess
	var missed []event
	for _, e := range sess.events {
		if e.seq > r.Seq {
			missed = append(missed, e)
		}
	}
	s.mu.Unlock()
	for _, e := range missed {
		if e.sent != nil {
			e.sent() // before the write: the client may answer at once
		}
		if conn.write(frame{Op: opDispatch, S: e.seq, T: e.typ, D: e.data}) != nil {
			return false
		}
	}
	s.dispatch(sess, "RESUMED", map[string]any{}, nil)
	s.notify()
	return true
}

func (s *Server) closeWith(conn *wsConn, code int, text string) {
	conn.mu.Lock()
	_ = conn.c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, text), time.Now().Add(time.Second))
	conn.mu.Unlock()
}

// dispatch sends an event in sess now, or keeps it for a RESUME when the
// session is disconnected. sent runs as it is written.
func (s *Server) dispatch(sess *session, typ string, data any, sent func()) {
	raw, _ := json.Marshal(data)
	s.mu.Lock()
	sess.seq++
	e := event{seq: sess.seq, typ: typ, data: raw, sent: sent}
	sess.events = append(sess.events, e)
	conn := sess.conn
	s.mu.Unlock()
	if conn == nil {
		return
	}
	if sent != nil {
		sent() // before the write: the client may answer at once
	}
	_ = conn.write(frame{Op: opDispatch, S: e.seq, T: typ, D: raw})
}

// current is the newest session (the one a client identified last).
func (s *Server) current() *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	var last *session
	for _, sess := range s.sessions {
		if last == nil || sess.id > last.id {
			last = sess
		}
	}
	return last
}
