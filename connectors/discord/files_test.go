package discord_test

import (
	"bytes"
	"context"
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
	"github.com/leashd/leashd/connectors/discord"
	"github.com/leashd/leashd/connectors/discord/discordfake"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest"
)

// inDir makes dir the working directory, the gathering window short and
// the upload limit 1 MiB.
func inDir(dir string) enginetest.Setup {
	return func(_ *engine.Deps, c *engine.Config) {
		c.WorkDir = dir
		c.FileWindow = 50 * time.Millisecond
		c.MaxUploadBytes = 1 << 20
	}
}

func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		img.Set(x, 0, color.RGBA{uint8(x * 7), 40, 90, 255})
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

func (e *env) dmWith(user, text string, files ...discordfake.Attachment) string {
	e.t.Helper()
	id, err := e.fake.DMWith(user, dmChan, text, files...)
	require.NoError(e.t, err)
	return id
}

// A picture with a caption in a DM reaches the agent as an image with the
// bytes sent, the caption its prompt; the person sees the answer.
func TestPictureWithCaption(t *testing.T) {
	e := start(t, envOpt{setups: []enginetest.Setup{inDir(t.TempDir())}})
	pic := pngOf(t, 40, 30)
	e.dmWith(dev, "what is on my screen?", discordfake.Attachment{Name: "screen.png", ContentType: "image/png", Data: pic})
	e.waitText(dmChan, "echo: what is on my screen?")
	assert.Equal(t, []string{"what is on my screen?"}, e.agent.Prompts())
	imgs := e.agent.Images()
	require.Len(t, imgs, 1)
	assert.Equal(t, pic, imgs[0].Data)
	assert.Equal(t, "image/png", imgs[0].MediaType)
	assert.Equal(t, 1, e.fake.Downloads())
}

// A PDF sent alone in a thread waits for words (the person is asked what
// to do with it); the next message is its prompt, which names the copy
// saved under the working directory's .leashd/inbox.
func TestDocumentSavedInInbox(t *testing.T) {
	dir := t.TempDir()
	e := start(t, envOpt{setups: []enginetest.Setup{inDir(dir)}})
	th := e.mention(dev, "hello")
	e.waitText(th, "echo: hello")
	pdf := []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << >>\n%%EOF\n")
	_, err := e.fake.PostWith(dev, th, "", false, discordfake.Attachment{Name: "report.pdf", ContentType: "application/pdf", Data: pdf})
	require.NoError(t, err)
	e.waitText(th, "Got report.pdf. What should the agent do with it?")
	_, err = e.fake.Post(dev, th, "summarise it", false)
	require.NoError(t, err)
	prompt := e.waitPrompt("summarise it")
	matches, _ := filepath.Glob(filepath.Join(dir, ".leashd", "inbox", "*", "report.pdf"))
	require.Len(t, matches, 1, "report.pdf saved in the inbox")
	got, err := os.ReadFile(matches[0])
	require.NoError(t, err)
	assert.Equal(t, pdf, got)
	rel, _ := filepath.Rel(dir, matches[0])
	assert.Contains(t, prompt, rel, "the prompt names the saved file")
	assert.Empty(t, e.agent.Images())
}

// Nothing is dropped silently: a file over the upload limit is answered
// with why, before it is downloaded; one whose reported size lies is cut
// off at the limit; a voice message without speech-to-text says how to
// set it up. The words that went with them reach no agent either.
func TestAttachmentProblemsAnswered(t *testing.T) {
	e := start(t, envOpt{setups: []enginetest.Setup{inDir(t.TempDir())}})
	big := bytes.Repeat([]byte("x"), 2<<20)
	e.dmWith(dev, "take these",
		discordfake.Attachment{Name: "huge.bin", Data: big},
		discordfake.Attachment{Name: "liar.bin", Data: big, Size: 100},
	)
	m := e.waitText(dmChan, "Not sent to the agent")
	assert.Contains(t, m.Content, "huge.bin is 2 MiB, over the limit of 1 MiB")
	assert.Contains(t, m.Content, "liar.bin is larger than that, over the limit of 1 MiB")
	e.waitText(dmChan, "Your words went with those files")
	assert.Equal(t, 1, e.fake.Downloads(), "only the file whose size lied was fetched")

	e.dmWith(dev, "", discordfake.Attachment{Name: "voice-message.ogg", ContentType: "audio/ogg", Data: []byte("OggS-voice"), Voice: true})
	e.waitText(dmChan, "LEASHD_STT_URL")
	e.settle()
	assert.Empty(t, e.agent.Prompts())
}

