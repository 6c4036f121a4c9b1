package web_test

import (
	"bytes"
	"context"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/web"
	"github.com/leashd/leashd/engine"
	"github.com/leashd/leashd/engine/enginetest"
)

// multipartBody builds an upload: text, then files (name → bytes).
func multipartBody(t *testing.T, text string, voice bool, files map[string][]byte) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	if text != "" {
		require.NoError(t, w.WriteField("text", text))
	}
	if voice {
		require.NoError(t, w.WriteField("voice", "1"))
	}
	for name, data := range files {
		p, err := w.CreateFormFile("file", name)
		require.NoError(t, err)
		_, _ = p.Write(data)
	}
	require.NoError(t, w.Close())
	return w.FormDataContentType(), b.Bytes()
}

// TestPageUploadsAndDownloads: the page's upload (a file with words)
// reaches the agent as one prompt, the file saved in the chat's inbox (the
// demo agent takes no images); the agent's send_file shows a "file" event
// whose link downloads the bytes as an attachment, with the token only.
func TestPageUploadsAndDownloads(t *testing.T) {
	dir := t.TempDir()
	e := start(t, setup{engOpts: []enginetest.Setup{func(_ *engine.Deps, c *engine.Config) {
		c.WorkDir, c.FileWindow = dir, 20*time.Millisecond
	}}})
	s := e.subscribe("?chat=web-files")
	ct, body := multipartBody(t, "what is in it?", false, map[string][]byte{"notes.txt": []byte("buy milk")})
	st, _, resp := e.request(t, "POST", "/api/chats/web-files/files", string(body), e.token, "Content-Type", ct)
	require.Equal(t, http.StatusAccepted, st, resp)
	s.saying("You said:")
	matches, _ := filepath.Glob(filepath.Join(dir, ".leashd", "inbox", "*", "notes.txt"))
	require.Len(t, matches, 1)
	got, _ := os.ReadFile(matches[0])
	assert.Equal(t, "buy milk", string(got))

	require.NoError(t, os.WriteFile(filepath.Join(dir, "report.html"), []byte("<script>alert(1)</script>"), 0o600))
	_, err := e.eng.SendFile(context.Background(), "web-files", "report.html", "the report")
	require.NoError(t, err)
	ev := s.next("file")
	assert.Equal(t, "report.html", str(ev.Data["name"]))
	assert.Equal(t, "the report", str(ev.Data["caption"]))
	link := str(ev.Data["url"])
	st, hdr, data := e.request(t, "GET", link, "", e.token)
	require.Equal(t, http.StatusOK, st)
	assert.Equal(t, "<script>alert(1)</script>", data)
	assert.Equal(t, `attachment; filename=report.html`, hdr.Get("Content-Disposition"), "never shown as a page of this site")
	assert.Equal(t, "application/octet-stream", hdr.Get("Content-Type"))
	st, _, _ = e.request(t, "GET", link, "", "")
	assert.Equal(t, http.StatusUnauthorized, st)
}

// TestPageUploadRefusals: an upload without a file, of another content
// type, or with an unknown field is refused with what is accepted.
func TestPageUploadRefusals(t *testing.T) {
	e := start(t, setup{})
	ct, body := multipartBody(t, "just words", false, nil)
	st, _, resp := e.request(t, "POST", "/api/chats/web-x/files", string(body), e.token, "Content-Type", ct)
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Contains(t, resp, "no file")
	st, _, resp = e.request(t, "POST", "/api/chats/web-x/files", `{"text":"x"}`, e.token)
	assert.Equal(t, http.StatusBadRequest, st)
	assert.Contains(t, resp, "multipart/form-data")
}

// FuzzParseUpload: any body is parsed or refused; a parsed upload has 1
// to 10 files, each fetched whole within the limit and refused above it.
func FuzzParseUpload(f *testing.F) {
	f.Add("b", "--b\r\nContent-Disposition: form-data; name=\"text\"\r\n\r\nhi\r\n--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.png\"\r\n\r\nPNG\r\n--b--\r\n")
	f.Add("b", "--b\r\nContent-Disposition: form-data; name=\"voice\"\r\n\r\n1\r\n--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"../v.ogg\"\r\n\r\nOggS\r\n--b--\r\n")
	f.Add("x", "garbage")
	f.Fuzz(func(t *testing.T, boundary, body string) {
		_, files, err := web.ParseUpload("multipart/form-data; boundary="+boundary, strings.NewReader(body))
		if err != nil {
			return
		}
		if len(files) == 0 || len(files) > 10 {
			t.Fatalf("%d files accepted", len(files))
		}
		for _, f := range files {
			b, err := f.Fetch(context.Background(), 1<<20)
			if err != nil || int64(len(b)) != f.Size {
				t.Fatalf("fetch: %d bytes, %v; size %d", len(b), err, f.Size)
			}
			if f.Size > 0 {
				if _, err := f.Fetch(context.Background(), f.Size-1); err == nil {
					t.Fatalf("a file over the limit was fetched")
				}
			}
		}
	})
}
