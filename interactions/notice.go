package interactions

import "errors"

// InterruptedNotice is what a request's message says once a restart
// interrupted it — at shutdown, or found left pending by a crash at start.
// Its buttons keep working: the answer is recorded once and sent to the
// agent's resumed session as a prompt. The engine sets it as the
// interrupted resolution's Text; connectors show it as is.
const InterruptedNotice = "leashd restarted — tap again to send this answer to the agent"

// WithdrawnText is a cancelled interaction's text when the agent withdrew
// the request (its context was cancelled with ErrWithdrawn as the cause):
// connectors show it in place of the buttons.
const WithdrawnText = "The agent withdrew this request."

// ErrWithdrawn, as the cause of a Request's context
// (context.WithCancelCause), says the agent withdrew the request.
var ErrWithdrawn = errors.New("the agent withdrew the request")