// A stranger's attachment is refused like their words, and not fetched;
// so is an approver's, who may not prompt.
func TestAttachmentFromStranger(t *testing.T) {
	e := start(t, envOpt{approvers: []string{lead}, setups: []enginetest.Setup{inDir(t.TempDir())}})
	e.dmWith(stranger, "", discordfake.Attachment{Name: "a.png", ContentType: "image/png", Data: pngOf(t, 4, 4)})
	e.waitText(dmChan, discord.NotAllowedText(stranger))
	e.dmWith(lead, "", discordfake.Attachment{Name: "b.png", ContentType: "image/png", Data: pngOf(t, 4, 4)})
	e.waitText(dmChan, "not prompt the agent")
	e.settle()
	assert.Zero(t, e.fake.Downloads())
	assert.Empty(t, e.agent.Prompts())
}

// The agent's send_file (engine.SendFile) posts the file as an attachment
// in the chat, the caption as its text (cut to Discord's 2,000
// characters), in a DM and in a thread.
func TestSendFile(t *testing.T) {
	dir := t.TempDir()
	e := start(t, envOpt{setups: []enginetest.Setup{inDir(dir)}})
	log := []byte("all green\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "ci.log"), log, 0o644))
	ctx := context.Background()

	e.dm(dev, "hello")
	e.waitText(dmChan, "echo: hello")
	said, err := e.eng.SendFile(ctx, "discord:"+dmChan, "ci.log", "the CI log")
	require.NoError(t, err)
	assert.Contains(t, said, "Sent ci.log")
	m := e.waitMsg(dmChan, "the file", func(m discordfake.Message) bool { return len(m.Files) > 0 })
	assert.Equal(t, "the CI log", m.Content)
	require.Len(t, m.Files, 1)
	assert.Equal(t, "ci.log", m.Files[0].Name)
	assert.Equal(t, log, m.Files[0].Data)

	th := e.mention(dev, "hi")
	e.waitText(th, "echo: hi")
	_, err = e.eng.SendFile(ctx, "discord:"+discordfake.GuildID+":"+th, "ci.log", strings.Repeat("long ", 500))
	require.NoError(t, err)
	m = e.waitMsg(th, "the file", func(m discordfake.Message) bool { return len(m.Files) > 0 })
	assert.LessOrEqual(t, len([]rune(m.Content)), 2000)
	assert.Equal(t, log, m.Files[0].Data)
}

// A file over Discord's 25 MiB is refused before it is sent, with an
// error wrapping connectors.ErrTooLarge.
func TestSendFileTooLarge(t *testing.T) {
	e := start(t, envOpt{})
	err := e.conn.SendFile(context.Background(), "discord:"+dmChan, connectors.OutFile{Name: "big.bin", Data: make([]byte, 25<<20+1)})
	require.ErrorIs(t, err, connectors.ErrTooLarge)
	assert.Contains(t, err.Error(), "25 MiB")
	assert.Empty(t, e.fake.Messages(""), "nothing sent")
}

// A mention in a server channel with a picture starts a thread, and the
// picture goes with the mention's words.
func TestPictureWithMention(t *testing.T) {
	e := start(t, envOpt{setups: []enginetest.Setup{inDir(t.TempDir())}})
	pic := pngOf(t, 12, 9)
	id, err := e.fake.PostWith(dev, guildCh, "fix this layout", true, discordfake.Attachment{Name: "layout.png", ContentType: "image/png", Data: pic})
	require.NoError(t, err)
	var th string
	require.True(t, e.fake.WaitFor(wait, func() bool { th = e.fake.ThreadOf(id); return th != "" }), "no thread started")
	e.waitText(th, "echo: fix this layout")
	imgs := e.agent.Images()
	require.Len(t, imgs, 1)
	assert.Equal(t, pic, imgs[0].Data)
}
