package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// Programs that are not agent sessions — a deploy script through the HTTP
// API, `leashd ask`, an MCP client — ask people through the engine too: the
// coordinator holds their interactions, the chat's connector shows them, and
// the journal, the audit log and the metrics see them like any other.

// Askers that are programs (interactions.Interaction Asker).
const (
	AskerAPI = "api" // POST /api/interactions, leashd ask, interactions/client
	AskerMCP = "mcp" // the MCP server's tools in process
)

// maxAsked bounds how many settled outcomes of programs' requests are kept
// in memory for late long-polls; older ones are read from the journal.
const maxAsked = 4096

// asked tracks interactions programs started in this run.
type asked struct {
	mu    sync.Mutex
	m     map[string]*askedOne
	order []string // settled IDs, oldest first
}

type askedOne struct {
	it   interactions.Interaction
	done chan struct{}
	res  interactions.Resolution
}

// Ask shows it in its chat for a program and returns at once with its ID;
// Outcome collects the answer. A timeout of 0 means the coordinator's
// (LEASHD_APPROVAL_TIMEOUT_SECONDS). It returns interactions.ErrNoPresenter
// when no connector serves the chat, and the coordinator's errors for an
// interaction that cannot be asked.
func (e *Engine) Ask(_ context.Context, it interactions.Interaction, timeout time.Duration) (interactions.Interaction, error) {
	if err := e.ServesChat(it.ChatID); err != nil {
		return it, err
	}
	if it.Asker == "" {
		it.Asker = AskerAPI
	}
	// The interaction outlives the request that made it: it ends when
	// answered, expired or cancelled, or when leashd stops.
	it, resc, err := e.coord.Start(e.agentCtx, it, timeout)
	if err != nil {
		return it, err
	}
	one := &askedOne{it: it, done: make(chan struct{})}
	e.asks.mu.Lock()
	if e.asks.m == nil {
		e.asks.m = make(map[string]*askedOne)
	}
	e.asks.m[it.ID] = one
	e.asks.mu.Unlock()
	go func() {
		res := <-resc
		e.asks.mu.Lock()
		one.res = res
		close(one.done)
		e.asks.order = append(e.asks.order, it.ID)
		if len(e.asks.order) > maxAsked {
			delete(e.asks.m, e.asks.order[0])
			e.asks.order = e.asks.order[1:]
		}
		e.asks.mu.Unlock()
	}()
	return it, nil
}

// appPrefixes are the chat ID prefixes of the chat apps: a chat named
// after an app that is not running has nobody to show it to (the web
// connector owns every other name).
var appPrefixes = []string{"telegram", "slack", "terminal"}

// ServesChat returns an error wrapping interactions.ErrNoPresenter, naming
// the chat, when no connector shows chatID.
func (e *Engine) ServesChat(chatID string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := connectors.ChatPrefix(chatID)
	if _, ok := e.owners[p]; ok {
		return nil
	}
	if !slices.Contains(appPrefixes, p) && e.owners["web"] != nil {
		return nil
	}
	return e.noChatErrLocked(chatID)
}

// Outcome waits, until ctx is done, for the interaction id to be resolved,
// and returns it and how it ended. resolved is false when ctx ended first
// (it is still pending), and when leashd is stopping (an interrupted
// interaction can still be answered after the restart). It finds what programs asked in this run, anything
// pending in the coordinator, and — with a Store — what was
// asked before a restart: one a restart interrupted is waited for until it
// is answered. Unknown IDs give interactions.ErrNotFound.
func (e *Engine) Outcome(ctx context.Context, id string) (it interactions.Interaction, res interactions.Resolution, resolved bool, err error) {
	e.asks.mu.Lock()
	one := e.asks.m[id]
	e.asks.mu.Unlock()
	if one != nil {
		select {
		case <-one.done:
			if one.res.Status == interactions.StatusInterrupted {
				// leashd is stopping: the answer can still come
				// after the restart; ask again then.
				return one.it, interactions.Resolution{}, false, nil
			}
			return one.it, one.res, true, nil
		case <-ctx.Done():
			if _, pending := e.coord.Get(id); pending {
				return one.it, interactions.Resolution{}, false, nil
			}
			<-one.done // settled: the outcome follows once it is recorded
			if one.res.Status == interactions.StatusInterrupted {
				return one.it, interactions.Resolution{}, false, nil
			}
			return one.it, one.res, true, nil
		}
	}
	if it, ok := e.coord.Get(id); ok {
		res, err := e.coord.Await(ctx, id)
		if err == nil && res.Status != interactions.StatusInterrupted {
			return it, res, true, nil
		}
		if ctx.Err() != nil {
			return it, interactions.Resolution{}, false, nil
		}
	}
	if !e.opts.persistent {
		return it, res, false, fmt.Errorf("%w: %q", interactions.ErrNotFound, id)
	}
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		it, res, found, err := e.journaled(ctx, id)
		switch {
		case err != nil && ctx.Err() != nil:
			return it, interactions.Resolution{}, false, nil
		case err != nil:
			return it, interactions.Resolution{}, false, err
		case !found:
			return it, interactions.Resolution{}, false, fmt.Errorf("%w: %q", interactions.ErrNotFound, id)
		case res.Status != "" && res.Status != interactions.StatusInterrupted:
			return it, res, true, nil
		case ctx.Err() != nil:
			return it, interactions.Resolution{}, false, nil
		}
		// Pending in the journal but not here (a recovery re-registers
		// it), or interrupted and not yet answered: wait for the answer.
		if res, err := e.coord.Await(ctx, id); err == nil && res.Status != interactions.StatusInterrupted {
			return it, res, true, nil
		}
		select {
		case <-ctx.Done():
			return it, interactions.Resolution{}, false, nil
		case <-tick.C:
		}
	}
}

// journaled looks id up in the journal. The lookup is not bound by ctx,
// which for a GET without ?wait is done before it starts (the journal's
// answer must still count), only by a few seconds of its own.
func (e *Engine) journaled(ctx context.Context, id string) (interactions.Interaction, interactions.Resolution, bool, error) {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return e.store.Outcome(lctx, id)
}

// CancelAsk cancels a pending interaction a program asked (Ctrl+C in
// `leashd ask`, a cancelled Go context). It returns
// interactions.ErrNotFound for an unknown ID and interactions.ErrNotPending
// for one already settled.
func (e *Engine) CancelAsk(id, reason string) error {
	if reason == "" {
		reason = "The program that asked cancelled the request."
	}
	if e.coord.Cancel(id, reason) {
		return nil
	}
	e.asks.mu.Lock()
	one := e.asks.m[id]
	e.asks.mu.Unlock()
	if one != nil {
		return fmt.Errorf("%w: it was already settled", interactions.ErrNotPending)
	}
	return fmt.Errorf("%w: %q", interactions.ErrNotFound, id)
}

// askedByProgram reports whether a program, not the chat's agent, asked
// it (from the journal when the interaction does not say).
func (e *Engine) askedByProgram(ctx context.Context, it interactions.Interaction) bool {
	if it.Asker != "" {
		return true
	}
	by, err := e.store.AskedBy(ctx, it.ID)
	if err != nil {
		e.log.Warn("looking up who asked an interaction", "id", it.ID, "err", err)
		return false
	}
	return by != ""
}
