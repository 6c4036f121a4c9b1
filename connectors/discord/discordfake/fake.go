// Package discordfake is a fake Discord for tests: the Gateway over a
// WebSocket (HELLO, IDENTIFY, READY, heartbeats and their ACKs, RESUME
// with the events missed replayed, then RESUMED) and the REST endpoints
// leashd uses (GET gateway, users/@me, channel messages and their edits,
// threads from a message, interaction callbacks and follow-ups, the bulk
// overwrite of application commands, messages posted with files as
// multipart). People's messages may carry attachments (DMWith, PostWith),
// served from the fake's own CDN route. The real discordgo client talks
// to it: point its HTTP client at URL() in place of https://discord.com/.
//
// Like Discord it refuses what breaks its limits, and records each
// refusal (Rejected): content over 2,000 characters, more than 5 action
// rows or 5 buttons to a row, a custom_id over 100 characters or repeated,
// a select menu with bad options; files over the upload limit (413) or
// more than 10; an interaction answered after 3 s or twice ("Unknown
// interaction"). It answers 429 with retry_after and the
// X-RateLimit headers, per route bucket (SetBucket), globally (SetGlobal)
// or scripted (RateLimit), and counts every request sent while a 429's
// retry_after had not passed (Violations): a client that honours the
// limits has none.
package discordfake

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// The fake's identities.
const (
	BotID   = "100000000000000001"
	AppID   = BotID // a bot's application ID is its user ID
	GuildID = "200000000000000001"
)

// AckDeadline is how long Discord waits for an interaction's response.
const AckDeadline = 3 * time.Second

// User is a person in the fake: their ID, name and roles in the guild.
type User struct {
	ID    string
	Name  string
	Roles []string
}

// Call is one REST request the fake received.
type Call struct {
	Method string
	Path   string // under /api/v<n>/, e.g. "channels/123/messages"
	Status int
	At     time.Time
	Body   json.RawMessage
}

// Message is a message the bot posted (and maybe edited), or one seeded.
type Message struct {
	ID         string
	ChannelID  string
	Content    string
	Components json.RawMessage // as it is now
	Posted     json.RawMessage // as first posted
	Edits      int
	ReplyTo    string // the message it answers, if any
	Mentions   json.RawMessage
	Files      []Upload // the files posted with it (multipart)
}

// Ephemeral is a message only one person sees (an interaction's
// response or follow-up with the ephemeral flag).
type Ephemeral struct {
	User      string
	ChannelID string
	Content   string
}

// Rejection is a request refused because it broke Discord's limits.
type Rejection struct {
	Call   string
	Errors []string
}

// Interaction is an interaction the fake dispatched, and how it was
// answered.
type Interaction struct {
	ID, Token string
	User      string
	ChannelID string
	Sent      time.Time // written to the Gateway
	Responded time.Time
	Response  int // the callback's type
	// Late counts callbacks refused as past AckDeadline or repeated.
	Late int
}

// Server is the fake. Create it with New; Close it when done.
type Server struct {
	Token string

	srv      *httptest.Server
	upgrader websocket.Upgrader

	mu            sync.Mutex
	changed       chan struct{}
	seq           int64
	calls         []Call
	msgs          []*Message
	ephemeral     []Ephemeral
	rejected      []Rejection
	threads       map[string]string // thread → parent channel
	started       map[string]string // message → the thread started from it
	guildChannels map[string]bool
	commands      json.RawMessage
	interactions  map[string]*Interaction
	users         map[string]User
	heartbeat     time.Duration
	contentOff    bool // the Message Content intent is off (DisableMessageContent)
	sessions      map[string]*session
	conns         []*wsConn
	counts        counts
	limits        limits
	cdn           map[string][]byte // attachments people sent, by "<id>/<name>"
	downloads     int
	uploadLimit   int
}

// counts are what the Gateway saw.
type counts struct {
	accepted, identifies, resumes, heartbeats int
}

// New starts a fake Discord accepting token (the bot token, without
// "Bot ").
func New(token string) *Server {
	s := &Server{
		Token:         token,
		changed:       make(chan struct{}, 1),
		seq:           900000000000000000,
		threads:       map[string]string{},
		started:       map[string]string{},
		guildChannels: map[string]bool{},
		interactions:  map[string]*Interaction{},
		users:         map[string]User{},
		heartbeat:     time.Second,
		sessions:      map[string]*session{},
		limits:        newLimits(),
		cdn:           map[string][]byte{},
		uploadLimit:   DefaultUploadLimit,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.rest) // v9 (discordgo v0.29.0) and v10
	mux.HandleFunc("/gateway/", s.gateway)
	mux.HandleFunc("/attachments/", s.serveCDN)
	s.srv = httptest.NewServer(mux)
	return s
}

// URL is what stands for https://discord.com/ (it ends with "/").
func (s *Server) URL() string { return s.srv.URL + "/" }

// Close stops the fake and drops its connections.
func (s *Server) Close() {
	s.mu.Lock()
	for _, c := range s.conns {
		_ = c.c.Close()
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// notify wakes a WaitFor.
func (s *Server) notify() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// nextID is a new snowflake, later than every earlier one. Callers hold
// s.mu.
func (s *Server) nextID() string {
	s.seq++
	return strconv.FormatInt(s.seq, 10)
}

// WaitFor calls cond until it holds or timeout passes, and reports
// whether it held. Call cond without holding anything of the fake's.
func (s *Server) WaitFor(timeout time.Duration, cond func() bool) bool {
	deadline := time.After(timeout)
	for {
		if cond() {
			return true
		}
		select {
		case <-s.changed:
		case <-time.After(10 * time.Millisecond):
		case <-deadline:
			return cond()
		}
	}
}

// Seed adds a message as if the bot had posted it earlier (e.g. before a
// restart) and returns it with its ID.
func (s *Server) Seed(channel, content string, components json.RawMessage) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := &Message{ID: s.nextID(), ChannelID: channel, Content: content, Components: components, Posted: components}
	s.msgs = append(s.msgs, m)
	return *m
}

// Thread makes channel a thread of parent in the guild, as if it had been
// started before (e.g. before a restart).
func (s *Server) Thread(channel, parent string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.threads[channel] = parent
}

// Messages returns copies of the messages posted in channel ("" for all),
// in order.
func (s *Server) Messages(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.msgs {
		if channel == "" || m.ChannelID == channel {
			out = append(out, *m)
		}
	}
	return out
}

// Message returns the message id as it is now.
func (s *Server) Message(id string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.msgs {
		if m.ID == id {
			return *m, true
		}
	}
	return Message{}, false
}

// Ephemerals returns the ephemeral messages sent so far.
func (s *Server) Ephemerals() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ephemeral)
}

// Rejected returns the requests refused for breaking Discord's limits.
func (s *Server) Rejected() []Rejection {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.rejected)
}

// Calls returns the REST requests received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Commands returns the application commands registered last (JSON).
func (s *Server) Commands() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.commands
}

// Interactions returns the interactions dispatched so far.
func (s *Server) Interactions() []Interaction {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Interaction
	for _, it := range s.interactions {
		out = append(out, *it)
	}
	slices.SortFunc(out, func(a, b Interaction) int { return a.Sent.Compare(b.Sent) })
	return out
}

// ThreadOf returns the thread started from message id, if any.
func (s *Server) ThreadOf(parentMessage string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started[parentMessage]
}
