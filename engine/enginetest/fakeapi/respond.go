package fakeapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"unicode/utf8"
)

func apiError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}})
	w.Write(b)
}

// respond writes reply as the API would: an error, a JSON message or, for
// a streaming request, the message's SSE events. prepared replies are
// numbered apart from the script's.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, req *Request, reply Reply, abandoned chan struct{}, prepared bool) {
	if reply.Status != 0 && reply.Status != http.StatusOK {
		replyError(w, reply)
		return
	}
	m := message{id: s.messageID(prepared), model: req.Model, stop: "end_turn",
		usage: map[string]int{"input_tokens": 100, "output_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}
	if m.model == "" {
		m.model = "claude-fake"
	}
	if len(reply.Tools) > 0 {
		m.stop = "tool_use"
	}
	if !req.Stream {
		var content []map[string]any
		if reply.Text != "" {
			content = append(content, map[string]any{"type": "text", "text": reply.Text})
		}
		for _, t := range reply.Tools {
			content = append(content, map[string]any{"type": "tool_use", "id": t.ID, "name": t.Name, "input": inputJSON(t.Input)})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{
			"id": m.id, "type": "message", "role": "assistant", "model": m.model, "content": content,
			"stop_reason": m.stop, "stop_sequence": nil, "usage": m.usage,
		})
		return
	}
	s.stream(w, r, reply, m, abandoned)
}

// message is what a reply's message says about itself.
type message struct {
	id, model, stop string
	usage           map[string]int
}

// replyError writes a scripted API error with the type the real API gives
// its status.
func replyError(w http.ResponseWriter, reply Reply) {
	typ := "api_error"
	switch reply.Status {
	case http.StatusBadRequest:
		typ = "invalid_request_error"
	case http.StatusUnauthorized:
		typ = "authentication_error"
	case http.StatusTooManyRequests:
		typ = "rate_limit_error"
	case 529:
		typ = "overloaded_error"
	}
	for k, vs := range reply.Header {
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	apiError(w, reply.Status, typ, reply.Error)
}

// messageID numbers the next message; preparation has its own numbering,
// so that a script's IDs do not depend on the CLI.
func (s *Server) messageID(prepared bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if prepared {
		s.prepSeq++
		return fmt.Sprintf("msg_fakeprep%04d", s.prepSeq)
	}
	s.seq++
	return fmt.Sprintf("msg_fake%04d", s.seq)
}

// stream writes reply as SSE events, holding after message_start while
// reply.Hold is open; a client that goes away meanwhile closes abandoned.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, reply Reply, m message, abandoned chan struct{}) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("request-id", "req_"+m.id)
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	event := func(name string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": m.id, "type": "message", "role": "assistant", "model": m.model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": m.usage,
	}})
	event("ping", map[string]any{"type": "ping"})
	if reply.Hold != nil {
		select {
		case <-reply.Hold:
		case <-r.Context().Done():
			close(abandoned)
			return
		}
	}
	idx := 0
	if reply.Text != "" {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "text", "text": ""}})
		for _, part := range split(reply.Text, 3) {
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "text_delta", "text": part}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	for _, t := range reply.Tools {
		event("content_block_start", map[string]any{"type": "content_block_start", "index": idx, "content_block": map[string]any{"type": "tool_use", "id": t.ID, "name": t.Name, "input": map[string]any{}}})
		for _, part := range split(string(inputJSON(t.Input)), 2) {
			event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx, "delta": map[string]any{"type": "input_json_delta", "partial_json": part}})
		}
		event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
		idx++
	}
	event("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": m.stop, "stop_sequence": nil}, "usage": map[string]int{"output_tokens": 20}})
	event("message_stop", map[string]any{"type": "message_stop"})
}

func inputJSON(v any) json.RawMessage {
	switch x := v.(type) {
	case nil:
		return json.RawMessage("{}")
	case json.RawMessage:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("fakeapi: tool input does not marshal: %v", err))
	}
	return b
}

// split cuts s into at most n parts on rune boundaries, as a stream would.
func split(s string, n int) []string {
	if n <= 1 || len(s) < n {
		return []string{s}
	}
	size := len(s) / n
	var out []string
	for len(s) > 0 && len(out) < n-1 {
		cut := min(size, len(s))
		for cut < len(s) && !utf8.RuneStart(s[cut]) {
			cut++
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
