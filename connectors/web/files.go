package web

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/leashd/leashd/connectors"
)

// Files on the page: POST /api/chats/{chat}/files takes a multipart
// upload (text, and file parts; voice=1 marks a recording of the page's
// record button), and the agent's send_file posts a "file" event whose
// link, GET /api/files/{id}, downloads it.

// Bounds on an upload: the whole request, and its files. Each file is
// held to LEASHD_MAX_UPLOAD_BYTES by the engine when it fetches it.
const (
	maxUploadBody  = 64 << 20
	maxUploadFiles = 10
	// keptFiles bounds the files the agent sent that the page can still
	// download; the oldest go first.
	keptFiles     = 64
	keptFileBytes = 256 << 20
)

// sentFile is a file the agent sent, kept for its download link.
type sentFile struct {
	id, chat string
	f        connectors.OutFile
}

// sentFiles keeps the files the agent sent, newest last.
type sentFiles struct {
	mu    sync.Mutex
	list  []sentFile
	bytes int
}

func (s *sentFiles) add(chat string, f connectors.OutFile) string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, sentFile{id: id, chat: chat, f: f})
	s.bytes += len(f.Data)
	for len(s.list) > keptFiles || (s.bytes > keptFileBytes && len(s.list) > 1) {
		s.bytes -= len(s.list[0].f.Data)
		s.list = s.list[1:]
	}
	return id
}

func (s *sentFiles) get(id string) (sentFile, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.list {
		if f.id == id {
			return f, true
		}
	}
	return sentFile{}, false
}

// fileEvent is the "file" event: a file the agent sent, with its link.
type fileEvent struct {
	ChatID  string    `json:"chat_id"`
	Name    string    `json:"name"`
	Caption string    `json:"caption,omitempty"`
	Size    int       `json:"size"`
	Image   bool      `json:"image"`
	URL     string    `json:"url"`
	At      time.Time `json:"at"`
}

// SendFile implements connectors.FileSender: the file is kept for download
// and the chat's pages get a "file" event with its link.
func (c *Connector) SendFile(_ context.Context, chatID string, f connectors.OutFile) error {
	id := c.sent.add(chatID, f)
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.streams, chatID) // later agent text goes below the file
	c.publishLocked("file", chatID, fileEvent{chatID, f.Name, f.Caption, len(f.Data), f.Image, "/api/files/" + id, time.Now()}, "📎 "+f.Name, 0)
	return nil
}

// downloadFile serves a file the agent sent, as an attachment (never
// shown as a page of this site), to credentials that may watch its chat.
func (c *Connector) downloadFile(w http.ResponseWriter, r *http.Request) {
	f, ok := c.sent.get(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, "no such file (the page keeps the last 64 files the agent sent)")
		return
	}
	if !pageOnly(w, r, f.chat, "download files") {
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": f.f.Name}))
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(f.f.Data)
}

// postFiles takes the page's upload and hands it to the engine as one
// message with files.
func (c *Connector) postFiles(w http.ResponseWriter, r *http.Request) {
	h, ok := c.h(w)
	if !ok {
		return
	}
	chat := r.PathValue("chat")
	if err := validChatID(chat); err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	text, files, err := parseUpload(r.Header.Get("Content-Type"), http.MaxBytesReader(w, r.Body, maxUploadBody))
	if err != nil {
		status := http.StatusBadRequest
		if errors.As(err, new(*http.MaxBytesError)) {
			status = http.StatusRequestEntityTooLarge
		}
		writeError(w, status, err.Error())
		return
	}
	var names []string
	for _, f := range files {
		names = append(names, "📎 "+f.Name)
	}
	shown := strings.TrimSpace(strings.Join(append(names, text), "\n"))
	c.mu.Lock()
	c.publishLocked("user.message", chat, userEvent{chat, shown, webUser, time.Now()}, shown, 0)
	c.mu.Unlock()
	route, err := h.HandleMessage(context.WithoutCancel(r.Context()), connectors.Incoming{
		ChatID: chat, UserID: webUser, UserName: webUser, Text: text, Files: files,
	})
	if err != nil {
		writeJSON(w, statusOf(err), routedBody{Routed: route, Error: err.Error()})
		return
	}
	writeJSON(w, http.StatusAccepted, routedBody{Routed: route})
}

// acceptedUpload says what POST /api/chats/{chat}/files takes.
const acceptedUpload = `multipart/form-data with a "text" field (optional), "file" parts (1 to 10) and "voice"=1 when the files are voice recordings`

// parseUpload reads an upload: its text, and its files (read whole: the
// engine fetches them after the request has ended).
func parseUpload(contentType string, body io.Reader) (string, []connectors.File, error) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return "", nil, fmt.Errorf("expected %s", acceptedUpload)
	}
	mr := multipart.NewReader(body, params["boundary"])
	var text strings.Builder
	var files []connectors.File
	voice := false
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", nil, fmt.Errorf("reading the upload: %w", err)
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return "", nil, fmt.Errorf("reading the upload: %w", err)
		}
		switch p.FormName() {
		case "text":
			text.Write(data)
		case "voice":
			voice = string(data) == "1"
		case "file":
			if len(files) == maxUploadFiles {
				return "", nil, fmt.Errorf("at most %d files go with one message", maxUploadFiles)
			}
			files = append(files, uploaded(p.FileName(), p.Header.Get("Content-Type"), data))
		default:
			return "", nil, fmt.Errorf("unknown field %q: expected %s", p.FormName(), acceptedUpload)
		}
	}
	if len(files) == 0 {
		return "", nil, fmt.Errorf("no file: expected %s", acceptedUpload)
	}
	for i := range files {
		files[i].Voice = voice
	}
	return strings.TrimSpace(text.String()), files, nil
}

// uploaded is a file the page sent, its bytes already read.
func uploaded(name, mediaType string, data []byte) connectors.File {
	return connectors.File{Name: name, MediaType: mediaType, Size: int64(len(data)),
		Fetch: func(_ context.Context, limit int64) ([]byte, error) {
			if int64(len(data)) > limit {
				return nil, fmt.Errorf("%w: %d bytes", connectors.ErrTooLarge, len(data))
			}
			return bytes.Clone(data), nil
		}}
}
