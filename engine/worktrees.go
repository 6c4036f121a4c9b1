package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/leashd/leashd/engine/worktree"
	"github.com/leashd/leashd/interactions"
)

// Worktrees gives each chat its own git worktree (engine/worktree): the
// agent of a chat works there, on its own branch, whatever the backend.
type Worktrees interface {
	// Ensure returns the chat's worktree, creating it when it has none.
	Ensure(ctx context.Context, chatID string) (worktree.Tree, error)
	Status(ctx context.Context, chatID string) (worktree.Status, error)
	Merge(ctx context.Context, chatID, message string) (worktree.MergeResult, error)
	Discard(ctx context.Context, chatID string) error
}

// Labels of the /discard confirmation.
const (
	DiscardConfirm = "Discard"
	DiscardKeep    = "Keep"
)

// DiscardHeader is the header of the /discard confirmation.
const DiscardHeader = "Discard worktree"

const worktreesOff = "Worktrees are off: every chat's agent works in %s. Set LEASHD_WORKTREES=on (with LEASHD_WORKDIR inside a git repository) to give each chat its own worktree and branch, with /worktree, /merge and /discard."

// enterWorktree points the chat at its worktree, creating it at the
// chat's first prompt (and again after /discard). Called before a session
// opens.
func (e *Engine) enterWorktree(ctx context.Context, c *chat) error {
	w := e.opts.worktrees
	if w == nil {
		return nil
	}
	t, err := w.Ensure(ctx, c.id)
	if err != nil {
		return fmt.Errorf("preparing this chat's git worktree: %w", err)
	}
	e.mu.Lock()
	changed := c.workDir != t.Path
	c.workDir = t.Path
	e.mu.Unlock()
	if changed {
		e.log.Info("chat works in its own worktree", "chat", c.id, "path", t.Path, "branch", t.Branch, "base", t.Base)
		e.save(c)
	}
	return nil
}

func (e *Engine) worktreeCommand(ctx context.Context, chatID string) string {
	w := e.opts.worktrees
	if w == nil {
		return fmt.Sprintf(worktreesOff, e.opts.workDir)
	}
	st, err := w.Status(ctx, chatID)
	note := e.interruptedMerge(ctx, chatID, st.Recovered)
	if errors.Is(err, worktree.ErrNoWorktree) {
		return note + "This chat has no worktree yet: your next message creates one, on a branch of its own (leashd/" + worktree.Slug(chatID) + ")."
	}
	if err != nil {
		return "Could not read this chat's worktree: " + err.Error()
	}
	changes := st.DiffStat
	if changes == "" {
		changes = "no changes yet"
	}
	return note + fmt.Sprintf("Worktree: %s\nBranch: %s\nBase: %s\nChanges against %s:\n%s", st.Path, st.Branch, st.Base, st.Base, changes)
}

// commitMessage is a commit message made from a prompt: its first line as
// the subject (shortened to 72 characters), the whole prompt as the body
// when there is more.
func commitMessage(prompt string) string {
	prompt = strings.TrimSpace(prompt)
	subject, _, _ := strings.Cut(prompt, "\n")
	subject = strings.TrimSpace(subject)
	if r := []rune(subject); len(r) > 72 {
		subject = string(r[:71]) + "…"
	}
	if subject == prompt {
		return subject
	}
	return subject + "\n\n" + prompt
}

func (e *Engine) mergeCommand(ctx context.Context, chatID string) string {
	w := e.opts.worktrees
	if w == nil {
		return fmt.Sprintf(worktreesOff, e.opts.workDir)
	}
	c := e.chatFor(ctx, chatID)
	e.mu.Lock()
	busy := c.current != nil
	prompt := c.lastPrompt
	e.mu.Unlock()
	if busy {
		return "The agent is working in this worktree: wait for the turn to end (or /stop it), then /merge."
	}
	if prompt == "" {
		prompt = "Changes from leashd chat " + chatID
	}
	res, err := w.Merge(ctx, chatID, commitMessage(prompt))
	return e.interruptedMerge(ctx, chatID, res.Recovered) + mergeReply(res, err, e.mergeRepo())
}

