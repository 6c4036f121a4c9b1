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

// AskerGoneText is a cancelled interaction's text when the program that
// asked it (an MCP client) is gone: its call was cancelled, its connection
// cut or its session ended, or it asked before a restart and no one can
// collect the answer now. Connectors show it in place of the buttons.
const AskerGoneText = "The program that asked is gone, so this request was withdrawn."

// ErrAskerGone, as the cause of a request's context
// (context.WithCancelCause), says the program that asked is gone: the
// interaction ends cancelled with AskerGoneText.
var ErrAskerGone = errors.New("the program that asked is gone")
