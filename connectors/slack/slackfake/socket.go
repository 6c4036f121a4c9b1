package slackfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// wsConn is one Socket Mode connection; writes take mu.
type wsConn struct {
	c  *websocket.Conn
	mu sync.Mutex
}

// write sends v as JSON, giving up after 5s.
func (w *wsConn) write(v any) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_ = w.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return w.c.WriteJSON(v)
}

// Disconnect asks every Socket Mode client to reconnect, as Slack does
// before it recycles a connection.
func (s *Server) Disconnect() {
	s.mu.Lock()
	conns := slices.Clone(s.conns)
	s.mu.Unlock()
	for _, c := range conns {
		_ = c.write(map[string]any{"type": "disconnect", "reason": "refresh_requested"})
	}
}

// ws serves one Socket Mode connection: hello, pings, and the
// acknowledgements the client sends back (Acked).
func (s *Server) ws(w http.ResponseWriter, r *http.Request) {
	c, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	conn := &wsConn{c: c}
	s.mu.Lock()
	s.conns = append(s.conns, conn)
	s.accepted++
	s.mu.Unlock()
	s.notify()
	_ = conn.write(map[string]any{"type": "hello", "num_connections": 1, "connection_info": map[string]any{"app_id": "A1"}})
	stop := make(chan struct{})
	go func() { // Slack pings; the client reconnects when it hears none
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				conn.mu.Lock()
				err := c.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(time.Second))
				conn.mu.Unlock()
				if err != nil {
					return
				}
			}
		}
	}()
	defer close(stop)
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			s.mu.Lock()
			s.conns = slices.DeleteFunc(s.conns, func(x *wsConn) bool { return x == conn })
			s.mu.Unlock()
			return
		}
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &ack) == nil && ack.EnvelopeID != "" {
			s.mu.Lock()
			s.acks[ack.EnvelopeID] = Ack{EnvelopeID: ack.EnvelopeID, Payload: ack.Payload, At: time.Now()}
			s.mu.Unlock()
			s.notify()
		}
	}
}

// Connected reports how many Socket Mode connections are open.
func (s *Server) Connected() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Accepted counts the Socket Mode connections ever opened.
func (s *Server) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// Push sends an envelope of this type ("events_api", "interactive",
// "slash_commands") with payload on the newest Socket Mode connection and
// returns its envelope ID. retry > 0 marks it as Slack's retry_attempt.
func (s *Server) Push(typ string, payload any, retry int) (string, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	if len(s.conns) == 0 {
		s.mu.Unlock()
		return "", fmt.Errorf("slackfake: no Socket Mode connection")
	}
	conn := s.conns[len(s.conns)-1]
	s.envSeq++
	id := fmt.Sprintf("env-%d", s.envSeq)
	s.sent[id] = time.Now()
	s.mu.Unlock()
	env := map[string]any{"envelope_id": id, "type": typ, "payload": json.RawMessage(raw), "accepts_response_payload": typ != "events_api", "retry_attempt": retry, "retry_reason": ""}
	if retry > 0 {
		env["retry_reason"] = "timeout"
	}
	return id, conn.write(env)
}

// Acked returns the acknowledgement of envelope id, if it arrived.
func (s *Server) Acked(id string) (Ack, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.acks[id]
	return a, ok
}

// AckDelay is how long the acknowledgement of id took, once it arrived.
func (s *Server) AckDelay(id string) (time.Duration, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.acks[id]
	if !ok {
		return 0, false
	}
	return a.At.Sub(s.sent[id]), true
}
