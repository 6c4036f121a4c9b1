package engine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/leashd/leashd/connectors"
)

// SendFile sends a file from a chat's working directory to the chat: the
// agent's send_file tool (engine/mcpserver). path is relative to the
// working directory or absolute inside it. A path outside it (a symlink
// leading out included), anything but a regular file, and a file over
// the upload limit are refused; the error, for the agent, says why. It
// returns what was sent, for the agent.
func (e *Engine) SendFile(ctx context.Context, chatID, path, caption string) (string, error) {
	if strings.TrimSpace(path) == "" {
		return "", errors.New("path is empty: give the file's path, relative to the working directory")
	}
	c := e.chatFor(ctx, chatID)
	e.mu.Lock()
	dir := c.workDir
	e.mu.Unlock()
	if _, err := e.fileSender(chatID); err != nil {
		return "", err
	}
	data, name, err := ReadWorkFile(dir, path, e.opts.files.maxBytes)
	if err != nil {
		return "", err
	}
	return e.SendFileData(ctx, chatID, name, caption, data)
}

// SendFileData sends a file an agent read where it runs (a runner's
// send_file) to the chat; name is the file's base name. A file over the
// upload limit is refused. It returns what was sent, for the agent.
func (e *Engine) SendFileData(ctx context.Context, chatID, name, caption string, data []byte) (string, error) {
	sender, err := e.fileSender(chatID)
	if err != nil {
		return "", err
	}
	if limit := e.opts.files.maxBytes; int64(len(data)) > limit {
		return "", fmt.Errorf("%s is %s, over the limit of %s (LEASHD_MAX_UPLOAD_BYTES)", name, byteSize(int64(len(data))), byteSize(limit))
	}
	mt := http.DetectContentType(data)
	f := connectors.OutFile{Name: name, MediaType: mt, Caption: caption, Data: data, Image: isImageType(mt)}
	if err := sender.SendFile(ctx, chatID, f); err != nil {
		return "", fmt.Errorf("the chat app did not take %s: %w", name, err)
	}
	return fmt.Sprintf("Sent %s (%s) to the chat.", name, byteSize(int64(len(data)))), nil
}

// fileSender is the connector that shows chatID, if it can take files.
func (e *Engine) fileSender(chatID string) (connectors.FileSender, error) {
	e.mu.Lock()
	owner := e.ownerLocked(chatID)
	e.mu.Unlock()
	sender, ok := owner.(connectors.FileSender)
	if owner == nil || !ok {
		return nil, fmt.Errorf("this chat (%s) cannot receive files", connectors.ChatPrefix(chatID))
	}
	return sender, nil
}

// ReadWorkFile reads a regular file inside dir (the working directory,
// "" for the current one) through an os.Root, so no path or symlink
// leads outside it, of at most limit bytes. It returns the file and its
// base name; the error, for the agent, says why not. A runner's
// send_file reads with it too.
func ReadWorkFile(dir, path string, limit int64) (data []byte, name string, err error) {
	if dir == "" {
		if dir, err = os.Getwd(); err != nil {
			return nil, "", err
		}
	}
	rel := path
	if filepath.IsAbs(path) {
		r, err := filepath.Rel(dir, path)
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return nil, "", fmt.Errorf("%s is outside the working directory %s: only files inside it may be sent", path, dir)
		}
		rel = r
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, "", fmt.Errorf("the working directory cannot be opened: %w", err)
	}
	defer root.Close()
	f, err := root.Open(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, "", fmt.Errorf("%s does not exist in the working directory %s", path, dir)
	case err != nil:
		return nil, "", fmt.Errorf("%s cannot be sent: it is outside the working directory %s or unreadable (%v)", path, dir, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, "", err
	}
	if !st.Mode().IsRegular() {
		return nil, "", fmt.Errorf("%s is not a regular file (%s)", path, st.Mode().Type())
	}
	if st.Size() > limit {
		return nil, "", fmt.Errorf("%s is %s, over the limit of %s (LEASHD_MAX_UPLOAD_BYTES)", path, byteSize(st.Size()), byteSize(limit))
	}
	data, err = connectors.ReadLimited(f, limit)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return data, filepath.Base(rel), nil
}
