package tgfake

import (
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	tgbotapi "github.com/go-telegram-bot-api/telegram-bot-api/v5"
)

// Files, as the Bot API serves them to bots:
//   - getFile {file_id} answers {file_id, file_unique_id, file_size,
//     file_path}; an unknown ID is "Bad Request: invalid file_id", a file
//     over 20 MB "Bad Request: file is too big";
//   - GET /file/bot<token>/<file_path> downloads it (404 otherwise);
//   - sendPhoto (at most 10 MB) and sendDocument (at most 50 MB) take a
//     multipart upload, kept for SentFiles.

// Telegram's limits on files bots download and upload.
const (
	MaxDownload = 20 << 20
	MaxPhoto    = 10 << 20
	MaxDocument = 50 << 20
)

// storedFile is a file people sent, served by getFile.
type storedFile struct {
	id, path string
	data     []byte
	size     int // as reported; len(data) unless a test says otherwise
}

// upload is a file part of a multipart request.
type upload struct {
	name string
	data []byte
}

// SentFile is a file the bot sent (sendPhoto or sendDocument).
type SentFile struct {
	Method  string // sendPhoto or sendDocument
	ChatID  int64
	Name    string
	Caption string
	Data    []byte
	At      time.Time
}

// AddFile keeps data as a file a person uploaded and returns its file_id;
// size, when above 0, is the size Telegram reports instead of len(data)
// (a file too large for bots to download need not be built whole).
func (s *Server) AddFile(data []byte, size int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addFileLocked(data, size)
}

func (s *Server) addFileLocked(data []byte, size int) string {
	if s.files == nil {
		s.files = map[string]*storedFile{}
	}
	n := len(s.files) + 1
	if size <= 0 {
		size = len(data)
	}
	f := &storedFile{id: fmt.Sprintf("FILE%04d", n), path: fmt.Sprintf("documents/file_%d", n), data: data, size: size}
	s.files[f.id] = f
	return f.id
}

// Photo injects a photo message (in sizes, the largest last, all with
// the same bytes) with caption; a non-empty group puts it in an album
// (media_group_id). It returns the update ID.
func (s *Server) Photo(chatID, userID int64, data []byte, caption, group string) int {
	return s.FileMessage(chatID, userID, func(m *tgbotapi.Message, add func([]byte, int) string) {
		id := add(data, 0)
		m.Photo = []tgbotapi.PhotoSize{{FileID: id + "s", Width: 90, Height: 90, FileSize: len(data)}, {FileID: id, Width: 800, Height: 600, FileSize: len(data)}}
		s.files[id+"s"] = s.files[id]
		m.Caption, m.MediaGroupID = caption, group
	})
}

// Document injects a document message; size > 0 reports that size
// instead of len(data).
func (s *Server) Document(chatID, userID int64, name, mimeType string, data []byte, size int, caption string) int {
	return s.FileMessage(chatID, userID, func(m *tgbotapi.Message, add func([]byte, int) string) {
		id := add(data, size)
		m.Document = &tgbotapi.Document{FileID: id, FileName: name, MimeType: mimeType, FileSize: s.files[id].size}
		m.Caption = caption
	})
}

// Voice injects a voice note (OGG/Opus, as Telegram's apps record them).
func (s *Server) Voice(chatID, userID int64, data []byte) int {
	return s.FileMessage(chatID, userID, func(m *tgbotapi.Message, add func([]byte, int) string) {
		id := add(data, 0)
		m.Voice = &tgbotapi.Voice{FileID: id, Duration: 3, MimeType: "audio/ogg", FileSize: len(data)}
	})
}

// FileMessage injects a message from user in chat that fill completes;
// add keeps a file and returns its file_id (see AddFile). It returns the
// update ID.
func (s *Server) FileMessage(chatID, userID int64, fill func(m *tgbotapi.Message, add func(data []byte, size int) string)) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextMsg[chatID]++
	m := &tgbotapi.Message{MessageID: s.nextMsg[chatID], From: s.userLocked(userID), Chat: chat(chatID), Date: int(s.now().Unix())}
	fill(m, s.addFileLocked)
	s.msgs[chatID] = append(s.msgs[chatID], &Message{ID: m.MessageID, ChatID: chatID, Text: m.Caption})
	return s.pushLocked(tgbotapi.Update{Message: m})
}

