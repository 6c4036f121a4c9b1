// Package stttest is a fake OpenAI-compatible transcription endpoint
// (POST /v1/audio/transcriptions) for tests: it reads the multipart upload
// as the real services do and answers the transcript a test set for the
// audio's bytes.
package stttest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
)

// Call is one transcription request the fake received.
type Call struct {
	Model, FileName, MediaType, Auth string
	Audio                            []byte
}

// Server is the fake endpoint. Create it with New.
type Server struct {
	// URL is the base URL to give leashd (LEASHD_STT_URL), ending in /v1.
	URL string
	srv *httptest.Server

	mu          sync.Mutex
	transcripts map[string]string // audio bytes → transcript
	calls       []Call
}

// New starts the fake; Close stops it.
func New() *Server {
	s := &Server{transcripts: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/audio/transcriptions", s.transcribe)
	s.srv = httptest.NewServer(mux)
	s.URL = s.srv.URL + "/v1"
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// Say makes the fake answer text for audio.
func (s *Server) Say(audio []byte, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.transcripts[string(audio)] = text
}

// Calls are the requests received, in order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

func (s *Server) transcribe(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(25 << 20); err != nil { // OpenAI takes 25 MB
		apiError(w, http.StatusBadRequest, "could not parse multipart form: "+err.Error())
		return
	}
	model := r.FormValue("model")
	f, h, err := r.FormFile("file")
	if err != nil || model == "" {
		apiError(w, http.StatusBadRequest, "you must provide a model parameter and a file")
		return
	}
	defer f.Close()
	audio, _ := io.ReadAll(f)
	s.mu.Lock()
	s.calls = append(s.calls, Call{Model: model, FileName: h.Filename, MediaType: h.Header.Get("Content-Type"), Auth: r.Header.Get("Authorization"), Audio: audio})
	text, ok := s.transcripts[string(audio)]
	s.mu.Unlock()
	if !ok {
		apiError(w, http.StatusBadRequest, "Audio file might be corrupted or unsupported")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"text": text})
}

func apiError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error"}})
}
