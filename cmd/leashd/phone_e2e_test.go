package main

import (
	"bytes"
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

	"github.com/leashd/leashd/config/testenv"
	"github.com/leashd/leashd/connectors/telegram/tgfake"
	"github.com/leashd/leashd/engine/enginetest/fakeapi"
	"github.com/leashd/leashd/engine/stt/stttest"
)

// phoneUser is the allowed Telegram user of the phone tests.
const phoneUser = int64(1001)

// phone is a leashd running a real agent behind Telegram (tgfake), the
// fake model API and a fake transcription endpoint.
type phone struct {
	api *fakeapi.Server
	tg  *tgfake.Server
	stt *stttest.Server
	dir string // the agent's working directory
}

// startPhone runs leashd with agentKind (claude or acp) as an operator
// would configure it for a phone: Telegram, LEASHD_STT_*, and extra.
func startPhone(t *testing.T, agentKind string, extra ...string) *phone {
	t.Helper()
	var agentEnv []string // found before cleanEnv clears LEASHD_TEST_*
	switch agentKind {
	case "claude":
		agentEnv = []string{"LEASHD_AGENT=claude", "LEASHD_CLAUDE_PATH=" + testenv.Claude(t)}
	case "acp":
		agentEnv = []string{"LEASHD_AGENT=acp", "LEASHD_ACP_COMMAND=" + testenv.ACPAgent(t)}
	}
	p := &phone{api: fakeapi.New(t), tg: tgfake.New(), stt: stttest.New(), dir: t.TempDir()}
	t.Cleanup(p.tg.Close)
	t.Cleanup(p.stt.Close)
	home, state := t.TempDir(), testenv.PrivateDir(t)
	cleanEnv(t)
	for _, kv := range append(p.api.Env(home), "IS_SANDBOX=1") {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	env := []string{
		"LEASHD_PREWARM=0", "LEASHD_DB_PATH=" + filepath.Join(state, "leashd.db"), "LEASHD_SANDBOX_HOME=" + home,
		"LEASHD_AGENT_ENV=DISABLE_*",
		"LEASHD_TELEGRAM_BOT_TOKEN=" + p.tg.Token(), "LEASHD_TELEGRAM_API_URL=" + p.tg.URL(),
		"LEASHD_TELEGRAM_ALLOWED_USERS=1001",
		"LEASHD_STT_URL=" + p.stt.URL, "LEASHD_STT_MODEL=whisper-test",
	}
	env = append(env, agentEnv...)
	_, _, stop := startServe(t, p.dir, append(env, extra...)...)
	t.Cleanup(func() { _ = stop() })
	return p
}

// waitSays waits for a bot message in chat containing text.
func (p *phone) waitSays(t *testing.T, chat int64, text string) tgfake.Message {
	t.Helper()
	m, ok := waitBotMessage(p.tg, chat, 90*time.Second, func(m tgfake.Message) bool { return strings.Contains(m.Text, text) })
	require.True(t, ok, "no bot message in chat %d containing %q; messages: %+v", chat, text, p.tg.BotMessages(chat))
	return m
}

// allowNext taps Allow (Claude Code's approvals) or Yes (an ACP agent's
// own options) on the next tool approval in chat not yet answered.
func (p *phone) allowNext(t *testing.T, chat int64, tapped map[int]bool) {
	t.Helper()
	var label string
	m, ok := waitBotMessage(p.tg, chat, 90*time.Second, func(m tgfake.Message) bool {
		for _, b := range m.Buttons() {
			if !tapped[m.ID] && (b == "Allow" || strings.TrimPrefix(b, "✅ ") == "Yes") {
				label = b
				return true
			}
		}
		return false
	})
	require.True(t, ok, "no tool approval in chat %d; messages: %+v", chat, botButtons(p.tg.BotMessages(chat)))
	tapped[m.ID] = true
	_, err := p.tg.TapButton(chat, phoneUser, m.ID, label)
	require.NoError(t, err)
}

// callWith is the model call whose user text holds s.
func (p *phone) callWith(t *testing.T, s string) *fakeapi.Request {
	t.Helper()
	for _, c := range p.api.Calls() {
		if c.HasUserText(s) {
			return c
		}
	}
	t.Fatalf("no model call carried %q", s)
	return nil
}

// testPNG is a w×h PNG with a gradient (so no two test pictures are
// alike when seed differs).
func testPNG(t *testing.T, w, h int, seed uint8) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.Set(x, y, color.RGBA{uint8(x * 7), uint8(y * 5), seed, 255})
		}
	}
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, img))
	return b.Bytes()
}

