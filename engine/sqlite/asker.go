package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/leashd/leashd/interactions"
)

// AskedBy implements engine.Store: who asked interaction id when it was
// not the chat's agent (Interaction.Asker, kept with its requested event),
// "" when the agent did or the interaction is not recorded.
func (s *Store) AskedBy(ctx context.Context, id string) (string, error) {
	var data string
	err := s.r.QueryRowContext(ctx, `SELECT data FROM events WHERE interaction_id = ? AND type = ? ORDER BY seq LIMIT 1`,
		id, evRequested).Scan(&data)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("looking up who asked %s: %w", id, err)
	}
	var it struct {
		Asker string `json:"asker"`
	}
	if err := json.Unmarshal([]byte(data), &it); err != nil {
		return "", fmt.Errorf("looking up who asked %s: %w", id, err)
	}
	return it.Asker, nil
}

// SourceOf returns where a relayed request came from (Interaction.Source,
// kept with its requested event): nil for one nobody relayed.
func (s *Store) SourceOf(ctx context.Context, id string) (*interactions.Source, error) {
	var data string
	err := s.r.QueryRowContext(ctx, `SELECT data FROM events WHERE interaction_id = ? AND type = ? ORDER BY seq LIMIT 1`,
		id, evRequested).Scan(&data)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("looking up where %s came from: %w", id, err)
	}
	var it struct {
		Source *interactions.Source `json:"source"`
	}
	if err := json.Unmarshal([]byte(data), &it); err != nil {
		return nil, fmt.Errorf("looking up where %s came from: %w", id, err)
	}
	return it.Source, nil
}
