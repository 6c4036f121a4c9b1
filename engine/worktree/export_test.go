package worktree

import (
	"context"
	"time"
)

// SetTimeout sets how long each git command of m may take.
func SetTimeout(m *Manager, d time.Duration) { m.timeout = d }

// Journal records a merge of chat's branch by the process pid that has
// not started git yet, as Merge does before it runs git.
func Journal(ctx context.Context, m *Manager, chat string, pid int) error {
	head := m.revParse(ctx, "HEAD")
	return m.writeJournal(mergeJournal{Chat: chat, Branch: BranchPrefix + Slug(chat), Base: "main", Head: head, Tip: head, Clean: true, Started: time.Now(), PID: pid})
}
