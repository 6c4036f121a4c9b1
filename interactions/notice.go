package interactions

// InterruptedNotice is what a request's message says once a restart
// interrupted it — at shutdown, or found left pending by a crash at start.
// Its buttons keep working: the answer is recorded once and sent to the
// agent's resumed session as a prompt. The engine sets it as the
// interrupted resolution's Text; connectors show it as is.
const InterruptedNotice = "leashd restarted — tap again to send this answer to the agent"
