package engine

import "context"

// Runners is where agents run besides the server itself (cmd's runner
// hub, when LEASHD_RUNNER_TOKENS is set). The engine asks it for /status
// and hands it /runner.
type Runners interface {
	// Where is /status's line on where the chat's agent runs, e.g.
	// "Runner: box1 (connected, 2 of 4 agents)"; "" to say nothing.
	Where(chatID string) string
	// Command carries out /runner with args and says what to tell the
	// person.
	Command(chatID, args string) string
	// Slots is how many agents may run now, here and on the runners
	// connected (those of a runner away within its grace period count
	// too: they still hold their slots). Chats past it queue.
	Slots() int
	// OnRunner reports whether the chat's agent runs on a runner: its
	// files are on that machine's disk, not this one's.
	OnRunner(chatID string) bool
	// PutFile writes data at path (relative to the working directory,
	// under .leashd/inbox/) on the runner of the chat's agent.
	PutFile(ctx context.Context, chatID, path string, data []byte) error
}

// onRunner reports whether the chat's agent runs on a runner.
func (e *Engine) onRunner(chatID string) bool {
	e.mu.Lock()
	r := e.runners
	e.mu.Unlock()
	return r != nil && r.OnRunner(chatID)
}

// SlotsChanged hands slots to queued chats when there are more now than
// before (a runner connected).
func (e *Engine) SlotsChanged() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for len(e.waiters) > 0 && e.live < e.maxSlotsLocked() {
		w := e.waiters[0]
		e.waiters = e.waiters[1:]
		e.live++
		close(w.ready)
	}
	e.reportSessionsLocked()
	e.refillLocked()
	e.retryRoomLocked()
}

// maxSlotsLocked is how many agents may run now: LEASHD_MAX_CONCURRENT_AGENTS,
// or fewer when the runners (and the local agents) have room for fewer.
func (e *Engine) maxSlotsLocked() int {
	m := e.opts.maxConcurrent
	if e.runners != nil {
		m = min(m, max(e.runners.Slots(), 0))
	}
	return m
}

// SetRunners sets where agents run besides the server; call before Run.
func (e *Engine) SetRunners(r Runners) {
	e.mu.Lock()
	e.runners = r
	e.mu.Unlock()
}

// Tell says text in a chat, in every connector that shows it: for news
// that comes from outside a turn, such as a runner lost.
func (e *Engine) Tell(ctx context.Context, chatID, text string) { e.say(ctx, chatID, text) }

// EndPending ends what is pending in a chat, with reason shown in place of
// its buttons: for an agent given up from outside its turn, such as on a
// lost runner, whose turn would otherwise end them with a generic error.
// It returns how many it ended.
func (e *Engine) EndPending(chatID, reason string) int {
	return len(e.coord.CancelPending(chatID, reason))
}

// runnerCommand answers /runner.
func (e *Engine) runnerCommand(chatID, args string) string {
	e.mu.Lock()
	r := e.runners
	e.mu.Unlock()
	if r == nil {
		return "Agents run on this server only: no runners are set up (LEASHD_RUNNER_TOKENS)."
	}
	return r.Command(chatID, args)
}

// runnerStatus is /status's line on the chat's runner, or "".
func (e *Engine) runnerStatus(chatID string) string {
	e.mu.Lock()
	r := e.runners
	e.mu.Unlock()
	if r == nil {
		return ""
	}
	return r.Where(chatID)
}
