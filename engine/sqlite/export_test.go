package sqlite

import (
	"context"
	"database/sql"

	"github.com/leashd/leashd/engine"
)

// LookupInterrupted is lookupInterrupted, for the tests.
func (s *Store) LookupInterrupted(ctx context.Context, id string) (engine.Interrupted, bool, error) {
	return s.lookupInterrupted(ctx, id)
}

// Migration is migration, for the migration tests.
type Migration = migration

// Migrations returns the schema history.
func Migrations() []Migration { return migrations }

// Migrate runs migrate with the given steps.
func Migrate(ctx context.Context, db *sql.DB, steps []Migration) error {
	return migrate(ctx, db, steps)
}

// ExecSQL is execSQL.
func ExecSQL(stmts ...string) func(context.Context, *sql.Tx) error { return execSQL(stmts...) }
