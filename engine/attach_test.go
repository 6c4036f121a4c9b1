package engine_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest"
)

// file is a file a person sent, with its bytes.
func file(name, mediaType string, data []byte) connectors.File {
	return connectors.File{Name: name, MediaType: mediaType, Size: int64(len(data)),
		Fetch: func(_ context.Context, limit int64) ([]byte, error) {
			if int64(len(data)) > limit {
				return nil, fmt.Errorf("%w: %d bytes", connectors.ErrTooLarge, len(data))
			}
			return data, nil
		}}
}

func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, 0, color.RGBA{uint8(x), 0, 0, 255})
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

func sendFiles(t *testing.T, e *engine.Engine, chat, text string, files ...connectors.File) {
	t.Helper()
	_, err := e.HandleMessage(context.Background(), connectors.Incoming{ChatID: chat, UserID: "u1", Text: text, Files: files})
	require.NoError(t, err)
}

// fast makes the gathering window short and the working directory dir.
func fast(dir string) enginetest.Setup {
	return func(_ *engine.Deps, c *engine.Config) {
		c.FileWindow = 50 * time.Millisecond
		c.WorkDir = dir
		c.MaxUploadBytes = 1 << 20
	}
}

// TestPictureIsScaledForTheModel: a picture whose long edge is over 1568
// px reaches the agent scaled to 1568 px, a small one as it was sent.
func TestPictureIsScaledForTheModel(t *testing.T) {
	ag := &enginetest.ScriptAgent{}
	e, conn, _ := start(t, ag, nil, fast(t.TempDir()))
	// Scaling 3 megapixels takes seconds under the race detector on a
	// loaded machine (CI ran past the default 10 s).
	conn.WaitLimit = 2 * time.Minute
	small, big := pngOf(t, 30, 20), pngOf(t, 3000, 1000)
	sendFiles(t, e, "c1", "two pictures", file("", "image/jpeg", small), file("wide.png", "", big))
	conn.WaitDone(t, 1)
	imgs := ag.Images()
	require.Len(t, imgs, 2)
	assert.Equal(t, small, imgs[0].Data, "a small picture is sent as it is")
	assert.Equal(t, "image/png", imgs[0].MediaType, "the media type is sniffed, not the app's word")
	cfg, _, err := image.DecodeConfig(bytes.NewReader(imgs[1].Data))
	require.NoError(t, err)
	assert.Equal(t, [2]int{1568, 522}, [2]int{cfg.Width, cfg.Height})
	assert.Equal(t, []string{"two pictures"}, ag.Prompts())
}

// TestFilesSavedInInbox: a document, and a picture for an agent that takes
// no images, are saved under .leashd/inbox/<message>/ with safe names and
// named in the prompt; .leashd is ignored by git.
func TestFilesSavedInInbox(t *testing.T) {
	dir := t.TempDir()
	ag := &enginetest.ScriptAgent{NoImages: true}
	e, conn, _ := start(t, ag, nil, fast(dir))
	pic := pngOf(t, 10, 10)
	sendFiles(t, e, "c1", "look", file("../../etc/passwd", "text/plain", []byte("root:x:0:0")), file("shot.png", "image/png", pic))
	conn.WaitDone(t, 1)
	prompt := ag.Prompts()[0]
	assert.Empty(t, ag.Images(), "the agent takes none")
	assert.True(t, strings.HasPrefix(prompt, "look\n\n"), prompt)
	for name, want := range map[string][]byte{"passwd.txt": []byte("root:x:0:0"), "shot.png": pic} {
		matches, _ := filepath.Glob(filepath.Join(dir, ".leashd", "inbox", "*", name))
		require.Len(t, matches, 1, "%s saved inside the inbox", name)
		got, err := os.ReadFile(matches[0])
		require.NoError(t, err)
		assert.Equal(t, want, got)
		rel, _ := filepath.Rel(dir, matches[0])
		assert.Contains(t, prompt, rel, "the prompt names %s", rel)
	}
	ignore, err := os.ReadFile(filepath.Join(dir, ".leashd", ".gitignore"))
	require.NoError(t, err)
	assert.Equal(t, "*\n", string(ignore))
}

// TestInboxRefusesSymlinkOut: a .leashd that is a symlink leading out of
// the working directory is not written through; the person is told.
func TestInboxRefusesSymlinkOut(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	require.NoError(t, os.Symlink(outside, filepath.Join(dir, ".leashd")))
	ag := &enginetest.ScriptAgent{}
	e, conn, _ := start(t, ag, nil, fast(dir))
	sendFiles(t, e, "c1", "read it", file("notes.txt", "text/plain", []byte("hello")))
	conn.WaitDone(t, 1)
	conn.WaitSaid(t, "cannot be made")
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries, "nothing written outside the working directory")
}

// TestFilesWaitForWords: files sent without words wait; the next message
// is their prompt, one turn.
func TestFilesWaitForWords(t *testing.T) {
	ag := &enginetest.ScriptAgent{}
	e, conn, _ := start(t, ag, nil, fast(t.TempDir()))
	sendFiles(t, e, "c1", "", file("a.png", "", pngOf(t, 5, 5)))
	sendFiles(t, e, "c1", "", file("b.png", "", pngOf(t, 6, 6)))
	conn.WaitSaid(t, "Your next message goes with them")
	send(t, e, "c1", "what differs?")
	conn.WaitDone(t, 1)
	assert.Equal(t, []string{"what differs?"}, ag.Prompts())
	assert.Len(t, ag.Images(), 2)
}

// TestFileProblemsAnswered: nothing is dropped silently — a voice note
// without LEASHD_STT_URL, a file over the limit, a download that fails,
// and files past ten in one message are each answered.
func TestFileProblemsAnswered(t *testing.T) {
	ag := &enginetest.ScriptAgent{}
	e, conn, _ := start(t, ag, nil, fast(t.TempDir()))
	voice := file("", "audio/ogg", []byte("OggS"))
	voice.Voice = true
	broken := file("broken.txt", "", nil)
	broken.Fetch = func(context.Context, int64) ([]byte, error) { return nil, errors.New("connection reset") }
	huge := file("huge.bin", "", nil)
	huge.Size = 5 << 20
	files := []connectors.File{voice, broken, huge}
	for i := range 10 {
		files = append(files, file(fmt.Sprintf("n%d.txt", i), "", []byte("x")))
	}
	sendFiles(t, e, "c1", "all of these", files...)
	conn.WaitDone(t, 1)
	said := conn.SaidText()
	assert.Contains(t, said, "LEASHD_STT_URL")
	assert.Contains(t, said, "broken.txt could not be downloaded (connection reset)")
	assert.Contains(t, said, "huge.bin is 5 MiB, over the limit of 1 MiB (LEASHD_MAX_UPLOAD_BYTES)")
	assert.Contains(t, said, "not sent to the agent: n7.txt, n8.txt, n9.txt")
	assert.Equal(t, 7, strings.Count(ag.Prompts()[0], ".leashd/inbox/"), "the seven good files are named")
}
