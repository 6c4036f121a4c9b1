package slackfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
)

// Files, as Slack serves them to a bot:
//   - files.info {file} answers the file's metadata, with url_private and
//     url_private_download on the fake's host; an unknown file is
//     file_not_found;
//   - GET url_private_download needs the bot token as a bearer token
//     (without it Slack redirects to its sign-in page: here 302 to an HTML
//     page, as slack-go detects);
//   - the external upload flow: files.getUploadURLExternal {filename,
//     length} → upload_url and file_id; a POST of the bytes to upload_url;
//     files.completeUploadExternal {files: [{id, title}], channel_id,
//     thread_ts, initial_comment} shares it (Shared).

// maxUpload is the largest file the fake takes (Slack's is 1 GB).
const maxUpload = 64 << 20

// fileRec is a file in the fake workspace.
type fileRec struct {
	ID, Name, MimeType string
	Data               []byte
	length             int  // the length getUploadURLExternal was told
	uploaded           bool // its bytes came (upload flow)
}

// SharedFile is a file the bot shared through the upload flow.
type SharedFile struct {
	Channel, ThreadTS, Name, Title, Comment string
	Data                                    []byte
}

// AddFile keeps a file a person uploaded and returns it as message
// events carry it ("files": [ … ]).
func (s *Server) AddFile(name, mimeType string, data []byte) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.newFileLocked(name, mimeType)
	f.Data, f.uploaded = data, true
	return s.fileJSON(f)
}

func (s *Server) newFileLocked(name, mimeType string) *fileRec {
	if s.files == nil {
		s.files = map[string]*fileRec{}
	}
	f := &fileRec{ID: fmt.Sprintf("F%06d", len(s.files)+1), Name: name, MimeType: mimeType}
	s.files[f.ID] = f
	return f
}

// fileJSON is a file's object as the Web API shows it.
func (s *Server) fileJSON(f *fileRec) map[string]any {
	u := s.srv.URL + "/files-pri/" + TeamID + "-" + f.ID + "/" + f.Name
	return map[string]any{"id": f.ID, "name": f.Name, "title": f.Name, "mimetype": f.MimeType, "size": len(f.Data),
		"url_private": u, "url_private_download": u + "?download=1", "mode": "hosted"}
}

// FileMessageEvent is a message event sharing files (subtype file_share).
func FileMessageEvent(channel, channelType, user, ts, threadTS, text string, files ...map[string]any) map[string]any {
	m := MessageEvent(channel, channelType, user, ts, threadTS, text)
	m["subtype"] = "file_share"
	m["files"] = files
	m["upload"] = true
	return m
}

// Shared are the files the bot shared, in order.
func (s *Server) Shared() []SharedFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]SharedFile(nil), s.shared...)
}

// answerFileLocked answers the files.* methods; false for other methods.
func (s *Server) answerFileLocked(w http.ResponseWriter, method string, p map[string]string) bool {
	switch method {
	case "files.info":
		f := s.files[p["file"]]
		if f == nil || !f.uploaded {
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "file_not_found"})
			return true
		}
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "file": s.fileJSON(f), "comments": []any{}})
	case "files.getUploadURLExternal":
		n, err := strconv.Atoi(p["length"])
		if p["filename"] == "" || err != nil || n <= 0 || n > maxUpload {
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_arguments"})
			return true
		}
		f := s.newFileLocked(p["filename"], "")
		f.length = n
		writeJSON(w, http.StatusOK, map[string]any{"ok": true, "upload_url": s.srv.URL + "/upload/v1/" + f.ID, "file_id": f.ID})
	case "files.completeUploadExternal":
		s.completeUploadLocked(w, p)
	default:
		return false
	}
	return true
}

// completeUploadLocked shares uploaded files in a channel (or thread).
func (s *Server) completeUploadLocked(w http.ResponseWriter, p map[string]string) {
	var files []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(p["files"]), &files); err != nil || len(files) == 0 {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_arguments"})
		return
	}
	var out []map[string]any
	for _, x := range files {
		f := s.files[x.ID]
		if f == nil || !f.uploaded {
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "file_not_found"})
			return
		}
		if p["channel_id"] != "" {
			s.shared = append(s.shared, SharedFile{Channel: p["channel_id"], ThreadTS: p["thread_ts"], Name: f.Name, Title: x.Title, Comment: p["initial_comment"], Data: f.Data})
		}
		out = append(out, map[string]any{"id": f.ID, "title": x.Title})
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "files": out})
}

// serveUpload takes the bytes of an upload_url.
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	id := strings.TrimPrefix(r.URL.Path, "/upload/v1/")
	var data []byte
	if f, _, err := r.FormFile("file"); err == nil {
		data, _ = io.ReadAll(io.LimitReader(f, maxUpload+1))
		_ = f.Close()
	} else {
		data, _ = io.ReadAll(io.LimitReader(r.Body, maxUpload+1))
	}
	s.mu.Lock()
	f := s.files[id]
	ok := f != nil && !f.uploaded && len(data) == f.length
	if ok {
		f.Data, f.uploaded = data, true
	}
	s.mu.Unlock()
	if !ok {
		http.Error(w, "upload failed: unknown upload URL or a length other than files.getUploadURLExternal was told", http.StatusBadRequest)
		return
	}
	_, _ = fmt.Fprintf(w, "OK - %d", len(data))
}

// serveDownload answers url_private(_download): the bytes with the bot
// token, Slack's sign-in page without it.
func (s *Server) serveDownload(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/files-pri/"+TeamID+"-")
	id, _, _ := strings.Cut(rest, "/")
	s.mu.Lock()
	f := s.files[id]
	s.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer "+s.BotToken {
		http.Redirect(w, r, "/signin?redir="+r.URL.Path, http.StatusFound)
		return
	}
	if f == nil || !f.uploaded {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.MimeType)
	_, _ = w.Write(f.Data)
}

// serveSignIn is the sign-in page a download without the token lands on.
func serveSignIn(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html")
	_, _ = io.WriteString(w, "<html><body>Sign in to Fake</body></html>")
}
