package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/yamux"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/agent/sandbox"
)

// fileSink is a Hub.Files that records what it takes.
type fileSink struct {
	mu    sync.Mutex
	got   []FileUpload
	from  []string
	fail  map[string]string // file name → the error Files returns
	hold  chan struct{}     // when set, Files waits for it to close
	enter chan struct{}     // when set, Files says it was entered
	ctxs  chan context.Context
}

func (s *fileSink) files(ctx context.Context, runner string, f FileUpload) (string, error) {
	s.mu.Lock()
	s.got = append(s.got, f)
	s.from = append(s.from, runner)
	msg, fail := s.fail[f.Name]
	s.mu.Unlock()
	if s.ctxs != nil {
		s.ctxs <- ctx
	}
	if s.enter != nil {
		s.enter <- struct{}{}
	}
	if s.hold != nil {
		<-s.hold
	}
	if fail {
		return "", errors.New(msg)
	}
	return fmt.Sprintf("Sent %s (%d B) to the chat.", f.Name, len(f.Data)), nil
}

func (s *fileSink) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.got)
}

// fileRig is a rig whose hub takes files into sink, up to max bytes.
func fileRig(t *testing.T, sink *fileSink, max int64) *rig {
	return newRigHooked(t, time.Minute, func(h *Hub) {
		if sink != nil {
			h.Files = sink.files
		}
		h.MaxFileBytes = max
	})
}

// TestFileFromRunnerReachesFiles: the bytes, name, caption and credential
// arrive whole with the runner's name; Files' text is SendFile's answer,
// Files' error SendFile's error; the credential is never logged.
func TestFileFromRunnerReachesFiles(t *testing.T) {
	sink := &fileSink{fail: map[string]string{"fail.txt": "chat 42 refuses documents"}}
	r := fileRig(t, sink, 0)
	run := r.runner(t, "box1", 1)
	data := make([]byte, 3<<20) // more than a stream's window
	for i := range data {
		data[i] = byte(rand.N(256))
	}
	text, err := run.SendFile(context.Background(), FileUpload{Credential: "cred-s3cret-value", Chat: "telegram:42", Name: "a.bin", Caption: "the caption", Data: data})
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("Sent a.bin (%d B) to the chat.", len(data)), text)
	require.Equal(t, []string{"box1"}, sink.from)
	require.Equal(t, []FileUpload{{Credential: "cred-s3cret-value", Chat: "telegram:42", Name: "a.bin", Caption: "the caption", Data: data}}, sink.got)

	_, err = run.SendFile(context.Background(), FileUpload{Credential: "cred-s3cret-value", Name: "fail.txt", Data: []byte("x")})
	require.EqualError(t, err, "chat 42 refuses documents")

	text, err = run.SendFile(context.Background(), FileUpload{Credential: "cred-s3cret-value", Name: "empty.txt"})
	require.NoError(t, err)
	require.Equal(t, "Sent empty.txt (0 B) to the chat.", text)
	require.Contains(t, r.logs.String(), "file=a.bin")
	require.NotContains(t, r.logs.String(), "cred-s3cret-value")
}

// TestOversizedFileIsRefusedBeforeItsBytes: the runner refuses a file over
// the limit the welcome told it, and so does the server when a runner
// asks anyway, before a byte of it crosses; Files is not called and the
// connection carries the next file.
func TestOversizedFileIsRefusedBeforeItsBytes(t *testing.T) {
	sink := &fileSink{}
	r := fileRig(t, sink, 1000)
	run := r.runner(t, "box1", 1)
	_, err := run.SendFile(context.Background(), FileUpload{Name: "big.bin", Data: make([]byte, 2000)})
	require.EqualError(t, err, "file big.bin is 2000 bytes, over the leashd server's limit of 1000 bytes (LEASHD_MAX_UPLOAD_BYTES on the server sets it)")

	sess := rawRunner(t, r, "raw1")
	resp := rawFile(t, sess, fileHead{Op: opFile, Name: "big.bin", Size: 2000, Credential: "c"}, nil)
	require.Equal(t, fileResp{Error: "file big.bin is 2000 bytes, over the leashd server's limit of 1000 bytes (LEASHD_MAX_UPLOAD_BYTES on the server sets it)"}, resp)
	require.Zero(t, sink.calls())

	resp = rawFile(t, sess, fileHead{Op: opFile, Name: "small.txt", Size: 1000, Credential: "c"}, make([]byte, 1000))
	require.Equal(t, fileResp{Text: "Sent small.txt (1000 B) to the chat."}, resp)
	text, err := run.SendFile(context.Background(), FileUpload{Name: "small.txt", Data: []byte("abc")})
	require.NoError(t, err)
	require.Equal(t, "Sent small.txt (3 B) to the chat.", text)
	require.False(t, sess.IsClosed())
}

