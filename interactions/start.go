package interactions

import (
	"context"
	"time"
)

// Start asks like Request but does not wait for the answer: it returns once
// the interaction is registered and journaled, with its ID, and a channel
// that receives how it ended (once; it is buffered). It is shown in the
// background, and shown again while showing fails: a chat app that paces
// its messages (Telegram's one a second in a chat) must not hold up the
// ID, or a caller that gives up waiting leaves a question nobody collects.
// The interaction stays pending until a reply, its timeout, Cancel,
// CancelPending, Interrupt, or until ctx is done — so ctx must live as
// long as the interaction may. A timeout of 0 means the coordinator's own
// (WithTimeout).
//
// It is how a program that is not an agent session (an HTTP client, an MCP
// tool call) asks: it gets the ID at once and collects the answer later.
func (c *Coordinator) Start(ctx context.Context, it Interaction, timeout time.Duration) (Interaction, <-chan Resolution, error) {
	if timeout <= 0 {
		timeout = c.timeout
	}
	asked := it
	if res, decided, err := c.gated(ctx, &asked); err != nil {
		return it, nil, err
	} else if decided {
		out := make(chan Resolution, 1)
		out <- res
		return asked, out, nil
	}
	p, presenter, err := c.open(ctx, &asked, timeout)
	if err != nil {
		return it, nil, err
	}
	started := p.it // copied before the presenter may change p.it
	go func() {
		select {
		case <-p.done: // settled before its turn came (answered on the page)
		default:
			c.present(ctx, p, presenter)
		}
	}()
	out := make(chan Resolution, 1)
	go func() { c.wait(ctx, p); out <- p.res }()
	return started, out, nil
}

// Await waits, until ctx is done, for the pending interaction id to be
// resolved and returns how it ended. It returns ErrNotFound for an unknown
// ID, ErrNotPending for one already settled, and ctx's error when ctx ended
// first. It serves interactions whose Request another goroutine (or an
// earlier run's recovery) owns.
func (c *Coordinator) Await(ctx context.Context, id string) (Resolution, error) {
	c.mu.Lock()
	p, err := c.lookupLocked(id)
	c.mu.Unlock()
	if err != nil {
		return Resolution{}, err
	}
	select {
	case <-p.done:
		return p.res, nil
	case <-ctx.Done():
		return Resolution{}, ctx.Err()
	}
}

type askerKey struct{}

// WithAsker marks what is asked with ctx as asked by a program (Interaction
// Asker), e.g. "mcp" for the MCP server's tools, which use the flows
// (Ask, ReviewPlan, ApproveTool, RequestInput) that build interactions
// themselves.
func WithAsker(ctx context.Context, asker string) context.Context {
	return context.WithValue(ctx, askerKey{}, asker)
}

func askerOf(ctx context.Context) string {
	s, _ := ctx.Value(askerKey{}).(string)
	return s
}
