package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/leashd/leashd/config"
	"github.com/leashd/leashd/engine/sqlite"
	"github.com/leashd/leashd/engine/worktree"
)

// worktreesFor is the worktree manager of LEASHD_WORKTREES=on, or an error
// an operator can act on (not a git repository, no commit, no git).
func worktreesFor(ctx context.Context, cfg config.Config) (*worktree.Manager, error) {
	m, err := openWorktrees(ctx, cfg, cfg.StateDir())
	if err != nil {
		return nil, fmt.Errorf("LEASHD_WORKTREES=on, but %w; or set LEASHD_WORKTREES=off", err)
	}
	return m, nil
}

// openWorktrees opens the worktrees of LEASHD_WORKDIR's repository, kept
// in stateDir. Its errors say what is wrong with the directory, not why
// it was looked at: serving with LEASHD_WORKTREES=on and `leashd
// worktrees` (which needs no LEASHD_WORKTREES) each say that themselves.
func openWorktrees(ctx context.Context, cfg config.Config, stateDir string) (*worktree.Manager, error) {
	m, err := worktree.New(ctx, cfg.Workdir, stateDir, worktree.WithAuthor(gitIdentity(cfg.GitAuthor)))
	if errors.Is(err, worktree.ErrNotRepo) {
		return nil, fmt.Errorf("LEASHD_WORKDIR=%s is not inside a git repository: run `git init` there and commit, or point LEASHD_WORKDIR at a repository", cfg.Workdir)
	}
	if err != nil {
		return nil, fmt.Errorf("LEASHD_WORKDIR=%s: %w", cfg.Workdir, err)
	}
	return m, nil
}

const worktreesUsage = `Usage: leashd worktrees [prune] [--db PATH]

Lists the git worktrees leashd made for its chats (LEASHD_WORKTREES=on) in
the repository of LEASHD_WORKDIR: chat, branch, base branch, whether the
chat still works there, and the path. "prune" removes the worktrees whose
chat is gone (no chat in the database works there any more) with their
branches. It reads the database (LEASHD_DB_PATH) without changing it, also
while leashd runs.

Flags:
  --db PATH   the database file (default: LEASHD_DB_PATH); worktrees live
              in worktrees/ next to it
`

// dbPathError names where an unusable database's path came from: --db
// when given, else LEASHD_DB_PATH.
func dbPathError(flagValue, path string, err error) error {
	if flagValue != "" {
		return fmt.Errorf("--db %s: %w", path, err)
	}
	return fmt.Errorf("LEASHD_DB_PATH=%s: %w", path, err)
}

// runWorktrees is `leashd worktrees [prune]`.
func runWorktrees(ctx context.Context, cfg config.Config, args []string, stdout, stderr io.Writer) error {
	action, db, err := worktreesArgs(args, stderr)
	if err != nil || action == "help" {
		return err
	}
	path := cmp.Or(db, cfg.DBPath)
	m, err := openWorktrees(ctx, cfg, filepath.Dir(path))
	if err != nil {
		return err
	}
	workdirs, err := chatWorkdirs(ctx, path, action == "prune", stderr)
	if err != nil {
		return dbPathError(db, path, err)
	}
	inUse := func(t worktree.Tree) bool { return t.Chat != "" && workdirs[t.Chat] == t.Path }
	if action == "prune" {
		return pruneWorktrees(ctx, m, inUse, stdout)
	}
	return listWorktrees(ctx, m, inUse, stdout)
}

// worktreesArgs reads the action ("", "prune", or "help" after -h) and
// --db; the action may come before or after the flags.
func worktreesArgs(args []string, stderr io.Writer) (action, db string, err error) {
	fs := flag.NewFlagSet("leashd worktrees", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dbFlag := fs.String("db", "", "")
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		action, args = args[0], args[1:]
	}
	if err := fs.Parse(args); err != nil {
		fmt.Fprint(stderr, worktreesUsage)
		if errors.Is(err, flag.ErrHelp) {
			return "help", "", nil
		}
		return "", "", fmt.Errorf("leashd worktrees: %w", err)
	}
	if action == "" && fs.NArg() > 0 {
		action = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return "", "", fmt.Errorf("leashd worktrees: unexpected argument %q (see leashd worktrees -h)", fs.Arg(0))
	}
	if action != "" && action != "prune" {
		return "", "", fmt.Errorf("leashd worktrees: unknown action %q (accepted: prune, or nothing to list)", action)
	}
	return action, *dbFlag, nil
}

// chatWorkdirs reads which chat works where from the database at path. No
// database means no chat is known; pruning then refuses, since it could
// not tell which chats are gone.
func chatWorkdirs(ctx context.Context, path string, prune bool, stderr io.Writer) (map[string]string, error) {
	workdirs := map[string]string{}
	s, err := sqlite.Open(ctx, path, sqlite.ReadOnly())
	switch {
	case sqlite.IsNotExist(err) && prune:
		return nil, fmt.Errorf("no database at %s: leashd cannot tell which chats are gone, so it prunes nothing (set --db or LEASHD_DB_PATH)", path)
	case sqlite.IsNotExist(err):
		fmt.Fprintf(stderr, "no database at %s: no chat is known\n", path)
		return workdirs, nil
	case err != nil:
		return nil, err
	}
	recs, err := s.Sessions(ctx)
	_ = s.Close()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	for _, r := range recs {
		workdirs[r.ChatID] = r.WorkDir
	}
	return workdirs, nil
}

// pruneWorktrees removes the worktrees whose chat is gone, saying which.
func pruneWorktrees(ctx context.Context, m *worktree.Manager, inUse func(worktree.Tree) bool, stdout io.Writer) error {
	removed, err := m.Prune(ctx, inUse)
	for _, t := range removed {
		fmt.Fprintf(stdout, "removed %s (branch %s, chat %s)\n", t.Path, t.Branch, orDash(t.Chat))
	}
	if err != nil {
		return err
	}
	if len(removed) == 0 {
		fmt.Fprintln(stdout, "nothing to prune: every worktree's chat still works there")
	}
	return nil
}

// listWorktrees prints every worktree with its chat and whether the chat
// still works there.
func listWorktrees(ctx context.Context, m *worktree.Manager, inUse func(worktree.Tree) bool, stdout io.Writer) error {
	trees, err := m.List(ctx)
	if err != nil {
		return err
	}
	if len(trees) == 0 {
		fmt.Fprintf(stdout, "no worktrees of %s under %s\n", m.Repo(), m.Root())
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 1, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHAT\tBRANCH\tBASE\tSTATE\tPATH")
	gone := 0
	for _, t := range trees {
		state := "in use"
		if !inUse(t) {
			state = "chat gone"
			gone++
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", orDash(t.Chat), t.Branch, orDash(t.Base), state, t.Path)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if gone > 0 {
		fmt.Fprintf(stdout, "%d worktree(s) whose chat is gone: `leashd worktrees prune` removes them and their branches\n", gone)
	}
	return nil
}
