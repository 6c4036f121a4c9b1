// Package claudehooks adds hooks to a Claude Code settings file and takes
// them out again (`leashd hook install` and `uninstall`). The file is the
// person's: everything else in it is kept, installing twice changes
// nothing, the file as it was before the first install is kept beside it
// (BackupSuffix), and uninstalling removes exactly the hooks it added —
// the file is then byte for byte what it was before, when nothing else in
// it changed meanwhile, and gone again when it did not exist.
package claudehooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
)

// BackupSuffix names the copy of the file kept at install.
const BackupSuffix = ".leashd-backup"

// maxFile bounds the settings file read (they are a few KiB).
const maxFile = 4 << 20

// Hook is one command hook: for Event (PermissionRequest, Stop,
// Notification), on the tools or notifications Matcher names ("" for
// every one), running Command within Timeout seconds.
type Hook struct {
	Event   string
	Matcher string
	Command string
	Timeout int
}

// Ours tells the commands of the hooks a caller manages from anyone
// else's.
type Ours func(command string) bool

// Install writes hooks into the settings file at path, replacing the ones
// ours recognises, and reports whether the file changed. Before the first
// install (the file has none of ours) the file is copied to
// path+BackupSuffix.
func Install(path string, hooks []Hook, ours Ours) (changed bool, err error) {
	orig, exists, err := read(path)
	if err != nil {
		return false, err
	}
	doc, err := parse(path, orig)
	if err != nil {
		return false, err
	}
	had := remove(doc, ours) > 0
	for _, h := range hooks {
		if err := add(doc, h); err != nil {
			return false, fmt.Errorf("%s: %w: fix it, then install again", path, err)
		}
	}
	out, err := encode(doc)
	if err != nil {
		return false, err
	}
	if exists && bytes.Equal(out, orig) {
		return false, nil
	}
	if !had {
		if err := backup(path, orig, exists); err != nil {
			return false, err
		}
	}
	return true, write(path, out)
}

// Uninstall removes the hooks ours recognises from the file at path and
// returns how many. When what remains is what the backup holds, the backup
// is put back as it was (or the file removed, when there was none before)
// and the backup removed.
func Uninstall(path string, ours Ours) (removed int, err error) {
	orig, exists, err := read(path)
	if err != nil || !exists {
		return 0, err
	}
	doc, err := parse(path, orig)
	if err != nil {
		return 0, err
	}
	removed = remove(doc, ours)
	if removed == 0 {
		return 0, nil
	}
	bak := path + BackupSuffix
	before, hadBackup, err := read(bak)
	if err != nil {
		return 0, err
	}
	if hadBackup {
		if prev, err := parse(bak, before); err == nil && reflect.DeepEqual(bare(prev), bare(doc)) {
			if err := write(path, before); err != nil {
				return 0, err
			}
			return removed, os.Remove(bak)
		}
	} else if len(doc) == 0 {
		// Nothing was there before the install and nothing else is now.
		return removed, os.Remove(path)
	}
	out, err := encode(doc)
	if err != nil {
		return 0, err
	}
	return removed, write(path, out)
}

// Find returns the hooks ours recognises in the file at path (none when it
// does not exist).
func Find(path string, ours Ours) ([]Hook, error) {
	b, exists, err := read(path)
	if err != nil || !exists {
		return nil, err
	}
	doc, err := parse(path, b)
	if err != nil {
		return nil, err
	}
	var out []Hook
	hooks, _ := doc["hooks"].(map[string]any)
	for event, groups := range hooks {
		list, _ := groups.([]any)
		for _, g := range list {
			gm, _ := g.(map[string]any)
			matcher, _ := gm["matcher"].(string)
			hs, _ := gm["hooks"].([]any)
			for _, h := range hs {
				hm, _ := h.(map[string]any)
				cmd, _ := hm["command"].(string)
				if ours(cmd) {
					t, _ := hm["timeout"].(json.Number).Int64()
					out = append(out, Hook{Event: event, Matcher: matcher, Command: cmd, Timeout: int(t)})
				}
			}
		}
	}
	return out, nil
}

// read returns the file's bytes; exists is false when there is no file.
func read(path string) (b []byte, exists bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, false, fmt.Errorf("reading %s: %w", path, err)
	}
	if n > maxFile {
		return nil, false, fmt.Errorf("%s is larger than %d MiB: not a Claude Code settings file", path, maxFile>>20)
	}
	return buf.Bytes(), true, nil
}

