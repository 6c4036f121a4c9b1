package remote

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/yamux"
)

// Files from runners. An agent on a runner sends a file from its working
// directory to its chat with leashd's send_file tool; the file is on the
// runner's disk, so the runner serves that tool and hands the file's
// bytes to the server on a stream it opens itself (the only stream a
// runner may open): one JSON line (fileHead), the server's answer (go
// ahead, or why not), exactly Size bytes, the server's last answer (the
// text for the agent, or the error). The server refuses before any byte
// of the file crosses, and bounds what a runner can make it hold: the
// size, the streams at once, and how long each read may take.

// DefaultMaxFileBytes bounds one file from a runner when Hub.MaxFileBytes
// is not set (LEASHD_MAX_UPLOAD_BYTES).
const DefaultMaxFileBytes = 20 << 20

const (
	opFile = "file"
	// maxFileName and maxCaption bound a file's name (a base name, as
	// file systems allow) and its caption.
	maxFileName = 255
	maxCaption  = 4 << 10
	// maxFileStreams is how many files one runner connection may be
	// sending at once: each may hold up to the limit in the server's
	// memory.
	maxFileStreams = 4
	// fileHeadTimeout bounds the wait for a file stream's first line,
	// and fileWriteTimeout each answer the server writes.
	fileHeadTimeout  = 10 * time.Second
	fileWriteTimeout = 30 * time.Second
	// fileAnswerTimeout bounds, on the runner, the wait for the server's
	// answers beyond the data's own time (the server passes the file on
	// to the chat before it answers).
	fileAnswerTimeout = 5 * time.Minute
)

// errTooManyFiles refuses a file stream over maxFileStreams.
var errTooManyFiles = errors.New("too many files being sent at once; try again")

// errNotConnected is SendFile's error while the runner has no connection.
var errNotConnected = errors.New("the runner is not connected to the leashd server now; try again in a moment")

// FileUpload is a file an agent on a runner sends to its chat with
// leashd's send_file tool.
type FileUpload struct {
	Credential string // the send_file credential the agent presented (never logged)
	// Chat is the chat the runner granted the credential for (the
	// session started with it serves that chat); the server checks it.
	Chat    string
	Name    string // the file's base name
	Caption string
	Data    []byte
}

// fileHead is the first line of a stream a runner opens.
type fileHead struct {
	Op         string `json:"op"`
	Name       string `json:"name"`
	Caption    string `json:"caption,omitempty"`
	Size       int64  `json:"size"`
	Credential string `json:"credential,omitempty"`
	Chat       string `json:"chat,omitempty"`
}

// fileResp is the server's answer on a file stream: first Ready (send
// the bytes) or Error, then, after the bytes, Text or Error.
type fileResp struct {
	Ready bool   `json:"ready,omitempty"`
	Text  string `json:"text,omitempty"`
	Error string `json:"error,omitempty"`
}

// readFileHead reads a file stream's first line. An error is a protocol
// violation (not JSON, too long, not a file request): the runner broke
// the protocol, not the agent its request.
func readFileHead(br *bufio.Reader) (fileHead, error) {
	var fh fileHead
	if err := readMsg(br, &fh); err != nil {
		return fh, err
	}
	if fh.Op != opFile {
		return fh, fmt.Errorf("a stream opened by a runner with op %q (accepted: %s)", truncate(fh.Op, maxWord), opFile)
	}
	return fh, nil
}

// check says why a file request is refused (its connection stays), or
// nil; limit is the largest size accepted.
func (fh *fileHead) check(limit int64) error {
	if err := checkFileName(fh.Name); err != nil {
		return err
	}
	if len(fh.Caption) > maxCaption {
		return fmt.Errorf("the caption of %s is %d bytes (accepted: at most %d)", fh.Name, len(fh.Caption), maxCaption)
	}
	if fh.Size < 0 {
		return fmt.Errorf("file %s: size %d (accepted: 0 or more bytes)", fh.Name, fh.Size)
	}
	if fh.Size > limit {
		return tooBig(fh.Name, fh.Size, limit)
	}
	return nil
}

