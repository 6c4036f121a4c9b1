package slack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/leashd/leashd/connectors"
)

// filesOf turns the files a message shares into connectors.Files: each is
// looked up with files.info when fetched (the event's copy may be
// partial) and downloaded from url_private_download with the bot token.
// Audio clips are voice notes.
func (c *Connector) filesOf(fs []slack.File) []connectors.File {
	var out []connectors.File
	for _, f := range fs {
		id := f.ID
		cf := connectors.File{Name: f.Name, MediaType: f.Mimetype, Size: int64(f.Size),
			Voice: strings.HasPrefix(f.Mimetype, "audio/")}
		if f.IsExternal || f.Mode == "external" {
			cf.Refused = "it is a link to a file outside Slack; send the file itself"
		}
		cf.Fetch = func(ctx context.Context, limit int64) ([]byte, error) { return c.download(ctx, id, limit) }
		out = append(out, cf)
	}
	return out
}

// download fetches a file: files.info, then its private download URL with
// the bot token (slack-go sends it only to Slack's own hosts), at most
// limit bytes.
func (c *Connector) download(ctx context.Context, id string, limit int64) ([]byte, error) {
	f, _, _, err := c.api.GetFileInfoContext(ctx, id, 0, 0)
	if err != nil {
		return nil, fmt.Errorf("slack: files.info: %w", err)
	}
	if int64(f.Size) > limit {
		return nil, fmt.Errorf("%w: %d bytes", connectors.ErrTooLarge, f.Size)
	}
	u := f.URLPrivateDownload
	if u == "" {
		u = f.URLPrivate
	}
	w := &limitedWriter{limit: limit}
	if err := c.api.GetFileContext(ctx, u, w); err != nil {
		return nil, fmt.Errorf("slack: downloading %s: %w", f.Name, err)
	}
	return w.buf.Bytes(), nil
}

// limitedWriter keeps at most limit bytes; more is an error wrapping
// connectors.ErrTooLarge, which stops the download.
type limitedWriter struct {
	buf   bytes.Buffer
	limit int64
}

func (w *limitedWriter) Write(p []byte) (int, error) {
	if int64(w.buf.Len()+len(p)) > w.limit {
		return 0, fmt.Errorf("%w: over %d bytes", connectors.ErrTooLarge, w.limit)
	}
	return w.buf.Write(p)
}

// SendFile implements connectors.FileSender with Slack's external upload
// flow (files.getUploadURLExternal, the upload, files.completeUploadExternal),
// shared in the chat's channel or thread with the caption as its comment.
func (c *Connector) SendFile(ctx context.Context, chatID string, f connectors.OutFile) error {
	ref, err := parseChat(chatID)
	if err != nil {
		return err
	}
	if len(f.Data) == 0 {
		return errors.New("the file is empty; Slack takes no empty files")
	}
	_, err = c.api.UploadFileContext(ctx, slack.UploadFileParameters{
		Reader: bytes.NewReader(f.Data), FileSize: len(f.Data), Filename: f.Name, Title: f.Name,
		InitialComment: f.Caption, Channel: ref.channel, ThreadTimestamp: ref.thread,
	})
	return err
}
