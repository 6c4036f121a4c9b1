package telegram

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"

	"github.com/leashd/leashd/connectors"
)

// Telegram lets bots download files of at most 20 MB (getFile answers
// "file is too big" beyond).
const maxBotDownload = 20 << 20

// maxCaption is the longest caption Telegram takes (characters).
const maxCaption = 1024

// filesOf returns the files a message carries: a photo (its largest
// size), a document, a video, a voice note or an audio file.
func (c *Connector) filesOf(m *tgbotapi.Message) []connectors.File {
	var out []connectors.File
	add := func(id, name, mediaType string, size int, voice bool) {
		f := connectors.File{Name: name, MediaType: mediaType, Size: int64(size), Voice: voice}
		if size > maxBotDownload {
			f.Refused = fmt.Sprintf("it is %.1f MB; Telegram lets bots download files of at most 20 MB", float64(size)/1e6)
		}
		f.Fetch = func(ctx context.Context, limit int64) ([]byte, error) { return c.download(ctx, id, limit) }
		out = append(out, f)
	}
	msg := strconv.Itoa(m.MessageID)
	if n := len(m.Photo); n > 0 {
		p := m.Photo[n-1] // sizes come smallest first
		add(p.FileID, "photo-"+msg+".jpg", "image/jpeg", p.FileSize, false)
	}
	if d := m.Document; d != nil {
		add(d.FileID, d.FileName, d.MimeType, d.FileSize, false)
	}
	if v := m.Video; v != nil {
		add(v.FileID, v.FileName, v.MimeType, v.FileSize, false)
	}
	if v := m.Voice; v != nil {
		add(v.FileID, "voice-"+msg+".ogg", v.MimeType, v.FileSize, true)
	}
	if a := m.Audio; a != nil {
		add(a.FileID, a.FileName, a.MimeType, a.FileSize, true)
	}
	return out
}

// download fetches a file: getFile, then the file's download URL
// (<api>/file/bot<token>/<file_path>), at most limit bytes. Errors never
// hold the token.
func (c *Connector) download(ctx context.Context, fileID string, limit int64) ([]byte, error) {
	bot := c.api()
	if bot == nil {
		return nil, errors.New("telegram: not connected")
	}
	resp, err := bot.request(ctx, tgbotapi.FileConfig{FileID: fileID})
	if err != nil {
		return nil, err
	}
	var f tgbotapi.File
	if err := json.Unmarshal(resp.Result, &f); err != nil || f.FilePath == "" {
		return nil, errors.New("telegram: getFile gave no file path")
	}
	if int64(f.FileSize) > limit {
		return nil, fmt.Errorf("%w: %d bytes", connectors.ErrTooLarge, f.FileSize)
	}
	u := strings.TrimRight(c.apiURL, "/") + "/file/bot" + c.token + "/" + f.FilePath
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, redact(err, c.token)
	}
	hr, err := c.client.Do(req)
	if err != nil {
		return nil, redact(err, c.token)
	}
	defer hr.Body.Close()
	if hr.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("telegram: downloading the file answered %s", hr.Status)
	}
	data, err := connectors.ReadLimited(hr.Body, limit)
	return data, redact(err, c.token)
}

// SendFile implements connectors.FileSender: a picture with sendPhoto,
// anything else (and a picture Telegram refuses as a photo) with
// sendDocument, paced like every message to the chat.
func (c *Connector) SendFile(ctx context.Context, chatID string, f connectors.OutFile) error {
	chat, err := parseChat(chatID)
	if err != nil {
		return err
	}
	caption := f.Caption
	if utf8.RuneCountInString(caption) > maxCaption {
		caption = string([]rune(caption)[:maxCaption-1]) + "…"
	}
	file := tgbotapi.FileBytes{Name: f.Name, Bytes: f.Data}
	return c.out.do(ctx, chat, func(ctx context.Context, send call) error {
		if f.Image && len(f.Data) <= 10<<20 { // sendPhoto takes at most 10 MB
			p := tgbotapi.NewPhoto(chat, file)
			p.Caption = caption
			_, err := send(ctx, p)
			var refused *tgbotapi.Error // the library's uploads carry no error code
			if err == nil || !errors.As(err, &refused) || refused.RetryAfter > 0 {
				return err
			}
			// A picture Telegram cannot take as a photo (its sides, its
			// format) still goes, as a document.
		}
		d := tgbotapi.NewDocument(chat, file)
		d.Caption = caption
		_, err := send(ctx, d)
		return err
	})
}
