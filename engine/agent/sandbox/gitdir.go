package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// GitCommonDir is the main repository's git directory when dir is a
// linked worktree (its .git is a file "gitdir: <common>/worktrees/<name>"),
// else "". A sandbox that lets the agent write dir must let it write this
// too: commits made in a worktree land there.
func GitCommonDir(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, ".git"))
	if err != nil {
		return ""
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return ""
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(dir, gitdir)
	}
	if common, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		c := strings.TrimSpace(string(common))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitdir, c)
		}
		return filepath.Clean(c)
	}
	return ""
}

// Under reports whether p is one of roots or inside one.
func Under(p string, roots []string) bool {
	for _, r := range roots {
		if p == r || strings.HasPrefix(p, r+string(filepath.Separator)) {
			return true
		}
	}
	return false
}
