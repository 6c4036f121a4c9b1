package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// pkg is one package of the module as go list describes it, with import
// paths made relative to the module ("engine/approval", "" for the root).
type pkg struct {
	Path        string // relative to the module
	Dir         string
	Imports     []string // of non-test files, module packages only, relative
	TestImports []string // of _test.go files (both packages), module only, relative
}

// listed is the part of go list's JSON the tests read.
type listed struct {
	ImportPath   string
	Dir          string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Error        *struct{ Err string }
}

// moduleRoot returns the directory of the module's go.mod and its module path.
func moduleRoot(t *testing.T) (dir, path string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}\t{{.Path}}").Output()
	if err != nil {
		t.Fatalf("go list -m: %v%s", err, stderrOf(err))
	}
	dir, path, ok := strings.Cut(strings.TrimSpace(string(out)), "\t")
	if !ok || dir == "" {
		t.Fatalf("go list -m printed %q", out)
	}
	return dir, path
}

// packages lists the module's packages with `go list -e -json ./...` run
// from the module root.
func packages(t *testing.T) []pkg {
	t.Helper()
	root, modPath := moduleRoot(t)
	cmd := exec.Command("go", "list", "-e", "-json", "./...")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -json ./...: %v%s", err, stderrOf(err))
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var l listed
		if err := dec.Decode(&l); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading go list's output: %v", err)
		}
		if l.Error != nil {
			t.Errorf("go list: %s: %s", l.ImportPath, l.Error.Err)
		}
		pkgs = append(pkgs, pkg{
			Path:        relative(modPath, l.ImportPath),
			Dir:         l.Dir,
			Imports:     ownImports(modPath, l.Imports),
			TestImports: ownImports(modPath, append(l.TestImports, l.XTestImports...)),
		})
	}
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	return pkgs
}

// ownImports keeps the module's own packages of imports, relative to the
// module, without duplicates.
func ownImports(modPath string, imports []string) []string {
	seen := map[string]bool{}
	var own []string
	for _, imp := range imports {
		if imp != modPath && !strings.HasPrefix(imp, modPath+"/") {
			continue
		}
		if rel := relative(modPath, imp); !seen[rel] {
			seen[rel] = true
			own = append(own, rel)
		}
	}
	return own
}

// relative returns importPath relative to the module path modPath.
func relative(modPath, importPath string) string {
	return strings.TrimPrefix(strings.TrimPrefix(importPath, modPath), "/")
}

// under reports whether the relative package path p is dir or inside it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// stderrOf returns what a failed command printed on stderr, if anything.
func stderrOf(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) && len(exit.Stderr) > 0 {
		return "\n" + string(exit.Stderr)
	}
	return ""
}

// goFile is one .go file of the module, its path relative to the root.
type goFile struct {
	Rel  string // slash-separated, relative to the module root
	Path string // on disk
}

// goFiles walks the module for .go files, leaving out testdata folders,
// folders whose name starts with "." or "_", and nested modules.
func goFiles(t *testing.T) []goFile {
	t.Helper()
	root, _ := moduleRoot(t)
	var files []goFile
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); path != root && err == nil {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") {
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			files = append(files, goFile{Rel: filepath.ToSlash(rel), Path: path})
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking the module: %v", err)
	}
	return files
}

// isTest reports whether the file is a test file.
func (f goFile) isTest() bool { return strings.HasSuffix(f.Rel, "_test.go") }
