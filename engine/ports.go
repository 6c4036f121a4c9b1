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
	// InTurn: a turn was running when this was saved. An agent that
	// outlives a restart (on a runner) is adopted into that turn; one
	// that was idle is adopted idle.
	InTurn bool
	// LetGo: leashd stopped and let go of the chat's agent, which may run
	// on (on a runner): the next run waits a while for it to be adopted
	// before it starts another.
	LetGo bool
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

// Store is what the engine keeps across restarts. engine/sqlite
// implements it; without one (Deps.Store nil) sessions live in memory and a
// restart recovers nothing.
type Store interface {
	// LoadSession and SaveSession keep each chat's agent session, mode and
	// working directory, so the next prompt after a restart resumes it.
	LoadSession(ctx context.Context, chatID string) (SessionRecord, bool, error)
	SaveSession(ctx context.Context, rec SessionRecord) error

	// Interrupt marks everything still recorded as pending (left by a
	// crash) as interrupted and returns it, with each multi-select's
	// selection, so the chats' messages can be edited. Interrupted
	// interactions are registered in the coordinator again at start-up,
	// and a late answer is sent to the agent as a prompt.
	Interrupt(ctx context.Context) ([]Interrupted, error)
	// Unanswered lists the interactions an earlier shutdown interrupted
	// since the given time that nobody has answered yet.
	Unanswered(ctx context.Context, since time.Time) ([]Interrupted, error)
	// Recovered records how an interrupted interaction ended after the
	// restart (answered, rejected, expired or cancelled); it reports false
	// when that was already recorded.
	Recovered(ctx context.Context, id string, res interactions.Resolution) (bool, error)
	// AllowedAgain records a tool call the engine allowed without asking
	// because it repeats the call a person allowed after a restart (the
	// agent re-issues it in the resumed turn); the record links to that
	// person's interaction, from.
	AllowedAgain(ctx context.Context, it interactions.Interaction, res interactions.Resolution, from string) error

	// RecordNotice keeps what an agent reports (agent.Notice) in the audit
	// log.
	RecordNotice(ctx context.Context, chatID, kind, text string, at time.Time) error

	// Outcome finds how an interaction ended in the journal, so that a
	// program that asked before a restart still gets its answer.
	Outcome(ctx context.Context, id string) (interactions.Interaction, interactions.Resolution, bool, error)
	// AskedBy finds who asked an interaction recorded in the journal (""
	// for the chat's agent), so a program's answer is not sent to the agent.
	AskedBy(ctx context.Context, id string) (string, error)
}

// Metrics observes the engine (Prometheus in engine/metrics).
type Metrics interface {
	TurnFinished(err error, isError bool)
	SessionsActive(n int)
}
