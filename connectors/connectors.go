// Package connectors defines how chat apps plug into leashd: a Connector
// receives people's messages and taps and hands them to a Handler (the
// engine); the engine sends output back through the Connector's Output
// methods. Sub-packages implement it for Telegram, Slack, the web page and
// the terminal. A chat app that leashd serves also implements App (its
// settings, checks, secrets and connector), so that adding one is a
// package here and one line in cmd/leashd's list of chat apps. Nothing here
// knows which agent runs behind the engine.
package connectors

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/leashd/leashd/interactions"
)

// Incoming is a message a person sent.
type Incoming struct {
	// ChatID identifies the conversation: "<connector>:<id>" (e.g.
	// "telegram:42", "slack:C123:1700000000.000100"); web chats use the
	// client's own ID.
	ChatID   string
	UserID   string // the chat app's user ID, as text
	UserName string // a display name, for "answered by"
	Text     string
	Group    bool // several people share the chat
	// Files are the pictures, documents and voice notes sent with the
	// message (its text is their caption); see File.
	Files []File
	// Authorize, when set, decides whether this person may answer a
	// pending interaction with this text (e.g. only approvers may give plan
	// feedback); it is passed on as interactions.Reply.Authorize.
	Authorize func(interactions.Interaction) error
}

// Route says where the engine sent a message.
type Route string

// Routes.
const (
	RouteAgent       Route = "agent"       // a prompt (possibly queued behind a running turn)
	RouteInteraction Route = "interaction" // an answer to a pending interaction
	RouteCommand     Route = "command"     // a /command
)

// Handler is what a connector hands people's input to; the engine
// implements it. Interaction methods return the interactions package's
// errors (interactions.IsStale, ErrUnauthorized, ErrInvalidReply) so the
// connector can answer "this question has expired" and the like.
type Handler interface {
	HandleMessage(ctx context.Context, in Incoming) (Route, error)
	Reply(ctx context.Context, id string, r interactions.Reply) (interactions.Outcome, error)
	Toggle(ctx context.Context, id, label string, r interactions.Reply) ([]string, error)
	Confirm(ctx context.Context, id string, r interactions.Reply) error
	// Interaction looks up a pending interaction by ID.
	Interaction(id string) (interactions.Interaction, bool)
	// Pending lists a chat's pending interactions ("" for every chat).
	Pending(chatID string) []interactions.Interaction
}

// Output is how the engine speaks in a chat. Text is Markdown as the agent
// writes it; each connector renders it for its app.
type Output interface {
	// Say posts a complete message: a notice, a command's reply.
	Say(ctx context.Context, chatID, text string) error
	// StreamText adds agent text to the running turn's output. The
	// connector decides how to show it (edits of one message, new
	// messages) and throttles to its app's limits.
	StreamText(ctx context.Context, chatID, text string) error
	// Done ends a turn: flush the stream, then show the summary.
	Done(ctx context.Context, chatID string, s Summary) error
	// Present shows an interaction (buttons and all) and returns a
	// reference to what it posted, given back in later events.
	Present(ctx context.Context, it *interactions.Interaction) (ref string, err error)
	// Update reflects an interaction event on what Present posted:
	// resolved (answered, expired, cancelled, interrupted — remove the
	// buttons), or updated (multi-select toggled, adjust awaiting feedback).
	Update(ctx context.Context, ev interactions.Event) error
}

// Connector is one chat app.
type Connector interface {
	// Name is the chat ID prefix this connector owns ("telegram", "slack",
	// "terminal"); the web connector owns chats without a known prefix.
	Name() string
	// Run receives input until ctx is done. It returns nil on a clean stop.
	Run(ctx context.Context, h Handler) error
	Output
}

// Progresser is implemented by outputs that show how a long turn is going
// (the engine's signs of life, at most every 30 s): Progress puts text
// at the foot of the turn's streamed output, replacing the last such line;
// "" takes it away. Done takes it away too.
type Progresser interface {
	Progress(ctx context.Context, chatID, text string) error
}

// Readier is implemented by connectors that can say whether they are
// connected (for /readyz).
type Readier interface {
	Ready() error
}

// Watcher is implemented by connectors that show every chat (the web page
// and its API): the engine sends them the output of chats other connectors
// own as well. The connector named "web" also owns chats whose ID has no
// known connector prefix.
type Watcher interface {
	WatchesAll() bool
}

// GroupTeller is implemented by connectors whose chats can be group chats
// (a Telegram group, a Slack channel), where several people decide: there
// the engine asks plan reviews and tool approvals for a quorum of
// approvers (interactions.Interaction.Quorum).
type GroupTeller interface {
	IsGroupChat(chatID string) bool
}

// Mounter is implemented by connectors that serve HTTP endpoints on
// leashd's HTTP server (the web page and API, Telegram webhooks, Slack HTTP
// mode); cmd/leashd mounts them.
type Mounter interface {
	Mount(mux *http.ServeMux)
}

// Flusher is implemented by connectors that send some output in the
// background (e.g. Telegram's edits of an interaction's message, queued
// behind its rate limits). The engine calls Flush at shutdown, after the
// last interaction event was delivered and within its close timeout, so
// that "leashd restarted" edits reach the chat before the process exits.
// Flush returns once everything queued so far was sent (or gave up), or
// with ctx's error when ctx ends first.
type Flusher interface {
	Flush(ctx context.Context) error
}

// Summary is the end of a turn.
type Summary struct {
	Result   string // the agent's final text
	IsError  bool
	CostUSD  float64
	NumTurns int
	Tools    []string // tools used, in order of first use, e.g. "Bash×2"
	Duration time.Duration
}

// Line renders the summary's one-line footer in plain words, e.g.
// "Done · ran 2 commands, made 1 edit · $0.0123 · 2 steps": what the agent
// did (Tools), its cost, and how many steps (the agent's model turns) it
// took.
func (s Summary) Line() string {
	var b strings.Builder
	if s.IsError {
		b.WriteString("Failed")
	} else {
		b.WriteString("Done")
	}
	if len(s.Tools) > 0 {
		b.WriteString(" · " + strings.Join(s.Tools, ", "))
	}
	if s.CostUSD > 0 {
		b.WriteString(" · $" + formatCost(s.CostUSD))
	}
	if s.NumTurns > 0 {
		if s.NumTurns == 1 {
			b.WriteString(" · 1 step")
		} else {
			b.WriteString(" · " + itoa(s.NumTurns) + " steps")
		}
	}
	return b.String()
}

// ChatPrefix returns the connector name of a chat ID ("telegram" for
// "telegram:42"), or "" when it has none.
func ChatPrefix(chatID string) string {
	if i := strings.IndexByte(chatID, ':'); i > 0 {
		return chatID[:i]
	}
	return ""
}

// Stats counts what connectors send (Prometheus in engine/metrics). A nil
// Stats is valid: use connectors.CountOutbound/CountRateLimited.
type Stats interface {
	Outbound(connector string)    // a message sent or edited
	RateLimited(connector string) // the app answered 429
}

// CountOutbound calls s.Outbound when s is not nil.
func CountOutbound(s Stats, connector string) {
	if s != nil {
		s.Outbound(connector)
	}
}

// CountRateLimited calls s.RateLimited when s is not nil.
func CountRateLimited(s Stats, connector string) {
	if s != nil {
		s.RateLimited(connector)
	}
}
