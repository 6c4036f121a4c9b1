package stt_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/engine/stt"
	"github.com/leashd/leashd/engine/stt/stttest"
)

// TestTranscribe sends the audio as an OpenAI-compatible multipart upload
// (file, model, the key as a bearer token) and returns the transcript.
func TestTranscribe(t *testing.T) {
	fake := stttest.New()
	defer fake.Close()
	audio := []byte("OggS voice")
	fake.Say(audio, " deploy the branch \n")
	c, err := stt.New(fake.URL, "whisper-large-v3", "sk-test")
	require.NoError(t, err)
	text, err := c.Transcribe(t.Context(), "voice-1.ogg", "audio/ogg", audio)
	require.NoError(t, err)
	assert.Equal(t, "deploy the branch", text)
	calls := fake.Calls()
	require.Len(t, calls, 1)
	assert.Equal(t, stttest.Call{Model: "whisper-large-v3", FileName: "voice-1.ogg", MediaType: "audio/ogg", Auth: "Bearer sk-test", Audio: audio}, calls[0])

	_, err = c.Transcribe(t.Context(), "v.ogg", "audio/ogg", []byte("unknown"))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Audio file might be corrupted or unsupported", "the service's own message")
}

// TestNewAcceptsBaseOrEndpoint: a base URL gets /audio/transcriptions, the
// full endpoint is used as it is, anything but http(s) is refused.
func TestNewAcceptsBaseOrEndpoint(t *testing.T) {
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths = append(paths, r.URL.Path)
		_, _ = w.Write([]byte(`{"text":"ok"}`))
	}))
	defer srv.Close()
	for _, u := range []string{srv.URL + "/v1", srv.URL + "/v1/audio/transcriptions/"} {
		c, err := stt.New(u, "", "")
		require.NoError(t, err)
		_, err = c.Transcribe(t.Context(), "a.ogg", "", []byte("x"))
		require.NoError(t, err)
	}
	assert.Equal(t, []string{"/v1/audio/transcriptions", "/v1/audio/transcriptions"}, paths)
	_, err := stt.New("ftp://x", "", "")
	assert.ErrorContains(t, err, "LEASHD_STT_URL")
}