// TestPhoneFilesInClaude sends a Telegram photo with a caption, an album
// of three, a PDF, a file over the limit and a voice note to the real
// Claude Code CLI: the photo reaches the model as an image block with the
// same bytes and the caption as text; the album is one prompt; the PDF is
// saved in .leashd/inbox and the prompt names it; the large file is
// answered with the limit; the voice note's transcript is shown and is
// the prompt.
func TestPhoneFilesInClaude(t *testing.T) {
	p := startPhone(t, "claude", "LEASHD_MAX_UPLOAD_BYTES=65536")
	checkPhotoWithCaption(t, p, 2001)
	checkAlbumIsOnePrompt(t, p, 2002)
	checkPDFInInbox(t, p, 2003)
	checkTooLarge(t, p, 2004)
	checkVoiceNote(t, p, 2005)
	assert.Zero(t, p.api.Unscripted(), "every model call was scripted: no file became a prompt of its own")
}

func checkPhotoWithCaption(t *testing.T, p *phone, chat int64) {
	t.Helper()
	pic := testPNG(t, 40, 30, 1)
	p.api.Reply(fakeapi.Text("A gradient, forty by thirty."))
	p.tg.Photo(chat, phoneUser, pic, "what is in this picture?", "")
	p.waitSays(t, chat, "A gradient, forty by thirty.")
	call := p.callWith(t, "what is in this picture?")
	imgs, err := call.UserImages()
	require.NoError(t, err)
	require.Len(t, imgs, 1, "the photo is one image block")
	assert.Equal(t, "image/png", imgs[0].MediaType)
	assert.Equal(t, pic, imgs[0].Data, "the model gets the photo's own bytes")
	_, _, err = image.Decode(bytes.NewReader(imgs[0].Data))
	require.NoError(t, err, "the image block decodes")
}

func checkAlbumIsOnePrompt(t *testing.T, p *phone, chat int64) {
	t.Helper()
	var pics [][]byte
	for i := range 3 {
		pics = append(pics, testPNG(t, 20+i, 20, uint8(10+i)))
	}
	before := len(p.api.Calls())
	p.api.Reply(fakeapi.Text("Three pictures seen."), fakeapi.Text("Still here."))
	p.tg.Photo(chat, phoneUser, pics[0], "compare these", "album-1")
	p.tg.Photo(chat, phoneUser, pics[1], "", "album-1")
	p.tg.Photo(chat, phoneUser, pics[2], "", "album-1")
	p.waitSays(t, chat, "Three pictures seen.")
	p.tg.Text(chat, phoneUser, "anything else?")
	p.waitSays(t, chat, "Still here.")
	calls := p.api.Calls()[before:]
	require.Len(t, calls, 2, "the album is one prompt, the text the next")
	imgs, err := calls[0].UserImages()
	require.NoError(t, err)
	require.Len(t, imgs, 3)
	for i := range pics {
		assert.Equal(t, pics[i], imgs[i].Data, "picture %d, in order", i+1)
	}
	assert.True(t, calls[0].HasUserText("compare these"))
}

func checkPDFInInbox(t *testing.T, p *phone, chat int64) {
	t.Helper()
	pdf := []byte("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n")
	p.api.Reply(fakeapi.Text("Read the report."))
	p.tg.Document(chat, phoneUser, "Q3 report.pdf", "application/pdf", pdf, 0, "summarize this")
	p.waitSays(t, chat, "Read the report.")
	call := p.callWith(t, "summarize this")
	var named string
	for _, s := range call.UserTexts() {
		if i := strings.Index(s, ".leashd/inbox/"); i >= 0 {
			named = strings.Fields(s[i:])[0]
		}
	}
	require.NotEmpty(t, named, "the prompt names the saved file; texts: %q", call.UserTexts())
	assert.True(t, strings.HasSuffix(named, "/Q3"), "the name is kept (with its space): %q", named)
	matches, err := filepath.Glob(filepath.Join(p.dir, ".leashd", "inbox", "*", "Q3 report.pdf"))
	require.NoError(t, err)
	require.Len(t, matches, 1)
	got, err := os.ReadFile(matches[0])
	require.NoError(t, err)
	assert.Equal(t, pdf, got)
	assert.True(t, call.HasUserText("application/pdf"))
}

func checkTooLarge(t *testing.T, p *phone, chat int64) {
	t.Helper()
	big := bytes.Repeat([]byte("x"), 100_000)
	p.tg.Document(chat, phoneUser, "dump.log", "text/plain", big, 0, "look at this log")
	m := p.waitSays(t, chat, "dump.log is")
	assert.Contains(t, m.Text, "LEASHD_MAX_UPLOAD_BYTES")
	assert.Contains(t, m.Text, "64 KiB")
	p.waitSays(t, chat, "were not sent to the agent either")
}