// SentFiles are the files the bot sent to chat, in order.
func (s *Server) SentFiles(chatID int64) []SentFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []SentFile
	for _, f := range s.sent {
		if f.ChatID == chatID {
			out = append(out, f)
		}
	}
	return out
}

// getFileLocked answers getFile.
func (s *Server) getFileLocked(f url.Values) (any, *apiError) {
	sf := s.files[f.Get("file_id")]
	switch {
	case f.Get("file_id") == "":
		return nil, &apiError{400, "Bad Request: file_id is empty", 0}
	case sf == nil:
		return nil, &apiError{400, "Bad Request: invalid file_id", 0}
	case sf.size > MaxDownload:
		return nil, &apiError{400, "Bad Request: file is too big", 0}
	}
	return tgbotapi.File{FileID: sf.id, FileUniqueID: "U" + sf.id, FileSize: sf.size, FilePath: sf.path}, nil
}

// serveDownload answers GET /file/bot<token>/<file_path>.
func (s *Server) serveDownload(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/file/bot")
	token, path, _ := strings.Cut(rest, "/")
	s.mu.Lock()
	var found *storedFile
	if token == s.token {
		for _, f := range s.files {
			if f.path == path {
				found = f
			}
		}
	}
	s.requests = append(s.requests, Request{At: s.now(), Method: "download", Status: http.StatusOK})
	s.mu.Unlock()
	if found == nil {
		writeErr(w, apiError{404, "Not Found", 0})
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(found.data)))
	_, _ = w.Write(found.data)
}

// readUploads reads a multipart request's file parts (the form values go
// to r.Form). A request over MaxDocument is refused as Telegram refuses it.
func readUploads(r *http.Request) (map[string]upload, *apiError) {
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/form-data") {
		return nil, nil
	}
	r.Body = http.MaxBytesReader(nil, r.Body, MaxDocument+1<<20)
	if err := r.ParseMultipartForm(MaxDocument + 1<<20); err != nil {
		return nil, &apiError{413, "Request Entity Too Large", 0}
	}
	out := map[string]upload{}
	for field, hs := range r.MultipartForm.File {
		if len(hs) == 0 {
			continue
		}
		data, err := readPart(hs[0])
		if err != nil {
			return nil, &apiError{400, "Bad Request: " + err.Error(), 0}
		}
		out[field] = upload{name: hs[0].Filename, data: data}
	}
	return out, nil
}

func readPart(h *multipart.FileHeader) ([]byte, error) {
	f, err := h.Open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// sendFileLocked answers sendPhoto and sendDocument.
func (s *Server) sendFileLocked(method string, chatID int64, f url.Values, pc content) (any, *apiError) {
	field, limit := "document", MaxDocument
	if method == "sendPhoto" {
		field, limit = "photo", MaxPhoto
	}
	up, ok := pc.files[field]
	switch {
	case chatID == 0:
		return nil, &apiError{400, "Bad Request: chat_id is empty", 0}
	case !ok && f.Get(field) == "":
		return nil, &apiError{400, "Bad Request: there is no " + field + " in the request", 0}
	case !ok:
		return nil, &apiError{400, "Bad Request: wrong file identifier/HTTP URL specified", 0}
	case len(up.data) == 0:
		return nil, &apiError{400, "Bad Request: file must be non-empty", 0}
	case len(up.data) > limit:
		return nil, &apiError{413, "Request Entity Too Large", 0}
	case len([]rune(f.Get("caption"))) > 1024:
		return nil, &apiError{400, "Bad Request: message caption is too long", 0}
	}
	if e := s.rateLocked(chatID); e != nil {
		return nil, e
	}
	s.sent = append(s.sent, SentFile{Method: method, ChatID: chatID, Name: up.name, Caption: f.Get("caption"), Data: up.data, At: s.now()})
	s.nextMsg[chatID]++
	m := tgbotapi.Message{MessageID: s.nextMsg[chatID], Chat: chat(chatID), Date: int(s.now().Unix()), Caption: f.Get("caption")}
	id := s.addFileLocked(up.data, 0)
	if method == "sendPhoto" {
		m.Photo = []tgbotapi.PhotoSize{{FileID: id, FileSize: len(up.data)}}
	} else {
		m.Document = &tgbotapi.Document{FileID: id, FileName: up.name, FileSize: len(up.data)}
	}
	return m, nil
}
