package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Hidden is what no sandboxed agent may see, among what exists now: the
// given paths (leashd's state), the Docker daemon's socket (whoever reaches
// it is root on this machine) and /etc/leashd, where the packaged env file
// keeps leashd's tokens. Paths are cleaned, without duplicates, parents
// first, so that a file hidden inside a hidden directory is not undone by
// the directory's cover.
func Hidden(paths []string) []string {
	all := append(append([]string(nil), paths...), "/run/docker.sock", "/var/run/docker.sock", "/etc/leashd")
	if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
		all = append(all, strings.TrimPrefix(h, "unix://"))
	}
	var out []string
	for _, p := range all {
		if p != "" && Exists(p) && !slices.Contains(out, filepath.Clean(p)) {
			out = append(out, filepath.Clean(p))
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) < len(out[j]) })
	return out
}

// Exists reports whether p exists now.
func Exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
