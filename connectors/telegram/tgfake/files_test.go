package tgfake_test

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors/telegram/tgfake"
)

// TestFilesAsTheBotAPIServesThem: getFile and the download URL give the
// bytes people sent; over 20 MB getFile answers "file is too big"; an
// unknown ID is invalid; sendPhoto and sendDocument take multipart
// uploads (the library's own), within Telegram's sizes.
func TestFilesAsTheBotAPIServesThem(t *testing.T) {
	f := tgfake.New()
	defer f.Close()
	b := bot(t, f)
	data := []byte("%PDF-1.4 a small document")
	f.Document(7, 7, "r.pdf", "application/pdf", data, 0, "read")
	updates, err := b.GetUpdates(tgbotapi.UpdateConfig{})
	require.NoError(t, err)
	require.Len(t, updates, 1)
	doc := updates[0].Message.Document
	require.NotNil(t, doc)
	assert.Equal(t, "r.pdf", doc.FileName)
	assert.Equal(t, "read", updates[0].Message.Caption)

	file, err := b.GetFile(tgbotapi.FileConfig{FileID: doc.FileID})
	require.NoError(t, err)
	assert.Equal(t, len(data), file.FileSize)
	resp, err := http.Get(f.URL() + "/file/bot" + f.Token() + "/" + file.FilePath)
	require.NoError(t, err)
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, data, got)
	resp, err = http.Get(f.URL() + "/file/bot1:wrong/" + file.FilePath)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "the token is part of the download URL")

	bigID := f.AddFile([]byte("x"), tgfake.MaxDownload+1)
	_, err = b.GetFile(tgbotapi.FileConfig{FileID: bigID})
	assert.Equal(t, "Bad Request: file is too big", apiErr(t, err).Message)
	_, err = b.GetFile(tgbotapi.FileConfig{FileID: "nope"})
	assert.Equal(t, "Bad Request: invalid file_id", apiErr(t, err).Message)

	d := tgbotapi.NewDocument(7, tgbotapi.FileBytes{Name: "out.txt", Bytes: []byte("result")})
	d.Caption = "done"
	m, err := b.Send(d)
	require.NoError(t, err)
	assert.Equal(t, "out.txt", m.Document.FileName)
	_, err = b.Send(tgbotapi.NewPhoto(7, tgbotapi.FileBytes{Name: "big.jpg", Bytes: bytes.Repeat([]byte{1}, tgfake.MaxPhoto+1)}))
	// The library's uploads keep the description, not the code.
	assert.Equal(t, "Request Entity Too Large", apiErr(t, err).Message, "photos are at most 10 MB")
	sent := f.SentFiles(7)
	require.Len(t, sent, 1)
	assert.Equal(t, tgfake.SentFile{Method: "sendDocument", ChatID: 7, Name: "out.txt", Caption: "done", Data: []byte("result"), At: sent[0].At}, sent[0])
}
