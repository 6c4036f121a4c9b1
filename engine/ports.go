package engine

import (
	"context"
	"time"

	"github.com/leashd/leashd/engine/agent"

	"github.com/leashd/leashd/interactions"
)

// SessionRecord is what the engine remembers about a chat's agent session.
type SessionRecord struct {
	ChatID         string
	AgentSessionID string // for --resume; "" after /clear
	Mode           agent.Mode
	WorkDir        string
	LastActive     time.Time
}

// SessionStore keeps chats' sessions across restarts. The engine keeps them
// in memory when none is given.
type SessionStore interface {
	LoadSession(ctx context.Context, chatID string) (SessionRecord, bool, error)
	SaveSession(ctx context.Context, rec SessionRecord) error
}

// Interrupted is an interaction that was pending when leashd stopped, with
// the reference to the chat message that shows it.
type Interrupted struct {
	Interaction interactions.Interaction
	Ref         string
	// Selected is a multi-select question's selection when it stopped.
	Selected []string
	// Approvals are those counted towards its quorum when it stopped.
	Approvals []interactions.Approver
}

// Recovery makes interactions interrupted by a restart answerable: at
// start-up they are registered in the coordinator again, and a late answer
// is sent to the agent as a prompt. The persistence layer implements it
// (and UnansweredLister, for the ones a shutdown interrupted).
type Recovery interface {
	// Interrupt marks everything still recorded as pending (left by a
	// crash) as interrupted and returns it, with each multi-select's
	// selection, so the chats' messages can be edited.
	Interrupt(ctx context.Context) ([]Interrupted, error)
	// Recovered records how an interrupted interaction ended after the
	// restart (answered, rejected, expired or cancelled); it reports false
	// when that was already recorded.
	Recovered(ctx context.Context, id string, res interactions.Resolution) (bool, error)
}

// Metrics observes the engine (Prometheus in engine/metrics).
type Metrics interface {
	TurnFinished(err error, isError bool)
	SessionsActive(n int)
}

// AllowedAgainRecorder records, in the audit log, a tool call the engine
// allowed without asking because it repeats the call a person allowed after
// a restart (the agent re-issues it in the resumed turn); the record links
// to that person's interaction, from. The persistence layer implements it.
type AllowedAgainRecorder interface {
	AllowedAgain(ctx context.Context, it interactions.Interaction, res interactions.Resolution, from string) error
}