func checkVoiceNote(t *testing.T, p *phone, chat int64) {
	t.Helper()
	ogg := append([]byte("OggS\x00\x02"), bytes.Repeat([]byte{7}, 300)...)
	p.stt.Say(ogg, "please list the files here")
	p.api.Reply(fakeapi.Text("Here they are."))
	p.tg.Voice(chat, phoneUser, ogg)
	p.waitSays(t, chat, "🎤 please list the files here")
	p.waitSays(t, chat, "Here they are.")
	p.callWith(t, "please list the files here")
	calls := p.stt.Calls()
	require.Len(t, calls, 1)
	assert.Equal(t, "whisper-test", calls[0].Model)
	assert.Equal(t, ogg, calls[0].Audio)
}

// sendFileTool is send_file as Claude Code names leashd's MCP tool.
const sendFileTool = "mcp__leashd__send_file"

// TestPhoneSendFileClaude has the real Claude Code CLI call leashd's
// send_file: a file in the working directory reaches the Telegram chat
// with its bytes and caption (a picture, by absolute path, as a photo); a path outside the working directory and a
// symlink leading out of it are refused, with the reason in the tool's
// result. The agent runs in the default sandbox (bubblewrap where it
// works), which must see its --mcp-config file and reach the server.
func TestPhoneSendFileClaude(t *testing.T) {
	p := startPhone(t, "claude", "LEASHD_SANDBOX=auto")
	checkSendFile(t, p, 3001, sendFileTool)
}

func checkSendFile(t *testing.T, p *phone, chat int64, tool string) {
	t.Helper()
	report := []byte("build ok: 42 tests passed\n")
	require.NoError(t, os.MkdirAll(filepath.Join(p.dir, "out"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(p.dir, "out", "result.txt"), report, 0o644))
	secret := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("not for the chat"), 0o600))
	require.NoError(t, os.Symlink(secret, filepath.Join(p.dir, "link.txt")))

	var results []string
	result := func(r *fakeapi.Request) {
		for _, m := range r.Messages {
			for _, b := range m.Content {
				// (A deferred tool's ToolSearch result has no text.)
				if b.Type == "tool_result" && b.ResultText() != "" {
					results = append(results, b.ResultText())
				}
			}
		}
	}
	p.api.Reply(fakeapi.Tool(tool, map[string]string{"path": "out/result.txt", "caption": "the build log"}))
	pic := testPNG(t, 16, 16, 3)
	require.NoError(t, os.WriteFile(filepath.Join(p.dir, "out", "chart.png"), pic, 0o644))
	p.api.Then(func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.Tool(tool, map[string]string{"path": filepath.Join(p.dir, "out", "chart.png")})
	})
	p.api.Then(func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.Tool(tool, map[string]string{"path": secret})
	})
	p.api.Then(func(r *fakeapi.Request) fakeapi.Reply {
		return fakeapi.Tool(tool, map[string]string{"path": "link.txt"})
	})
	p.api.Then(func(r *fakeapi.Request) fakeapi.Reply {
		result(r)
		return fakeapi.Text("Sent what I could.")
	})
	p.tg.Text(chat, phoneUser, "send me the build log")
	tapped := map[int]bool{}
	for range 4 {
		p.allowNext(t, chat, tapped)
	}
	p.waitSays(t, chat, "Sent what I could.")

	sent := p.tg.SentFiles(chat)
	require.Len(t, sent, 2, "only the files inside the working directory are sent")
	assert.Equal(t, "sendDocument", sent[0].Method)
	assert.Equal(t, "result.txt", sent[0].Name)
	assert.Equal(t, report, sent[0].Data)
	assert.Equal(t, "the build log", sent[0].Caption)
	assert.Equal(t, "sendPhoto", sent[1].Method, "a picture is shown as a photo")
	assert.Equal(t, pic, sent[1].Data)
	require.Len(t, results, 4, "each call's result reached the model")
	assert.Contains(t, results[0], "Sent result.txt")
	assert.Contains(t, results[1], "Sent chart.png")
	assert.Contains(t, results[2], "outside the working directory")
	assert.Contains(t, results[3], "link.txt cannot be sent")
}

// TestPhoneACP runs the photo and send_file flows with an ACP agent
// (claude-agent-acp): it takes images (promptCapabilities.image), so the
// photo is an image block; send_file comes through session/new's
// mcpServers.
func TestPhoneACP(t *testing.T) {
	p := startPhone(t, "acp")
	checkPhotoWithCaption(t, p, 4001)
	checkSendFile(t, p, 4002, sendFileTool)
}

// botButtons lists messages with their buttons, for failure messages.
func botButtons(ms []tgfake.Message) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Text+" "+strings.Join(m.Buttons(), "|"))
	}
	return out
}