// rawRunner connects as a runner named name, speaking by hand.
func rawRunner(t *testing.T, r *rig, name string) *yamux.Session {
	t.Helper()
	sess := dialRaw(t, r)
	st, err := sess.AcceptStream()
	require.NoError(t, err)
	require.NoError(t, writeMsg(st, hello{Version: 1, Name: name, MaxAgents: 1}))
	var w welcome
	require.NoError(t, readMsg(bufio.NewReader(st), &w))
	require.Empty(t, w.Error)
	return sess
}

// rawFile opens a file stream, writes fh, and data once the server says
// ready; it returns the server's last answer.
func rawFile(t *testing.T, sess *yamux.Session, fh fileHead, data []byte) fileResp {
	t.Helper()
	st, err := sess.OpenStream()
	require.NoError(t, err)
	defer st.Close()
	require.NoError(t, writeMsg(st, fh))
	br := bufio.NewReader(st)
	var resp fileResp
	require.NoError(t, readMsg(br, &resp))
	if !resp.Ready {
		return resp
	}
	_, err = st.Write(data)
	require.NoError(t, err)
	resp = fileResp{}
	require.NoError(t, readMsg(br, &resp))
	return resp
}

// TestBadFileRequestsAreRefused: a server that takes no files says so;
// names that are no base name, a long caption and a negative size are
// refused with what is accepted, by the runner and by the server, and the
// connection stays.
func TestBadFileRequestsAreRefused(t *testing.T) {
	none := fileRig(t, nil, 0)
	run := none.runner(t, "box1", 1)
	_, err := run.SendFile(context.Background(), FileUpload{Name: "a.txt", Data: []byte("x")})
	require.EqualError(t, err, "this leashd server takes no files from runners; a.txt was not sent")

	sink := &fileSink{}
	r := fileRig(t, sink, 0)
	run = r.runner(t, "box2", 1)
	sess := rawRunner(t, r, "raw1")
	for _, tc := range []struct {
		fh   fileHead
		want string
	}{
		{fileHead{Name: ""}, "no file name (accepted: a base name of 1 to 255 bytes"},
		{fileHead{Name: "../etc/passwd"}, `file name "../etc/passwd" (accepted: a base name`},
		{fileHead{Name: "a/b"}, `file name "a/b"`},
		{fileHead{Name: `a\b`}, `file name "a\\b"`},
		{fileHead{Name: "."}, `file name "."`},
		{fileHead{Name: ".."}, `file name ".."`},
		{fileHead{Name: "a\nb"}, `file name "a\nb"`},
		{fileHead{Name: strings.Repeat("n", 256)}, "a file name of 256 bytes"},
		{fileHead{Name: "c.txt", Caption: strings.Repeat("c", 4097)}, "the caption of c.txt is 4097 bytes (accepted: at most 4096)"},
		{fileHead{Name: "neg.txt", Size: -1}, "file neg.txt: size -1 (accepted: 0 or more bytes)"},
	} {
		if tc.fh.Size >= 0 { // a runner cannot send a negative size
			_, err := run.SendFile(context.Background(), FileUpload{Name: tc.fh.Name, Caption: tc.fh.Caption, Data: make([]byte, tc.fh.Size)})
			require.ErrorContains(t, err, tc.want)
		}
		tc.fh.Op = opFile
		resp := rawFile(t, sess, tc.fh, nil)
		require.False(t, resp.Ready, tc.want)
		require.Contains(t, resp.Error, tc.want)
	}
	require.Zero(t, sink.calls())
	resp := rawFile(t, sess, fileHead{Op: opFile, Name: "ok.txt", Size: 2}, []byte("ok"))
	require.Equal(t, "Sent ok.txt (2 B) to the chat.", resp.Text)
}

