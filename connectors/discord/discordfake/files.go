package discordfake

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Discord's limits on uploads: 25 MiB for a bot without boosts (the whole
// request), at most 10 files to a message.
const (
	DefaultUploadLimit = 25 << 20
	MaxFiles           = 10
)

// Attachment is a file a person attaches to a message the fake sends.
type Attachment struct {
	Name        string
	ContentType string // "" for none, as Discord sends for unknown types
	Data        []byte
	// Size is the size the event reports; 0 means len(Data).
	Size int
	// Voice marks a voice message (the message's IS_VOICE_MESSAGE flag).
	Voice bool
}

// Upload is a file the bot posted with a message (multipart).
type Upload struct {
	Name        string
	ContentType string
	Data        []byte
}

// SetUploadLimit sets how many bytes a message's files may have in all
// (DefaultUploadLimit unless set), so a test can pass it cheaply.
func (s *Server) SetUploadLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.uploadLimit = n
}

// DMWith sends a direct message with attachments from user and returns
// its ID.
func (s *Server) DMWith(user, channel, text string, files ...Attachment) (string, error) {
	return s.messageWith(user, channel, "", text, false, files)
}

// PostWith sends a message with attachments from user in a guild channel
// (or thread); mention puts a mention of the bot before the text.
func (s *Server) PostWith(user, channel, text string, mention bool, files ...Attachment) (string, error) {
	return s.messageWith(user, channel, GuildID, text, mention, files)
}

// attachmentsJSON stores files where the fake's CDN serves them
// (<URL>attachments/<id>/<name>) and describes them as in a
// MESSAGE_CREATE; flags has IS_VOICE_MESSAGE when one is a voice message.
func (s *Server) attachmentsJSON(files []Attachment) (list []any, flags int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	list = []any{}
	for _, f := range files {
		id := s.nextID()
		key := id + "/" + url.PathEscape(f.Name)
		s.cdn[key] = f.Data
		size := f.Size
		if size == 0 {
			size = len(f.Data)
		}
		a := map[string]any{"id": id, "filename": f.Name, "size": size,
			"url": s.srv.URL + "/attachments/" + key, "proxy_url": s.srv.URL + "/attachments/" + key}
		if f.ContentType != "" {
			a["content_type"] = f.ContentType
		}
		if f.Voice {
			flags |= 1 << 13
			a["duration_secs"] = 2.5
			a["waveform"] = "AAAA"
		}
		list = append(list, a)
	}
	return list, flags
}

// serveCDN serves attachments people sent, like cdn.discordapp.com (no
// token needed).
func (s *Server) serveCDN(w http.ResponseWriter, r *http.Request) {
	key := strings.TrimPrefix(r.URL.EscapedPath(), "/attachments/")
	s.mu.Lock()
	data, ok := s.cdn[key]
	s.downloads++
	s.mu.Unlock()
	if !ok || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	_, _ = w.Write(data)
}

// Downloads counts requests to the fake's CDN.
func (s *Server) Downloads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.downloads
}

// upload is a multipart message post: its payload_json and files.
type upload struct {
	payload []byte
	files   []Upload
	size    int
}

// parseUpload reads a multipart/form-data body as Discord does: the JSON
// in payload_json, files in files[n].
func parseUpload(body []byte, boundary string) (*upload, error) {
	if boundary == "" {
		return nil, errors.New("no multipart boundary")
	}
	up := &upload{}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return up, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		switch name := p.FormName(); {
		case name == "payload_json":
			up.payload = data
		case strings.HasPrefix(name, "files["):
			if p.FileName() == "" {
				return nil, fmt.Errorf("%s has no filename", name)
			}
			up.files = append(up.files, Upload{Name: p.FileName(), ContentType: p.Header.Get("Content-Type"), Data: data})
			up.size += len(data)
		default:
			return nil, fmt.Errorf("unknown form field %q", name)
		}
	}
}

// readUpload parses r's body when it is multipart; nil when it is not.
func readUpload(r *http.Request, body []byte) (*upload, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return nil, nil
	}
	return parseUpload(body, params["boundary"])
}

// checkUpload refuses what Discord refuses of a message's files: over
// the upload limit in all (413, code 40005), more than MaxFiles. A
// refusal is recorded. Callers hold s.mu.
func (s *Server) checkUpload(call string, up *upload) *reply {
	if up == nil {
		return nil
	}
	var r reply
	switch {
	case up.size > s.uploadLimit:
		r = reply{http.StatusRequestEntityTooLarge, apiError{Code: 40005, Message: "Request entity too large"}}
		s.rejected = append(s.rejected, Rejection{Call: call, Errors: []string{fmt.Sprintf("files: %d bytes, over the limit of %d", up.size, s.uploadLimit)}})
	case len(up.files) > MaxFiles:
		r = reply{400, apiError{Code: 50035, Message: "Invalid Form Body", Errors: []string{"files: at most 10"}}}
		s.rejected = append(s.rejected, Rejection{Call: call, Errors: []string{fmt.Sprintf("files: %d, at most %d", len(up.files), MaxFiles)}})
	default:
		return nil
	}
	return &r
}
