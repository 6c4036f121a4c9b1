package worktree_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/worktree"
)

// TestMergeRefusesToOverwriteAnIgnoredFileInTheMainCheckout: the agent
// empties .gitignore on its branch and writes .env; the person's own
// ignored .env in the main checkout is kept and the merge refused, naming
// it (git alone replaces ignored files without a word).
func TestMergeRefusesToOverwriteAnIgnoredFileInTheMainCheckout(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	write(t, repo, ".gitignore", ".env\n")
	git(t, repo, "add", ".gitignore")
	git(t, repo, "commit", "-q", "-m", "ignore .env")
	m, _ := newManager(t, repo)
	tr, err := m.Ensure(ctx, "web:env")
	require.NoError(t, err)
	write(t, repo, ".env", "SECRET=the-real-production-key\n")
	write(t, tr.Path, ".gitignore", "")
	write(t, tr.Path, ".env", "SECRET=from-the-agent\n")
	head := git(t, repo, "rev-parse", "HEAD")

	res, err := m.Merge(ctx, "web:env", "agent's env")
	require.ErrorIs(t, err, worktree.ErrUntracked)
	var me *worktree.MergeError
	require.True(t, errors.As(err, &me))
	assert.Equal(t, []string{".env"}, me.Files)
	assert.Equal(t, []string{".env"}, me.Ignored)
	assert.True(t, res.Committed, "the worktree's commit is kept")
	assert.Equal(t, "SECRET=the-real-production-key\n", read(t, repo, ".env"))
	assert.Equal(t, ".env\n", read(t, repo, ".gitignore"))
	assert.Equal(t, head, git(t, repo, "rev-parse", "HEAD"))
	assert.Empty(t, git(t, repo, "status", "--porcelain"))
}

// TestMergeRefusesToOverwriteUntrackedFilesAndNamesThem: an untracked file
// where the branch adds one, and an untracked file where the branch needs
// a directory, are named; one the branch does not touch is not.
func TestMergeRefusesToOverwriteUntrackedFilesAndNamesThem(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	m, _ := newManager(t, repo)
	tr, err := m.Ensure(ctx, "web:u")
	require.NoError(t, err)
	write(t, tr.Path, "notes.txt", "agent's notes\n")
	write(t, tr.Path, "build/out.txt", "agent's build\n")
	write(t, tr.Path, "src/new.go", "package src\n")
	write(t, repo, "notes.txt", "my notes\n")
	write(t, repo, "build", "a file where the branch has a directory\n")
	write(t, repo, "src/mine.go", "untracked, not in the way\n")
	head := git(t, repo, "rev-parse", "HEAD")

	_, err = m.Merge(ctx, "web:u", "files")
	var me *worktree.MergeError
	require.True(t, errors.As(err, &me), "%v", err)
	require.ErrorIs(t, err, worktree.ErrUntracked)
	assert.Equal(t, []string{"build", "notes.txt"}, me.Files)
	assert.Empty(t, me.Ignored)
	assert.Equal(t, "my notes\n", read(t, repo, "notes.txt"))
	assert.Equal(t, head, git(t, repo, "rev-parse", "HEAD"))

	require.NoError(t, os.Remove(filepath.Join(repo, "notes.txt")))
	require.NoError(t, os.Remove(filepath.Join(repo, "build")))
	res, err := m.Merge(ctx, "web:u", "files")
	require.NoError(t, err)
	assert.True(t, res.Merged)
	assert.Equal(t, "untracked, not in the way\n", read(t, repo, "src/mine.go"))
	assert.Equal(t, "package src\n", read(t, repo, "src/new.go"))
}
