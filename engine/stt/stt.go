// Package stt transcribes voice notes through an OpenAI-compatible
// /v1/audio/transcriptions endpoint (OpenAI, Groq, a local
// faster-whisper or Speaches server): a multipart POST of the audio file
// and the model's name, answered with {"text": "…"}.
package stt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"strings"
	"time"
)

// DefaultModel is the model asked for when none is set (OpenAI's; Groq
// and local servers name theirs, e.g. whisper-large-v3).
const DefaultModel = "whisper-1"

// maxAnswer bounds the endpoint's answer read.
const maxAnswer = 1 << 20

// Client is an endpoint's client. Create it with New.
type Client struct {
	url    string
	model  string
	key    string
	client *http.Client
}

// New returns a client of the endpoint at baseURL: a base such as
// https://api.openai.com/v1 (/audio/transcriptions is added) or the
// full endpoint URL. key may be "" (a local server).
func New(baseURL, model, key string) (*Client, error) {
	u := strings.TrimRight(strings.TrimSpace(baseURL), "/")
	if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		return nil, fmt.Errorf("LEASHD_STT_URL %q is not an http:// or https:// URL (e.g. https://api.openai.com/v1)", baseURL)
	}
	if !strings.HasSuffix(u, "/audio/transcriptions") {
		u += "/audio/transcriptions"
	}
	if model == "" {
		model = DefaultModel
	}
	return &Client{url: u, model: model, key: key, client: &http.Client{Timeout: 2 * time.Minute}}, nil
}

// Transcribe sends the audio (named name, of mediaType) and returns its
// transcript.
func (c *Client) Transcribe(ctx context.Context, name, mediaType string, audio []byte) (string, error) {
	body, contentType, err := form(name, mediaType, c.model, audio)
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, body)
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", contentType)
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return "", fmt.Errorf("the transcription service could not be reached: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("the transcription service answered %s: %s", resp.Status, errorText(raw))
	}
	var out struct {
		Text *string `json:"text"`
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.Text == nil {
		return "", errors.New("the transcription service's answer has no text (is LEASHD_STT_URL an OpenAI-compatible /v1/audio/transcriptions endpoint?)")
	}
	return strings.TrimSpace(*out.Text), nil
}

// form is the multipart body: file, model, response_format=json.
func form(name, mediaType, model string, audio []byte) (io.Reader, string, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename=%q`, name))
	if mediaType == "" {
		mediaType = "application/octet-stream"
	}
	h.Set("Content-Type", mediaType)
	part, err := w.CreatePart(h)
	if err != nil {
		return nil, "", err
	}
	if _, err := part.Write(audio); err != nil {
		return nil, "", err
	}
	for k, v := range map[string]string{"model": model, "response_format": "json"} {
		if err := w.WriteField(k, v); err != nil {
			return nil, "", err
		}
	}
	if err := w.Close(); err != nil {
		return nil, "", err
	}
	return &buf, w.FormDataContentType(), nil
}

// errorText is the message of an OpenAI-style error answer
// ({"error":{"message":…}}), else the answer's start.
func errorText(raw []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &e) == nil && e.Error.Message != "" {
		return e.Error.Message
	}
	s := strings.TrimSpace(string(raw))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
