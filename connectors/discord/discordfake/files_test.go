package discordfake_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/discord/discordfake"
)

// upload posts a message with files as discordgo does: payload_json and
// files[n] parts.
func upload(t *testing.T, f *discordfake.Server, payload string, files map[string][]byte) *http.Response {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	p, err := w.CreateFormField("payload_json")
	require.NoError(t, err)
	_, _ = p.Write([]byte(payload))
	i := 0
	for name, data := range files {
		fw, err := w.CreateFormFile(fmt.Sprintf("files[%d]", i), name)
		require.NoError(t, err)
		_, _ = fw.Write(data)
		i++
	}
	require.NoError(t, w.Close())
	req, err := http.NewRequest("POST", f.URL()+"api/v10/channels/7/messages", &body)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bot "+token)
	req.Header.Set("Content-Type", w.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp
}

// A message with files is recorded with their names and bytes and its
// content; files over the upload limit (413) or more than 10 are refused
// and recorded, as Discord refuses them.
func TestUploads(t *testing.T) {
	f := discordfake.New(token)
	defer f.Close()
	f.SetUploadLimit(1000)
	resp := upload(t, f, `{"content":"the log"}`, map[string][]byte{"ci.log": []byte("all green\n")})
	assert.Equal(t, 200, resp.StatusCode)
	msgs := f.Messages("7")
	require.Len(t, msgs, 1)
	assert.Equal(t, "the log", msgs[0].Content)
	require.Len(t, msgs[0].Files, 1)
	assert.Equal(t, "ci.log", msgs[0].Files[0].Name)
	assert.Equal(t, []byte("all green\n"), msgs[0].Files[0].Data)

	resp = upload(t, f, `{}`, map[string][]byte{"big.bin": bytes.Repeat([]byte("x"), 1001)})
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	many := map[string][]byte{}
	for i := range 11 {
		many[fmt.Sprintf("f%d.txt", i)] = []byte("x")
	}
	resp = upload(t, f, `{}`, many)
	assert.Equal(t, 400, resp.StatusCode)
	rej := f.Rejected()
	require.Len(t, rej, 2)
	assert.Contains(t, strings.Join(rej[0].Errors, " "), "over the limit of 1000")
	assert.Contains(t, strings.Join(rej[1].Errors, " "), "at most 10")
	assert.Len(t, f.Messages("7"), 1, "nothing refused was posted")
}
