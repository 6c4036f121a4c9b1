package interactions

import (
	"errors"
	"fmt"
)

// Caps on what programs may leave pending (issue #30: 40,000 asks took
// leashd to 2.38 GB and a database of 707 MB). A request with an Asker (a
// program: the HTTP API, `leashd ask`, the MCP server, the Go client) is
// refused while its chat already holds PerChat pending requests, or all
// chats together All. What the chat's own agent asks is never refused: an
// agent asks one thing at a time per turn, and turns are bounded by
// LEASHD_MAX_CONCURRENT_AGENTS, so it cannot flood; refusing it would
// fail the turn of a person's own agent. Those requests still count
// towards the caps, as a person has them to answer too. Requests restored
// after a restart are never refused: they were accepted once.

// ErrTooMany is what errors.Is finds in the error for a program's request
// refused by a cap (a *CapError).
var ErrTooMany = errors.New("too many pending requests")

// CapError says which cap refused a request.
type CapError struct {
	// All is true for the cap on all chats, false for the one per chat.
	All     bool
	Chat    string
	Limit   int
	Setting string // the variable that sets it, e.g. LEASHD_API_MAX_PENDING
}

func (e *CapError) Error() string {
	if e.All {
		return fmt.Sprintf("too many pending requests in all chats: at most %d (%s); answer, withdraw or let some expire, or raise %s", e.Limit, e.Setting, e.Setting)
	}
	return fmt.Sprintf("too many pending requests in chat %q: at most %d in one chat (%s); answer, withdraw or let some expire, or raise %s", e.Chat, e.Limit, e.Setting, e.Setting)
}

// Is makes errors.Is(err, ErrTooMany) true.
func (e *CapError) Is(target error) bool { return target == ErrTooMany }

// Caps bound the pending requests programs may add; 0 means no cap. The
// settings name the variables that set them, for the errors.
type Caps struct {
	PerChat        int
	All            int
	PerChatSetting string
	AllSetting     string
}

// WithCaps caps what programs may leave pending (see Caps).
func WithCaps(c Caps) Opt { return func(co *Coordinator) { co.caps = c } }

// checkCapsLocked refuses a program's request beyond a cap; c.mu is held.
func (c *Coordinator) checkCapsLocked(it *Interaction) error {
	if it.Asker == "" {
		return nil
	}
	if n := c.caps.All; n > 0 && len(c.byID) >= n {
		return &CapError{All: true, Limit: n, Setting: c.caps.AllSetting}
	}
	if n := c.caps.PerChat; n > 0 && len(c.byChat[it.ChatID]) >= n {
		return &CapError{Chat: it.ChatID, Limit: n, Setting: c.caps.PerChatSetting}
	}
	return nil
}