// TestTooManyFilesAtOnce: with four files in Files, a fifth is refused at
// once; the four complete, and the connection stays.
func TestTooManyFilesAtOnce(t *testing.T) {
	sink := &fileSink{hold: make(chan struct{}), enter: make(chan struct{}, maxFileStreams)}
	r := fileRig(t, sink, 0)
	run := r.runner(t, "box1", 1)
	type result struct {
		text string
		err  error
	}
	results := make(chan result, maxFileStreams)
	for i := range maxFileStreams {
		go func() {
			text, err := run.SendFile(context.Background(), FileUpload{Name: fmt.Sprintf("f%d.txt", i), Data: []byte("data")})
			results <- result{text, err}
		}()
	}
	for range maxFileStreams {
		<-sink.enter
	}
	_, err := run.SendFile(context.Background(), FileUpload{Name: "fifth.txt", Data: []byte("data")})
	require.EqualError(t, err, "too many files being sent at once; try again")
	close(sink.hold)
	var texts []string
	for range maxFileStreams {
		res := <-results
		require.NoError(t, res.err)
		texts = append(texts, res.text)
	}
	require.ElementsMatch(t, []string{"Sent f0.txt (4 B) to the chat.", "Sent f1.txt (4 B) to the chat.",
		"Sent f2.txt (4 B) to the chat.", "Sent f3.txt (4 B) to the chat."}, texts)
	text, err := run.SendFile(context.Background(), FileUpload{Name: "later.txt", Data: []byte("data")})
	require.NoError(t, err)
	require.Equal(t, "Sent later.txt (4 B) to the chat.", text)
}

// TestSendFileCancelled: ctx ending closes the stream: SendFile returns
// with ctx's error, and Files' ctx ends too.
func TestSendFileCancelled(t *testing.T) {
	sink := &fileSink{hold: make(chan struct{}), ctxs: make(chan context.Context, 1)}
	defer close(sink.hold)
	r := fileRig(t, sink, 0)
	run := r.runner(t, "box1", 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := run.SendFile(ctx, FileUpload{Name: "slow.txt", Data: []byte("x")}); done <- err }()
	filesCtx := <-sink.ctxs
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	select {
	case <-filesCtx.Done():
	case <-time.After(time.Minute):
		t.Fatal("Files' ctx did not end when the runner closed the stream")
	}
}

// TestSendFileNotConnected: a runner without a connection says so, in
// words the agent can act on.
func TestSendFileNotConnected(t *testing.T) {
	_, err := (&Runner{Name: "box1"}).SendFile(context.Background(), FileUpload{Name: "a.txt", Data: []byte("x")})
	require.EqualError(t, err, "the runner is not connected to the leashd server now; try again in a moment")

	r := fileRig(t, &fileSink{}, 0)
	run := r.runner(t, "box1", 1)
	r.proxy.pause(true)
	waitFor(t, "the runner saw its connection end", func() bool {
		run.mu.Lock()
		defer run.mu.Unlock()
		return run.sess == nil
	})
	_, err = run.SendFile(context.Background(), FileUpload{Name: "a.txt", Data: []byte("x")})
	require.EqualError(t, err, "the runner is not connected to the leashd server now; try again in a moment")
}

// TestHolds: a runner holds the chats of its processes, and of the
// orphans it keeps; not another runner's, not after the process exited.
func TestHolds(t *testing.T) {
	r := newRig(t, time.Minute)
	r.runner(t, "box1", 2)
	r.runner(t, "box2", 2)
	require.NoError(t, r.hub.Pin("chat1", "box1"))
	p, err := r.hub.Start(shSpec("chat1", `read x`))
	require.NoError(t, err)
	require.True(t, r.hub.Holds("box1", "chat1"))
	require.False(t, r.hub.Holds("box2", "chat1"))
	require.False(t, r.hub.Holds("box1", "chat2"))
	require.False(t, r.hub.Holds("nobody", "chat1"))
	require.False(t, r.hub.Holds("box1", ""))
	_, err = io.WriteString(p.Stdin(), "done\n")
	require.NoError(t, err)
	require.NoError(t, p.Wait())
	require.False(t, r.hub.Holds("box1", "chat1"))

	p, err = r.hub.Start(shSpec("chat1", `sleep 600`))
	require.NoError(t, err)
	p.(sandbox.Resumable).Detach() // an orphan on box1 now
	require.True(t, r.hub.Holds("box1", "chat1"))
	require.False(t, r.hub.Holds("box2", "chat1"))
}