// checkFileName accepts a base name: the file is the chat's to save, and
// a path in it would say where.
func checkFileName(name string) error {
	const accepted = "accepted: a base name of 1 to 255 bytes, without '/', '\\' or control characters, not '.' or '..'"
	switch {
	case name == "":
		return fmt.Errorf("no file name (%s)", accepted)
	case len(name) > maxFileName:
		return fmt.Errorf("a file name of %d bytes (%s)", len(name), accepted)
	case name == "." || name == ".." || strings.ContainsAny(name, `/\`) ||
		strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return fmt.Errorf("file name %q (%s)", name, accepted)
	}
	return nil
}

// tooBig is the refusal of a file over the server's limit.
func tooBig(name string, size, limit int64) error {
	return fmt.Errorf("file %s is %d bytes, over the leashd server's limit of %d bytes (LEASHD_MAX_UPLOAD_BYTES on the server sets it)", name, size, limit)
}

// fileDataTimeout bounds the time size bytes may take: two minutes, and a
// second for every 64 KiB (a slow link still makes it; a stalled runner
// does not hold the server's goroutine and memory forever).
func fileDataTimeout(size int64) time.Duration {
	return 2*time.Minute + time.Duration(size/(64<<10))*time.Second
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// fileWaits are how long the server waits for a file request, and for
// size bytes of its file; Hub.fileWait, when set (tests), is both.
func (h *Hub) fileWaits(size int64) (head, data time.Duration) {
	if h.fileWait > 0 {
		return h.fileWait, h.fileWait
	}
	return fileHeadTimeout, fileDataTimeout(size)
}

// maxFileBytes is the limit on one file from a runner.
func (h *Hub) maxFileBytes() int64 {
	if h.MaxFileBytes <= 0 {
		return DefaultMaxFileBytes
	}
	return h.MaxFileBytes
}

// Holds reports whether the named runner runs an agent for chat now: a
// process placed there (connected, or away within the grace period) or an
// orphan it holds. A runner sending a file for a chat it does not serve
// is refused with it.
func (h *Hub) Holds(runner, chat string) bool {
	return chat != "" && slices.Contains(h.runnersOf(chat), runner)
}

// RunnerOf is the runner that runs an agent for chat now, "" for none:
// the chat's agent runs on the server, or not at all.
func (h *Hub) RunnerOf(chat string) string {
	if rs := h.runnersOf(chat); len(rs) > 0 {
		return rs[0]
	}
	return ""
}

// runnersOf are the runners that run an agent for chat now (a process
// placed there, or an orphan it holds; more than one only while an old
// one ends). A lost runner's agents are being given up: not its.
func (h *Hub) runnersOf(chat string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, p := range h.procs {
		if p.chat == chat && h.runners[p.runner] != nil {
			out = append(out, p.runner)
		}
	}
	for _, o := range h.orphans {
		if o.chat == chat && h.runners[o.runner] != nil {
			out = append(out, o.runner)
		}
	}
	return out
}

// serveStreams takes the streams a runner opens, at most maxFileStreams
// at a time; one more is refused at once (its connection stays: a busy
// agent is no hostile runner). It ends with the connection.
func (h *Hub) serveStreams(rc *runnerConn) {
	slots := make(chan struct{}, maxFileStreams)
	for {
		st, err := rc.sess.AcceptStream()
		if err != nil {
			return
		}
		select {
		case slots <- struct{}{}:
			go func() {
				defer func() { <-slots }()
				h.serveFile(rc, st)
			}()
		default:
			h.log.Warn("a runner sends too many files at once; one more is refused", "runner", rc.name, "at_once", maxFileStreams)
			// A fresh stream's window takes this line without waiting.
			_ = st.SetWriteDeadline(time.Now().Add(fileWriteTimeout))
			_ = writeMsg(st, fileResp{Error: errTooManyFiles.Error()})
			st.Close()
		}
	}
}

// serveFile takes one file: it reads the request, refuses it or says go
// ahead, reads the bytes and answers what Files said.
func (h *Hub) serveFile(rc *runnerConn, st *yamux.Stream) {
	defer st.Close()
	headWait, _ := h.fileWaits(0)
	_ = st.SetReadDeadline(time.Now().Add(headWait))
	_ = st.SetWriteDeadline(time.Now().Add(fileWriteTimeout))
	br := bufio.NewReader(st)
	fh, err := readFileHead(br)
	var ne net.Error
	switch {
	case err == nil:
	case errors.Is(err, io.EOF) || rc.sess.IsClosed():
		return // closed before a word (its agent gave up), or the connection ended
	case errors.As(err, &ne) && ne.Timeout():
		h.log.Warn("a runner opened a stream and sent no whole request in time; it is closed", "runner", rc.name, "within", headWait)
		return
	default:
		h.log.Warn("a runner opened a stream that is not a file request; dropping its connection", "runner", rc.name, "err", err)
		rc.sess.Close()
		return
	}
	if err := h.admitFile(&fh); err != nil {
		h.log.Warn("a file from a runner was refused", "runner", rc.name, "size", fh.Size, "err", err)
		_ = writeMsg(st, fileResp{Error: err.Error()})
		return
	}
	if writeMsg(st, fileResp{Ready: true}) != nil {
		return
	}
	h.receiveFile(rc, st, br, fh)
}

// admitFile says why a file request is refused before its bytes cross,
// or nil.
func (h *Hub) admitFile(fh *fileHead) error {
	if h.Files == nil {
		return fmt.Errorf("this leashd server takes no files from runners; %s was not sent", truncate(fh.Name, maxFileName))
	}
	return fh.check(h.maxFileBytes())
}

// receiveFile reads the file's bytes and answers with what Files says.
// The buffer grows with what arrives: a size announced and never sent
// costs no memory.
func (h *Hub) receiveFile(rc *runnerConn, st *yamux.Stream, br *bufio.Reader, fh fileHead) {
	_, dataWait := h.fileWaits(fh.Size)
	_ = st.SetReadDeadline(time.Now().Add(dataWait))
	var buf bytes.Buffer
	if _, err := io.CopyN(&buf, br, fh.Size); err != nil {
		h.log.Warn("a file from a runner did not arrive whole", "runner", rc.name, "file", fh.Name, "size", fh.Size, "got", buf.Len(), "err", err)
		return
	}
	// The runner closing the stream now (its agent gave up) or the
	// connection ending cancels the upload; any read ends the watch.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_ = st.SetReadDeadline(time.Time{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		var b [1]byte
		_, _ = br.Read(b[:])
		cancel()
	}()
	text, err := h.Files(ctx, rc.name, FileUpload{Credential: fh.Credential, Chat: fh.Chat, Name: fh.Name, Caption: fh.Caption, Data: buf.Bytes()})
	_ = st.SetReadDeadline(time.Now()) // ends the watch
	<-watched
	// The runner reads the answer as one line of at most maxLine.
	resp := fileResp{Text: truncate(text, maxLine/4)}
	if err != nil {
		resp = fileResp{Error: truncate(err.Error(), maxLine/4)}
		h.log.Warn("a file from a runner was not sent", "runner", rc.name, "file", fh.Name, "size", fh.Size, "err", err)
	} else {
		h.log.Info("a file from a runner was sent", "runner", rc.name, "file", fh.Name, "size", fh.Size)
	}
	_ = st.SetWriteDeadline(time.Now().Add(fileWriteTimeout))
	_ = writeMsg(st, resp)
}

// SendFile sends f to the server over the runner's current connection and
// returns the server's answer for the agent (e.g. "Sent a.txt (3 B) to
// the chat."). A refusal from the server is the error, word for word;
// ctx ending closes the stream.
func (r *Runner) SendFile(ctx context.Context, f FileUpload) (string, error) {
	fh := fileHead{Op: opFile, Name: f.Name, Caption: f.Caption, Size: int64(len(f.Data)), Credential: f.Credential, Chat: f.Chat}
	r.mu.Lock()
	sess, limit := r.sess, r.maxFile
	r.mu.Unlock()
	if sess == nil || sess.IsClosed() {
		return "", errNotConnected
	}
	if limit <= 0 {
		// A server older than file streams says no limit, and drops a
		// connection that opens one: all its agents would reconnect.
		return "", errors.New("the leashd server does not take files from runners (it is older than this runner); update it to send files from here")
	}
	// What the server would refuse is refused here, and a request that
	// would break the protocol (a line over maxLine) never leaves.
	if err := fh.check(limit); err != nil {
		return "", err
	}
	if n := len(fh.Name) + len(fh.Caption) + len(fh.Credential) + len(fh.Chat); n > maxLine/2 {
		return "", fmt.Errorf("the name, caption, credential and chat of %s take %d bytes (accepted: at most %d)", fh.Name, n, maxLine/2)
	}
	st, err := sess.OpenStream()
	if errors.Is(err, yamux.ErrSessionShutdown) {
		return "", errNotConnected
	} else if err != nil {
		return "", fmt.Errorf("sending %s to the leashd server: %w; try again", fh.Name, err)
	}
	defer st.Close()
	// One deadline for the whole exchange, set before ctx may move it.
	_ = st.SetDeadline(time.Now().Add(fileHeadTimeout + fileDataTimeout(fh.Size) + fileAnswerTimeout))
	stop := context.AfterFunc(ctx, func() { _ = st.SetDeadline(time.Now()); st.Close() })
	defer stop()
	text, err := sendFileOn(st, fh, f.Data)
	if err != nil && ctx.Err() != nil {
		return "", fmt.Errorf("sending %s to the leashd server: %w", fh.Name, ctx.Err())
	}
	if err == nil {
		r.log().Info("file sent to the server", "file", fh.Name, "size", fh.Size)
	}
	return text, err
}

// serverSaid is an error the server answered: it goes to the agent as it
// is.
type serverSaid string

func (e serverSaid) Error() string { return string(e) }

// sendFileOn speaks the file protocol on st.
func sendFileOn(st *yamux.Stream, fh fileHead, data []byte) (string, error) {
	broke := func(what string, err error) error {
		return fmt.Errorf("sending %s to the leashd server: %s: %w; try again", fh.Name, what, err)
	}
	br := bufio.NewReader(st)
	if err := writeMsg(st, fh); err != nil {
		return "", broke("writing the request", err)
	}
	var resp fileResp
	if err := readMsg(br, &resp); err != nil {
		return "", broke("reading its answer", err)
	}
	if resp.Error != "" {
		return "", serverSaid(resp.Error)
	}
	if !resp.Ready {
		return "", broke("reading its answer", errors.New("neither ready nor an error"))
	}
	if _, err := st.Write(data); err != nil {
		return "", broke("writing the file", err)
	}
	resp = fileResp{}
	if err := readMsg(br, &resp); err != nil {
		return "", broke("reading its answer", err)
	}
	if resp.Error != "" {
		return "", serverSaid(resp.Error)
	}
	return resp.Text, nil
}