// parse reads a settings file: a JSON object, or nothing (an empty
// file). Numbers stay as written.
func parse(path string, b []byte) (map[string]any, error) {
	doc := map[string]any{}
	if len(bytes.TrimSpace(b)) == 0 {
		return doc, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%s is not a JSON object (%v): fix or move it, then install again", path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s has more than one JSON value: fix or move it, then install again", path)
	}
	if doc == nil {
		doc = map[string]any{}
	}
	return doc, nil
}

// bare is doc without empty event lists and an empty hooks object, which
// install fills and uninstall then removes: the same settings.
func bare(doc map[string]any) map[string]any {
	hooks, ok := doc["hooks"].(map[string]any)
	if !ok {
		return doc
	}
	out := make(map[string]any, len(doc))
	for k, v := range doc {
		out[k] = v
	}
	h := map[string]any{}
	for event, v := range hooks {
		if l, ok := v.([]any); !ok || len(l) > 0 {
			h[event] = v
		}
	}
	if len(h) == 0 {
		delete(out, "hooks")
	} else {
		out["hooks"] = h
	}
	return out
}

// encode writes the settings as Claude Code does: two-space indent, a
// newline at the end, no HTML escaping.
func encode(doc map[string]any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// remove takes the hooks ours recognises out of doc, and the matcher
// groups, events and the hooks object they leave empty; it returns how
// many it took.
func remove(doc map[string]any, ours Ours) int {
	hooks, ok := doc["hooks"].(map[string]any)
	if !ok {
		return 0
	}
	n := 0
	for event, groups := range hooks {
		list, ok := groups.([]any)
		if !ok {
			continue
		}
		kept := list[:0:0]
		for _, g := range list {
			gm, ok := g.(map[string]any)
			hs, ok2 := gm["hooks"].([]any)
			if !ok || !ok2 {
				kept = append(kept, g)
				continue
			}
			var left []any
			for _, h := range hs {
				hm, _ := h.(map[string]any)
				if cmd, _ := hm["command"].(string); cmd != "" && ours(cmd) {
					n++
					continue
				}
				left = append(left, h)
			}
			switch {
			case len(left) == len(hs):
				kept = append(kept, g)
			case len(left) > 0:
				gm["hooks"] = left
				kept = append(kept, g)
			}
		}
		if len(kept) != len(list) {
			if len(kept) == 0 {
				delete(hooks, event)
			} else {
				hooks[event] = kept
			}
		}
	}
	if len(hooks) == 0 && n > 0 {
		delete(doc, "hooks")
	}
	return n
}

// add appends h as a matcher group of its own; a "hooks" that is not an
// object, or an event's entry that is not a list, is refused rather than
// replaced.
func add(doc map[string]any, h Hook) error {
	hooks, ok := doc["hooks"].(map[string]any)
	if v, there := doc["hooks"]; there && !ok {
		return fmt.Errorf(`"hooks" is %s, not an object`, kindOf(v))
	}
	if !ok {
		hooks = map[string]any{}
		doc["hooks"] = hooks
	}
	list, ok := hooks[h.Event].([]any)
	if v, there := hooks[h.Event]; there && !ok {
		return fmt.Errorf(`"hooks.%s" is %s, not a list`, h.Event, kindOf(v))
	}
	cmd := map[string]any{"type": "command", "command": h.Command}
	if h.Timeout > 0 {
		cmd["timeout"] = json.Number(fmt.Sprint(h.Timeout))
	}
	group := map[string]any{"hooks": []any{cmd}}
	if h.Matcher != "" {
		group["matcher"] = h.Matcher
	}
	hooks[h.Event] = append(list, group)
	return nil
}

// kindOf names a JSON value's type for a message.
func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	}
	return "an object"
}

// backup keeps the file as it was before the first install; a file that
// did not exist leaves no backup (uninstall then removes the file when
// nothing else was added).
func backup(path string, orig []byte, exists bool) error {
	bak := path + BackupSuffix
	if !exists {
		if err := os.Remove(bak); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	return write(bak, orig)
}

// write replaces the file at path with b atomically (a temporary file
// renamed over it), keeping its mode (0600 for a new file).
func write(path string, b []byte) error {
	mode := fs.FileMode(0o600)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
