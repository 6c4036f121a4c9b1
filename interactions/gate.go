package interactions

import "context"

// ProgramGate applies to a request a program made (an Interaction with an
// Asker) what applies to an agent's request before anyone is asked: it may
// change *it (its Quorum, ForApprovers) or decide it at once. When decided
// is true nobody is asked: res is how it ended, and the coordinator records
// it as Decided does. An error refuses the request.
type ProgramGate func(ctx context.Context, it *Interaction) (res Resolution, decided bool, err error)

// SetProgramGate sets the gate every request with an Asker passes through,
// whichever way it was made (Request, Start, the flows): one path for every
// decision, whoever asks.
func (c *Coordinator) SetProgramGate(g ProgramGate) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gate = g
}

// programAsks reports whether a program asks *it (its Asker, or ctx's)
// and a program gate is set; it fills in the Asker.
func (c *Coordinator) programAsks(ctx context.Context, it *Interaction) bool {
	if it.Asker == "" {
		it.Asker = askerOf(ctx)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return it.Asker != "" && c.gate != nil
}

// gated passes *it through the program gate when a program asks it. When
// the gate decided it, *it is the recorded interaction (with its ID) and
// res how it ended.
func (c *Coordinator) gated(ctx context.Context, it *Interaction) (res Resolution, decided bool, err error) {
	if it.Asker == "" {
		it.Asker = askerOf(ctx)
	}
	c.mu.Lock()
	g := c.gate
	c.mu.Unlock()
	if it.Asker == "" || g == nil {
		return Resolution{}, false, nil
	}
	if err := validate(it); err != nil {
		return Resolution{}, false, err
	}
	if err := checkRequest(it); err != nil {
		return Resolution{}, false, err
	}
	res, decided, err = g(ctx, it)
	if err != nil || !decided {
		return Resolution{}, false, err
	}
	rec, err := c.Decided(ctx, *it, res)
	if rec.ID == "" {
		return Resolution{}, false, err
	}
	if err != nil {
		c.log.Error("recording a program's request decided without asking", "id", rec.ID, "chat", rec.ChatID, "err", err)
	}
	*it = rec
	if res.At.IsZero() {
		res.At = rec.AskedAt
	}
	return res, true, nil
}
