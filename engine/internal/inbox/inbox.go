// Package inbox writes a file a person sent into a working directory's
// inbox: the engine into the chat's directory on the server, a runner
// into its own. Both write the same way, so a file lands as safely on a
// runner as on the server.
package inbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
)

// Dir is where files people send are saved, under the working directory:
// .leashd/inbox/<message>/<name>.
const Dir = ".leashd/inbox"

// Write creates p (a path under Dir) in root with what src holds, making
// its folder and a .gitignore for .leashd, so nothing people send is
// committed by accident (a chat's worktree is merged with git). Going
// through root, no path (a symlinked .leashd included) leads outside it,
// and an existing file or symlink is never written through. A file not
// written whole is removed. It returns how many bytes it wrote.
func Write(root *os.Root, p string, src io.Reader) (int64, error) {
	if err := root.MkdirAll(path.Dir(p), 0o700); err != nil {
		return 0, fmt.Errorf("the inbox folder %s cannot be made: %w", path.Dir(p), err)
	}
	if f, err := root.OpenFile(".leashd/.gitignore", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		_, _ = f.WriteString("*\n")
		_ = f.Close()
	}
	f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return 0, fmt.Errorf("%s exists already", p)
	}
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(f, src)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = root.Remove(p)
	}
	return n, err
}
