package engine

import (
	"fmt"
	"os"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

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

// openWorkDir opens the working directory ("" for the current one) as
// the root files people send are saved through.
func openWorkDir(workDir string) (*os.Root, error) {
	if workDir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("the working directory is unknown: %w", err)
		}
		workDir = wd
	}
	root, err := os.OpenRoot(workDir)
	if err != nil {
		return nil, fmt.Errorf("the working directory cannot be opened: %w", err)
	}
	return root, nil
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
