package sqlite_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/enginetest"

	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/interactions"
)

// Example shows how leashd wires the store: the coordinator journals every
// interaction to it, and the engine keeps sessions in it and recovers
// interrupted interactions from it.
func Example() {
	dir, _ := os.MkdirTemp("", "leashd-example")
	defer os.RemoveAll(dir)
	ctx := context.Background()

	st, err := sqlite.Open(ctx, filepath.Join(dir, "state", "leashd.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	coord := interactions.New(interactions.WithJournal(st))
	var ag agent.Agent // engine/agent/claude or engine/agent/demo
	e := enginetest.New(ag, coord, func(d *engine.Deps, _ *engine.Config) { d.Store = st }, func(d *engine.Deps, _ *engine.Config) { d.Store = st })
	_ = e // add connectors, then e.Run(ctx); close the store after Run returns

	recs, err := st.Audit(ctx, sqlite.AuditFilter{})
	fmt.Println(len(recs), err, sqlite.SchemaVersion())
	// Output: 0 <nil> 9
}
