package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/hashicorp/yamux"

	"github.com/leashd/leashd/engine/internal/inbox"
)

// A file a person sends with a message is saved in the working directory
// of the chat's agent, in its inbox, and the prompt names it there. For
// an agent on a runner that directory is on the runner's disk, so the
// server puts the file there over the runner's connection: a put stream
// says where and how long, the runner answers, the bytes follow, and the
// runner answers again once the file is written.

// ErrNotOnRunner is PutFile's error for a chat whose agent runs on the
// server itself: the caller saves the file there.
var ErrNotOnRunner = errors.New("this chat's agent runs on no runner")

// inboxPrefix is where puts may write: a runner trusts its server, but a
// file a person sent has no business anywhere else.
const inboxPrefix = inbox.Dir + "/"

// maxPut bounds one file put (LEASHD_MAX_UPLOAD_BYTES's largest value).
const maxPut = 1 << 30

// PutFile writes data at p, a path under the working directory's
// .leashd/inbox/, on the runner that runs chat's agent. It never writes
// over an existing file. ErrNotOnRunner: the chat's agent is on no runner.
func (h *Hub) PutFile(ctx context.Context, chat, p string, data []byte) error {
	name := h.RunnerOf(chat)
	h.mu.Lock()
	rs := h.runners[name]
	var c *runnerConn
	if rs != nil {
		c = rs.conn
	}
	h.mu.Unlock()
	switch {
	case name == "":
		return ErrNotOnRunner
	case c == nil:
		return fmt.Errorf("this chat's runner %s is disconnected", name)
	}
	req := openReq{Op: opPut, Path: p, Size: int64(len(data))}
	if err := checkPut(req); err != nil {
		return err
	}
	st, _, err := c.open(req, 30*time.Second)
	if err != nil {
		return err
	}
	defer st.Close()
	stop := context.AfterFunc(ctx, func() { st.Close() })
	defer stop()
	// A generous bound: 1 MiB/s at worst, never less than a minute.
	_ = st.SetDeadline(time.Now().Add(time.Minute + time.Duration(len(data)>>20)*time.Second))
	if _, err := st.Write(data); err != nil {
		return fmt.Errorf("runner %s: sending %s: %w", name, path.Base(p), err)
	}
	var resp openResp
	if err := readMsg(bufio.NewReader(st), &resp); err != nil {
		return fmt.Errorf("runner %s: %w", name, err)
	}
	if resp.Error != "" {
		return fmt.Errorf("runner %s: %s", name, resp.Error)
	}
	return nil
}

// checkPut says what is wrong with a put request, if anything.
func checkPut(req openReq) error {
	p := req.Path
	switch {
	case req.Size < 0 || req.Size > maxPut:
		return fmt.Errorf("a file of %d bytes (accepted: 0 to %d)", req.Size, maxPut)
	case len(p) > 4096 || strings.ContainsRune(p, 0):
		return errors.New("a file path longer than 4096 bytes or holding a NUL")
	case !strings.HasPrefix(p, inboxPrefix) || path.Clean(p) != p || path.IsAbs(p) ||
		strings.Contains(p, "\\") || len(p) == len(inboxPrefix):
		return fmt.Errorf("file path %q: only a clean path under %s is accepted", p, inboxPrefix)
	}
	return nil
}

// receive writes a put's bytes to its file and answers how it went.
func (r *Runner) receive(req openReq, st *yamux.Stream) {
	defer st.Close()
	_ = st.SetDeadline(time.Now().Add(time.Minute + time.Duration(req.Size>>20)*time.Second))
	resp := openResp{}
	if err := r.writeFile(req.Path, io.LimitReader(st, req.Size), req.Size); err != nil {
		resp.Error = err.Error()
		r.Log.Warn("a file from the server could not be saved", "path", req.Path, "err", err)
	} else {
		r.Log.Info("saved a file a person sent", "path", req.Path, "bytes", req.Size)
	}
	_ = writeMsg(st, resp)
}

// writeFile creates p in the working directory (inbox.Write: never over
// a file or through a symlink out of it) with the size bytes of src.
func (r *Runner) writeFile(p string, src io.Reader, size int64) error {
	dir := r.Dir
	if dir == "" {
		dir = "."
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("the working directory cannot be opened: %w", err)
	}
	defer root.Close()
	n, err := inbox.Write(root, p, src)
	if err == nil && n != size {
		_ = root.Remove(p)
		err = fmt.Errorf("got %d of %d bytes", n, size)
	}
	return err
}