// TestSendFileToAnOlderServer: a server whose welcome names no file limit
// predates file streams and would drop the connection for one: the
// runner refuses the file itself and stays connected.
func TestSendFileToAnOlderServer(t *testing.T) {
	sink := &fileSink{}
	r := fileRig(t, sink, 0)
	run := r.runner(t, "box1", 1)
	run.mu.Lock()
	run.maxFile = 0 // what an older server's welcome says
	run.mu.Unlock()
	_, err := run.SendFile(context.Background(), FileUpload{Name: "a.txt", Data: []byte("x")})
	require.EqualError(t, err, "the leashd server does not take files from runners (it is older than this runner); update it to send files from here")
	require.Zero(t, sink.calls())
	require.True(t, r.hub.Runners()[0].Connected)
	require.NotContains(t, r.logs.String(), "runner disconnected")
}

// TestStreamClosedBeforeAWordKeepsTheConnection: a runner whose agent gave
// up between opening a file stream and writing its request closes it
// empty; that is no violation.
func TestStreamClosedBeforeAWordKeepsTheConnection(t *testing.T) {
	r := fileRig(t, &fileSink{}, 0)
	sess := rawRunner(t, r, "raw1")
	st, err := sess.OpenStream()
	require.NoError(t, err)
	require.NoError(t, st.Close())
	resp := rawFile(t, sess, fileHead{Op: opFile, Name: "after.txt", Size: 1}, []byte("x"))
	require.Equal(t, fileResp{Text: "Sent after.txt (1 B) to the chat."}, resp)
	require.False(t, sess.IsClosed())
	require.NotContains(t, r.logs.String(), "not a file request")
}

// TestLongAnswerIsCut: an answer from Files longer than a line the runner
// reads is cut, not lost with the stream.
func TestLongAnswerIsCut(t *testing.T) {
	long := strings.Repeat("e", 2*maxLine)
	r := fileRig(t, &fileSink{fail: map[string]string{"long.txt": long}}, 0)
	run := r.runner(t, "box1", 1)
	_, err := run.SendFile(context.Background(), FileUpload{Name: "long.txt", Data: []byte("x")})
	require.EqualError(t, err, long[:maxLine/4]+"…")
}

// TestStalledFileStreamsAreClosed: a request that never comes, and bytes
// that stop short, end their stream once the wait is over; Files is not
// called, and the connection carries the next file.
func TestStalledFileStreamsAreClosed(t *testing.T) {
	sink := &fileSink{}
	r := newRigHooked(t, time.Minute, func(h *Hub) { h.Files, h.fileWait = sink.files, 300*time.Millisecond })
	sess := rawRunner(t, r, "raw1")
	silent, err := sess.OpenStream()
	require.NoError(t, err)
	_, err = io.WriteString(silent, `{"op":"file"`) // and no more
	require.NoError(t, err)
	_, err = io.ReadAll(silent)
	require.NoError(t, err, "the server closed its end")
	require.Contains(t, r.logs.String(), "a runner opened a stream and sent no whole request in time; it is closed")

	short, err := sess.OpenStream()
	require.NoError(t, err)
	require.NoError(t, writeMsg(short, fileHead{Op: opFile, Name: "short.txt", Size: 10}))
	br := bufio.NewReader(short)
	var resp fileResp
	require.NoError(t, readMsg(br, &resp))
	require.True(t, resp.Ready)
	_, err = io.WriteString(short, "abc") // of ten
	require.NoError(t, err)
	rest, err := io.ReadAll(br)
	require.NoError(t, err)
	require.Empty(t, rest, "no answer")
	require.Contains(t, r.logs.String(), "a file from a runner did not arrive whole")
	require.Zero(t, sink.calls())

	resp = rawFile(t, sess, fileHead{Op: opFile, Name: "next.txt", Size: 1}, []byte("x"))
	require.Equal(t, "Sent next.txt (1 B) to the chat.", resp.Text)
	require.False(t, sess.IsClosed())
}
