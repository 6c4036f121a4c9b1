package sqlite

import (
	"context"
	"fmt"

	"github.com/leashd/leashd/interactions"
)

// Outcome returns the interaction id and how it ended as recorded: its Status is
// "" while it is pending, interactions.StatusInterrupted while a restart
// left it unanswered (it can still be answered), and the answer once one
// was given, after a restart too. found is false for an ID never recorded.
// A program that asked through leashd's API reads it to collect the answer
// after a restart.
func (s *Store) Outcome(ctx context.Context, id string) (interactions.Interaction, interactions.Resolution, bool, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+recordColumns+` FROM interactions WHERE id = ?`, id)
	if err != nil {
		return interactions.Interaction{}, interactions.Resolution{}, false, fmt.Errorf("looking up interaction %s: %w", id, err)
	}
	recs, err := scanRecords(rows)
	if err != nil {
		return interactions.Interaction{}, interactions.Resolution{}, false, fmt.Errorf("looking up interaction %s: %w", id, err)
	}
	if len(recs) == 0 {
		return interactions.Interaction{}, interactions.Resolution{}, false, nil
	}
	return recs[0].Interaction, recs[0].Resolution, true, nil
}
