package engine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// inboxDir is where files people send are saved, under the chat's working
// directory: .leashd/inbox/<message>/<name>.
const inboxDir = ".leashd/inbox"

// maxNameBytes bounds a saved file's name.
const maxNameBytes = 100

// safeName makes a file name people sent safe to save: no folders, no
// leading dot (no hidden files, no "."/".."), only letters, digits,
// spaces and ._- (others become _), at most maxNameBytes, keeping the
// extension. Without a usable name it is file-<n>, with the extension of
// its media type.
func safeName(name string, n int, mediaType string) string {
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	var b strings.Builder
	for _, r := range name {
		switch {
		case r == utf8.RuneError:
			b.WriteByte('_')
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '-' || r == '_' || r == ' ':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	name = strings.TrimLeft(strings.TrimSpace(b.String()), ". ")
	name = strings.TrimRight(name, ". ")
	ext := path.Ext(name)
	if ext == "" {
		ext = extensionOf(mediaType)
		name += ext
	}
	if len(ext) > 16 {
		ext = ""
	}
	if len(name) > maxNameBytes {
		stem := strings.TrimSuffix(name, ext)
		stem = truncateUTF8(stem, maxNameBytes-len(ext))
		name = stem + ext
	}
	if strings.TrimSuffix(name, ext) == "" {
		name = fmt.Sprintf("file-%d%s", n, extensionOf(mediaType))
	}
	return name
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// extensionOf is the usual extension of a media type ("" if unknown).
func extensionOf(mediaType string) string {
	mt, _, _ := strings.Cut(mediaType, ";")
	switch strings.TrimSpace(mt) {
	case "image/jpeg":
		return ".jpg"
	case "image/png":
		return ".png"
	case "image/gif":
		return ".gif"
	case "image/webp":
		return ".webp"
	case "application/pdf":
		return ".pdf"
	case "text/plain":
		return ".txt"
	case "application/zip":
		return ".zip"
	case "audio/ogg":
		return ".ogg"
	}
	return ""
}

// saved is a file saved in the inbox: its path relative to the working
// directory, what it is and its size.
type saved struct {
	path, mediaType string
	size            int
}

// saveInbox saves files under workDir/.leashd/inbox/<id>/ and returns
// their paths relative to workDir. Everything is created through an
// os.Root of workDir: no path (a symlinked .leashd included) leads
// outside it, and an existing file (or symlink) is never written through.
func saveInbox(workDir, id string, files []fetched) (paths []saved, problems []string) {
	if workDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, []string{"the working directory is unknown: " + err.Error()}
		}
		workDir = wd
	}
	root, err := os.OpenRoot(workDir)
	if err != nil {
		return nil, []string{"the working directory cannot be opened: " + err.Error()}
	}
	defer root.Close()
	dir := path.Join(inboxDir, id)
	if err := root.MkdirAll(dir, 0o700); err != nil {
		return nil, []string{"the inbox folder " + dir + " cannot be made: " + err.Error()}
	}
	// Nothing people send is committed by accident (a chat's worktree is
	// merged with git).
	if f, err := root.OpenFile(".leashd/.gitignore", os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		_, _ = f.WriteString("*\n")
		_ = f.Close()
	}
	used := map[string]bool{}
	for _, f := range files {
		name := uniqueName(used, f.name)
		p := path.Join(dir, name)
		if err := writeNew(root, p, f.data); err != nil {
			problems = append(problems, f.name+" could not be saved: "+err.Error())
			continue
		}
		paths = append(paths, saved{path: p, mediaType: f.mediaType, size: len(f.data)})
	}
	return paths, problems
}

// uniqueName is name, or name with a number before its extension when a
// file of this prompt already has it.
func uniqueName(used map[string]bool, name string) string {
	ext := path.Ext(name)
	stem := strings.TrimSuffix(name, ext)
	out := name
	for n := 2; used[strings.ToLower(out)]; n++ {
		out = fmt.Sprintf("%s-%d%s", stem, n, ext)
	}
	used[strings.ToLower(out)] = true
	return out
}

// writeNew creates p (never an existing file or symlink) and writes data.
func writeNew(root *os.Root, p string, data []byte) error {
	f, err := root.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s exists already", p)
		}
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}
