package connectors

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// File is a file a person sent: a picture, a document, a voice note. The
// connector knows where the chat app keeps it; Fetch downloads it.
type File struct {
	// Name is the file's name as sent ("" when the app gives none, as
	// for a photo); the engine makes it safe before using it.
	Name string
	// MediaType is what the app says it is ("" when unknown); the engine
	// sniffs pictures itself.
	MediaType string
	// Size is the size the app reports, 0 when unknown: a file known to be
	// too large is refused before it is downloaded.
	Size int64
	// Voice marks a voice note or audio clip, to be transcribed.
	Voice bool
	// Fetch downloads the file's bytes, at most limit of them: a larger
	// file is an error wrapping ErrTooLarge.
	Fetch func(ctx context.Context, limit int64) ([]byte, error)
	// Refused, when set, says why the connector could not offer the file
	// (the app refuses bots files that large): the engine tells the person
	// instead of fetching it.
	Refused string
}

// ErrTooLarge is wrapped by File.Fetch's and FileSender's error when a
// file is over the limit.
var ErrTooLarge = errors.New("the file is too large")

// ReadLimited reads r whole, but at most limit bytes: more is an error
// wrapping ErrTooLarge.
func ReadLimited(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%w: over %d bytes", ErrTooLarge, limit)
	}
	return b, nil
}

// OutFile is a file sent to a chat (the agent's send_file).
type OutFile struct {
	Name      string // the name the chat shows
	MediaType string // sniffed by the engine
	Caption   string
	Data      []byte
	// Image: the chat app may show it as a picture (JPEG, PNG, GIF, WebP).
	Image bool
}

// FileSender is implemented by connectors that can post a file to a chat
// (Telegram's sendDocument, Slack's file upload, the page's download link).
type FileSender interface {
	SendFile(ctx context.Context, chatID string, f OutFile) error
}
