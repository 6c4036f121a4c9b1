// Package enginetest is the engine's test rig, shared by the packages whose
// tests run an engine: a way to build one with a test's own dependencies
// and settings.
package enginetest

import (
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/interactions"
)

// Setup changes an engine's dependencies or settings before a test builds
// it. Harnesses take a list, so a test adds to what its harness sets.
type Setup func(*engine.Deps, *engine.Config)

// New builds an engine running ag and asking through coord, with the
// setups applied in order.
func New(ag agent.Agent, coord *interactions.Coordinator, setups ...Setup) *engine.Engine {
	d := engine.Deps{Agent: ag, Coord: coord}
	var c engine.Config
	for _, s := range setups {
		s(&d, &c)
	}
	return engine.New(d, c)
}
