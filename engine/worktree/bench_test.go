package worktree_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/leashd/leashd/engine/enginetest/gittest"
	"github.com/leashd/leashd/engine/worktree"
)

// BenchmarkEnsureExisting is what opening a chat's session costs once its
// worktree exists (every resume after an idle close).
func BenchmarkEnsureExisting(b *testing.B) {
	ctx := context.Background()
	repo := gittest.Repo(b)
	m, err := worktree.New(ctx, repo, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	if _, err := m.Ensure(ctx, "web:a"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := m.Ensure(ctx, "web:a"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEnsureNew is a chat's first prompt: a new branch and worktree.
func BenchmarkEnsureNew(b *testing.B) {
	ctx := context.Background()
	repo := gittest.Repo(b)
	m, err := worktree.New(ctx, repo, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		if _, err := m.Ensure(ctx, fmt.Sprintf("web:%d", i)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStatusAndMerge is /worktree then /merge of one new file.
func BenchmarkStatusAndMerge(b *testing.B) {
	ctx := context.Background()
	repo := gittest.Repo(b)
	m, err := worktree.New(ctx, repo, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	tr, err := m.Ensure(ctx, "web:a")
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		gittest.Write(b, tr.Path, fmt.Sprintf("f%d.txt", i), "x\n")
		if _, err := m.Status(ctx, "web:a"); err != nil {
			b.Fatal(err)
		}
		if res, err := m.Merge(ctx, "web:a", "add"); err != nil || !res.Merged {
			b.Fatal(res, err)
		}
	}
}
