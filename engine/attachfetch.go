package engine

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/leashd/leashd/connectors"
)

// sttHelp answers a voice note when no transcription service is set.
const sttHelp = "Voice notes need a speech-to-text service: set LEASHD_STT_URL to an OpenAI-compatible endpoint " +
	"(e.g. https://api.openai.com/v1, Groq, or a local faster-whisper server), with LEASHD_STT_MODEL and " +
	"LEASHD_STT_API_KEY as it needs, and restart leashd. Until then, type your message."

// fetchAll downloads files, sorts pictures from other files, and
// transcribes voice notes (their transcripts are shown and returned as
// words of the prompt). Whatever cannot be taken is said to the chat in
// one message.
func (e *Engine) fetchAll(ctx context.Context, chatID string, files []connectors.File) (*bundle, []string) {
	b := newBundle()
	var spoken, problems []string
	for i, f := range files {
		data, problem := e.fetchOne(ctx, f)
		if problem != "" {
			problems = append(problems, problem)
			continue
		}
		if f.Voice {
			text, problem := e.transcribe(ctx, f, data)
			if problem != "" {
				problems = append(problems, problem)
				continue
			}
			e.say(ctx, chatID, "🎤 "+text)
			spoken = append(spoken, text)
			continue
		}
		mt := http.DetectContentType(data)
		name := safeName(f.Name, i+1, mt)
		if isImageType(mt) {
			im, err := prepareImage(data, mt)
			if err == nil {
				b.images = append(b.images, fetched{name: name, mediaType: im.mediaType, data: im.data})
				continue
			}
			if errors.Is(err, errTooManyPixels) {
				problems = append(problems, displayName(f)+": "+err.Error())
				continue
			}
			// Not a picture the model can read: it goes as a file.
		}
		if f.MediaType != "" && (mt == "application/octet-stream" || strings.HasPrefix(mt, "text/plain")) {
			mt = f.MediaType
		}
		b.files = append(b.files, fetched{name: name, mediaType: mt, data: data})
	}
	if len(problems) > 0 {
		e.say(ctx, chatID, "Not sent to the agent:\n• "+strings.Join(problems, "\n• "))
	}
	return b, spoken
}

// fetchOne downloads a file within the upload limit; problem says, for
// people, why it could not be.
func (e *Engine) fetchOne(ctx context.Context, f connectors.File) ([]byte, string) {
	name, limit := displayName(f), e.opts.files.maxBytes
	tooLarge := func(size string) string {
		return fmt.Sprintf("%s is %s, over the limit of %s (LEASHD_MAX_UPLOAD_BYTES); send a smaller file or put it where the agent can reach it",
			name, size, byteSize(limit))
	}
	switch {
	case f.Refused != "":
		return nil, name + ": " + f.Refused
	case f.Size > limit:
		return nil, tooLarge(byteSize(f.Size))
	case f.Voice && e.opts.files.stt == nil:
		return nil, name + ": " + sttHelp
	case f.Fetch == nil:
		return nil, name + ": the chat app gave no way to download it"
	}
	data, err := f.Fetch(ctx, limit)
	switch {
	case errors.Is(err, connectors.ErrTooLarge):
		return nil, tooLarge("larger than that")
	case err != nil:
		e.log.Warn("downloading a file a person sent", "file", name, "err", err)
		return nil, fmt.Sprintf("%s could not be downloaded (%v)", name, err)
	}
	return data, ""
}

// transcribe turns a voice note into text.
func (e *Engine) transcribe(ctx context.Context, f connectors.File, data []byte) (string, string) {
	mt := f.MediaType
	if mt == "" {
		mt = http.DetectContentType(data)
	}
	text, err := e.opts.files.stt.Transcribe(ctx, safeName(f.Name, 1, mt), mt, data)
	if err != nil {
		e.log.Warn("transcribing a voice note", "err", err)
		return "", fmt.Sprintf("%s could not be transcribed (%v)", displayName(f), err)
	}
	if text = strings.TrimSpace(text); text == "" {
		return "", displayName(f) + ": the transcription came back empty"
	}
	return text, ""
}

// byteSize is n in people's units: 512 B, 1.5 KiB, 20 MiB.
func byteSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<10)), ".0") + " KiB"
	default:
		return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(n)/(1<<20)), ".0") + " MiB"
	}
}