// mergeReply is what /merge says of res and err.
func mergeReply(res worktree.MergeResult, err error, repo string) string {
	var me *worktree.MergeError
	switch {
	case errors.Is(err, worktree.ErrNoWorktree):
		return "Nothing to merge: this chat has no worktree yet."
	case errors.As(err, &me) && errors.Is(err, worktree.ErrDirty):
		return fmt.Sprintf("Not merged: the main checkout %s has uncommitted changes in %s. Nothing there was changed. Commit or stash them, then /merge again.%s",
			me.Repo, strings.Join(me.Files, ", "), committedNote(res))
	case errors.As(err, &me) && errors.Is(err, worktree.ErrConflict):
		return fmt.Sprintf("Not merged: %s conflicts with %s in %s. Nothing in the main checkout was changed.%s Ask the agent to merge %s into its branch and resolve the conflicts, then /merge again.",
			res.Branch, res.Base, strings.Join(me.Files, ", "), committedNote(res), res.Base)
	case errors.As(err, &me) && errors.Is(err, worktree.ErrUntracked):
		return fmt.Sprintf("Not merged: %s would write over %s in the main checkout %s, which git does not track there. Nothing was changed. Move them out of the way (or ask the agent to take them out of its branch), then /merge again.%s",
			res.Branch, untrackedList(me), me.Repo, committedNote(res))
	case err != nil:
		return "Not merged: " + err.Error() + committedNote(res)
	case !res.Merged:
		return fmt.Sprintf("Nothing to merge: %s already has everything on %s.", res.Base, res.Branch)
	}
	return fmt.Sprintf("Merged %s into %s (now at %s) in %s.%s", res.Branch, res.Base, short(res.Commit), repo, committedNote(res))
}

// untrackedList names the files in the way, marking the ignored ones.
func untrackedList(me *worktree.MergeError) string {
	names := make([]string, len(me.Files))
	for i, f := range me.Files {
		names[i] = f
		if slices.Contains(me.Ignored, f) {
			names[i] += " (ignored by git)"
		}
	}
	return strings.Join(names, ", ")
}

func committedNote(res worktree.MergeResult) string {
	if !res.Committed {
		return ""
	}
	return " This chat's changes were committed on " + res.Branch + "."
}

func (e *Engine) mergeRepo() string {
	if r, ok := e.opts.worktrees.(interface{ Repo() string }); ok {
		return r.Repo()
	}
	return "the main checkout"
}

func short(commit string) string {
	if len(commit) > 12 {
		return commit[:12]
	}
	return commit
}

// discardCommand asks for confirmation with buttons, in the background (a
// command must not wait for a tap that reaches the engine through the same
// connector), then drops the session and removes the worktree and branch.
func (e *Engine) discardCommand(ctx context.Context, chatID string) {
	w := e.opts.worktrees
	if w == nil {
		e.say(ctx, chatID, fmt.Sprintf(worktreesOff, e.opts.workDir))
		return
	}
	st, err := w.Status(ctx, chatID)
	if note := e.interruptedMerge(ctx, chatID, st.Recovered); note != "" {
		e.say(ctx, chatID, strings.TrimSpace(note))
	}
	if errors.Is(err, worktree.ErrNoWorktree) {
		e.say(ctx, chatID, "Nothing to discard: this chat has no worktree.")
		return
	}
	if err != nil {
		e.say(ctx, chatID, "Could not read this chat's worktree: "+err.Error())
		return
	}
	changes := "no changes"
	if st.DiffStat != "" {
		lines := strings.Split(st.DiffStat, "\n")
		changes = strings.TrimSpace(lines[len(lines)-1])
	}
	e.wg.Go(func() {
		ctx := e.agentCtx
		ans, err := e.coord.RequestInput(ctx, interactions.InputRequest{
			ChatID: chatID,
			Header: DiscardHeader,
			Prompt: fmt.Sprintf("Discard this chat's worktree %s and its branch %s (%s)? Uncommitted and unmerged work is lost.", st.Path, st.Branch, changes),
			Options: []interactions.Choice{
				// Red wherever it is shown: it cannot be undone.
				{Label: DiscardConfirm, Description: "Remove the worktree and its branch", Style: interactions.StyleDestructive},
				{Label: DiscardKeep, Description: "Keep them"},
			},
		})
		if err != nil {
			if ctx.Err() == nil {
				e.say(ctx, chatID, "Not discarded: "+err.Error())
			}
			return
		}
		if ans.Rejected || ans.Value != DiscardConfirm {
			e.say(ctx, chatID, "Kept the worktree "+st.Path+".")
			return
		}
		// The agent's working directory goes: end its session first.
		e.clear(ctx, chatID)
		if err := w.Discard(ctx, chatID); err != nil {
			e.say(ctx, chatID, "Could not discard the worktree: "+err.Error())
			return
		}
		e.mu.Lock()
		c := e.chats[chatID]
		if c != nil {
			c.workDir = e.opts.workDir
		}
		e.mu.Unlock()
		if c != nil {
			e.save(c)
		}
		e.say(ctx, chatID, "Discarded the worktree and the branch "+st.Branch+". Your next message starts a fresh session in a new worktree.")
	})
}
