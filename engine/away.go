package engine

import (
	"context"
	"sync"
	"time"
)

// Away mode (issue #29): a person who started a coding agent in their own
// terminal, with leashd's hooks installed (`leashd hook install`), says
// they are away from the desk (`leashd away on`, /away in the chat); from
// then on the hooks relay that session's permission dialogs and its final
// message to the chat. At the desk the hooks leave everything to the
// terminal. The state lives here, in the running leashd, so that every
// hook of every terminal asks the same place; it is per chat (the chat a
// hook relays to), and it is not kept across restarts: a restart puts
// every chat back at the desk, where nothing is relayed.

// awayDesk is which chats are away, and since when; with after set
// (LEASHD_AWAY_AFTER_SECONDS), also when each chat's terminal last had a
// prompt typed, and a chat idle that long counts as away.
type awayDesk struct {
	mu     sync.Mutex
	since  map[string]time.Time
	after  time.Duration
	active map[string]time.Time
}

// maxActive bounds the chats whose last input at the desk is kept.
const maxActive = 4096

// BackReason is the text a hook's request is cancelled with when its
// person is back at the desk: the terminal shows the dialog again.
const BackReason = "Back at the desk: the terminal asks again."

// Away reports whether chatID is away from the desk, and since when.
func (e *Engine) Away(chatID string) (bool, time.Time) {
	e.away.mu.Lock()
	defer e.away.mu.Unlock()
	if since, ok := e.away.since[chatID]; ok {
		return true, since
	}
	if last, ok := e.away.active[chatID]; ok && e.away.after > 0 && time.Since(last) >= e.away.after {
		return true, last.Add(e.away.after)
	}
	return false, time.Time{}
}

// DeskActive records that chatID's person typed a prompt in their
// terminal (a hook saw it): with LEASHD_AWAY_AFTER_SECONDS, the idle time
// that makes them away starts again. It does not end an away that /away
// or `leashd away on` started.
func (e *Engine) DeskActive(chatID string) error {
	if err := e.ServesChat(chatID); err != nil {
		return err
	}
	e.away.mu.Lock()
	defer e.away.mu.Unlock()
	e.away.markActiveLocked(chatID)
	return nil
}

func (a *awayDesk) markActiveLocked(chatID string) {
	if a.after <= 0 {
		return
	}
	if a.active == nil {
		a.active = make(map[string]time.Time)
	}
	if _, ok := a.active[chatID]; !ok && len(a.active) >= maxActive {
		for k := range a.active { // forget one: that chat is at the desk
			delete(a.active, k)
			break
		}
	}
	a.active[chatID] = time.Now()
}

// SetAway puts chatID away from the desk (on) or back at it. Back, every
// request a hook relayed to the chat and nobody answered yet is cancelled,
// so that its terminal asks again (a permission dialog is shown, a stopped
// session waits at its prompt); it returns how many. It returns an error
// wrapping interactions.ErrNoPresenter when no connector shows the chat.
func (e *Engine) SetAway(chatID string, on bool) (released int, err error) {
	if err := e.ServesChat(chatID); err != nil {
		return 0, err
	}
	e.away.mu.Lock()
	if on {
		if e.away.since == nil {
			e.away.since = make(map[string]time.Time)
		}
		if _, ok := e.away.since[chatID]; !ok {
			e.away.since[chatID] = time.Now()
		}
	} else {
		delete(e.away.since, chatID)
		e.away.markActiveLocked(chatID) // back: idle from now
	}
	e.away.mu.Unlock()
	e.log.Info("away from the desk", "chat", chatID, "away", on)
	if on {
		return 0, nil
	}
	for _, it := range e.coord.Pending(chatID) {
		if it.FromHook() && e.coord.Cancel(it.ID, BackReason) {
			released++
		}
	}
	return released, nil
}

// awayCommand is /away and /back in chatID.
func (e *Engine) awayCommand(ctx context.Context, chatID string, on bool) {
	released, err := e.SetAway(chatID, on)
	switch {
	case err != nil:
		e.say(ctx, chatID, "Not changed: "+err.Error())
	case on:
		e.say(ctx, chatID, "Away from the desk: the agent sessions in your terminal that have leashd's hooks (leashd hook install) now ask here — permissions as buttons, and when one finishes its last message comes here and what you type next continues it. /back returns them to the terminal.")
	default:
		msg := "Back at the desk: the terminal asks again, nothing more is relayed here."
		if released > 0 {
			msg += " " + plural(released, "request") + " waiting here went back to the terminal."
		}
		e.say(ctx, chatID, msg)
	}
}

// AwayNotice says text in chatID when its person is away from the desk (a
// terminal's agent waiting there for them), and reports whether it
// did; at the desk nothing reaches the chat.
func (e *Engine) AwayNotice(ctx context.Context, chatID, text string) bool {
	if away, _ := e.Away(chatID); !away {
		return false
	}
	e.say(ctx, chatID, text)
	return true
}
