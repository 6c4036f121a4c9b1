package config

// STT is where voice notes are transcribed: an OpenAI-compatible
// /v1/audio/transcriptions endpoint. Its variables are LEASHD_STT_* (the
// section "stt", STTSection).
type STT struct {
	URL    string `desc:"OpenAI-compatible speech-to-text endpoint for voice notes, e.g. https://api.openai.com/v1, https://api.groq.com/openai/v1 or a local faster-whisper/Speaches server (/audio/transcriptions is added); empty: voice notes are answered with how to turn this on"`
	Model  string `default:"whisper-1" desc:"The transcription model (Groq and local servers name theirs, e.g. whisper-large-v3)"`
	APIKey string `split_words:"true" desc:"The endpoint's API key, sent as a bearer token (empty for a local server without one)"`
}

// STTSection is how the speech-to-text settings are read: LEASHD_STT_*.
func STTSection(s *STT) Section { return Section{Name: "stt", Settings: s} }

// Secrets are the values the log never shows.
func (s *STT) Secrets() []string {
	if s.APIKey == "" {
		return nil
	}
	return []string{s.APIKey}
}
