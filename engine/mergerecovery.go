package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/leashd/leashd/engine/worktree"
)

// mergeRecoverer finds a /merge that an earlier run did not see to its
// end (worktree.Manager.Recover).
type mergeRecoverer interface {
	Recover(ctx context.Context) (*worktree.Interrupted, error)
}

// recoverMerge runs at start-up: a /merge killed midway (a slow hook, the
// OOM killer, docker stop) is undone when it left its files half merged
// in the main checkout, and the chat that sent it is told what was found
// and done, once its connector is ready.
func (e *Engine) recoverMerge(ctx context.Context) {
	r, ok := e.opts.worktrees.(mergeRecoverer)
	if !ok {
		return
	}
	in, err := r.Recover(ctx)
	if err != nil {
		e.log.Error("looking for a merge the last run left unfinished", "err", err)
		return
	}
	if in == nil {
		return
	}
	e.log.Warn("a merge was interrupted by the last run's end", "chat", in.Chat, "branch", in.Branch, "outcome", in.Outcome, "files", in.Files)
	if o := e.owner(in.Chat); o != nil && !waitReady(ctx, o) {
		return
	}
	e.say(ctx, in.Chat, interruptedMergeText(in, e.mergeRepo()))
}

// interruptedMerge is what a command's reply in chatID starts with when
// the command found an interrupted merge (nil: none, ""); the chat that
// sent that merge is told too when it is another.
func (e *Engine) interruptedMerge(ctx context.Context, chatID string, in *worktree.Interrupted) string {
	if in == nil {
		return ""
	}
	text := interruptedMergeText(in, e.mergeRepo())
	if in.Chat != "" && in.Chat != chatID {
		e.say(ctx, in.Chat, text)
	}
	return text + "\n\n"
}

// interruptedMergeText tells a person what an interrupted merge left in
// the main checkout repo and what leashd did about it.
func interruptedMergeText(in *worktree.Interrupted, repo string) string {
	what := fmt.Sprintf("⚠️ The /merge of %s into %s started %s was cut short when leashd stopped",
		in.Branch, in.Base, in.Started.UTC().Format("2006-01-02 15:04:05 UTC"))
	switch in.Outcome {
	case worktree.MergeNotStarted:
		return what + fmt.Sprintf(" before it changed anything in %s. Send /merge to merge.", repo)
	case worktree.MergeFinished:
		return what + fmt.Sprintf(" after its merge commit: %s is at %s in %s.", in.Base, short(in.Head), repo)
	case worktree.MergeRunning:
		return what + fmt.Sprintf(", but the git merge it started still runs in %s (a slow hook?): leashd leaves it to finish. /worktree or /merge then says how it ended.", repo)
	case worktree.MergeUndone:
		return what + fmt.Sprintf(", with %s written into %s but not committed. leashd took them out again: %s is back at %s, as before the merge. Send /merge to merge again.",
			strings.Join(in.Files, ", "), repo, in.Base, short(in.Head))
	}
	left := what + fmt.Sprintf(", and leashd left %s as it is: %s.", repo, in.Why)
	if len(in.Files) > 0 {
		left += fmt.Sprintf(" Uncommitted there: %s; if they are the merge's, `git reset --merge` in %s takes them out.", strings.Join(in.Files, ", "), repo)
	}
	return left
}
