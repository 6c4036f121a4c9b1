package worktree

import "time"

// SetTimeout sets how long each git command of m may take.
func SetTimeout(m *Manager, d time.Duration) { m.timeout = d }
