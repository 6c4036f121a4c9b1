package engine

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/engine/agent"
)

// Files people send: a picture, an album, a document or a voice note
// arrives as messages with connectors.Incoming.Files. Everything a person
// sends within FileWindow of a file is gathered into one prompt: the
// caption, or the text that follows, is its words. Files without words
// wait for the person's next message. Each file either reaches the agent
// (an image block, a file saved in the working directory's
// .leashd/inbox/<message>/, a voice note's transcript) or the person is
// told why not.

// DefaultMaxUploadBytes is the default LEASHD_MAX_UPLOAD_BYTES: Telegram
// bots may download files up to 20 MB.
const DefaultMaxUploadBytes = 20 << 20

// defaultFileWindow is how long after a file more of the same message
// (an album's other pictures, the words) are waited for.
const defaultFileWindow = 1500 * time.Millisecond

// maxFilesPerPrompt bounds the files gathered into one prompt, and so the
// memory one chat's files take (each up to the upload limit).
const maxFilesPerPrompt = 10

// Transcriber turns a voice note into text (engine/stt, an
// OpenAI-compatible /v1/audio/transcriptions endpoint).
type Transcriber interface {
	Transcribe(ctx context.Context, name, mediaType string, audio []byte) (string, error)
}

// SessionTools gives agent sessions leashd's own MCP server (send_file).
type SessionTools interface {
	// Session returns the MCP servers for a new agent session, and bind,
	// which ties their credential to the one chat the session serves. A
	// spare session's is tied when a chat claims it; until then it may
	// send nowhere.
	Session() (servers []agent.MCPServer, bind func(chatID string))
}

// fileOptions are the engine's settings for files.
type fileOptions struct {
	maxBytes int64
	window   time.Duration
	stt      Transcriber
	tools    SessionTools
}

func newFileOptions(cfg Config, d Deps) fileOptions {
	o := fileOptions{maxBytes: cfg.MaxUploadBytes, window: cfg.FileWindow, stt: d.Transcriber, tools: d.SessionTools}
	if o.maxBytes <= 0 {
		o.maxBytes = DefaultMaxUploadBytes
	}
	if o.window <= 0 {
		o.window = defaultFileWindow
	}
	return o
}

// gathering is what a person sent in a chat around a file: files and
// words still within the window, and files already fetched that wait for
// words (ready). Guarded by Engine.mu.
type gathering struct {
	texts []string
	files []connectors.File
	timer *time.Timer
	ready *bundle
}

// bundle is the fetched files of one prompt.
type bundle struct {
	id     string    // the inbox folder: .leashd/inbox/<id>/
	images []fetched // pictures, made small enough for the model
	files  []fetched // everything else
}

// fetched is a downloaded file.
type fetched struct {
	name      string // made safe (safeName)
	mediaType string
	data      []byte
}

func (b *bundle) empty() bool { return b == nil || len(b.images)+len(b.files) == 0 }

func (b *bundle) merge(o *bundle) *bundle {
	if b == nil {
		return o
	}
	if o != nil {
		b.images = append(b.images, o.images...)
		b.files = append(b.files, o.files...)
	}
	return b
}

var bundleSeq atomic.Int64

func newBundle() *bundle {
	return &bundle{id: fmt.Sprintf("%s-%d", time.Now().UTC().Format("20060102-150405"), bundleSeq.Add(1))}
}

// gather takes a message with files into the chat's gathering and (re)starts
// its window; files over maxFilesPerPrompt are refused with a message.
func (e *Engine) gather(ctx context.Context, in connectors.Incoming) {
	e.mu.Lock()
	g := e.held[in.ChatID]
	if g == nil {
		g = &gathering{}
		e.held[in.ChatID] = g
	}
	var refused []string
	for _, f := range in.Files {
		if len(g.files) >= maxFilesPerPrompt {
			refused = append(refused, displayName(f))
			continue
		}
		g.files = append(g.files, f)
	}
	if t := strings.TrimSpace(in.Text); t != "" {
		g.texts = append(g.texts, t)
	}
	if g.timer != nil {
		g.timer.Stop()
	}
	chatID := in.ChatID
	g.timer = time.AfterFunc(e.opts.files.window, func() { e.flushFiles(chatID) })
	e.mu.Unlock()
	if len(refused) > 0 {
		e.say(ctx, in.ChatID, fmt.Sprintf("At most %d files go with one message; not sent to the agent: %s. Send them in another message.",
			maxFilesPerPrompt, strings.Join(refused, ", ")))
	}
}

// withHeld gives text to the chat's gathered files, if there are any: text
// within the window joins them and ends the window now; files waiting for
// words get this text. It reports whether it took the text.
func (e *Engine) withHeld(ctx context.Context, chatID, text string) bool {
	e.mu.Lock()
	g := e.held[chatID]
	switch {
	case g == nil:
		e.mu.Unlock()
		return false
	case len(g.files) > 0:
		g.texts = append(g.texts, text)
		if g.timer != nil {
			g.timer.Stop()
			g.timer = nil
		}
		e.mu.Unlock()
		e.flushFiles(chatID)
		return true
	case !g.ready.empty():
		b := g.ready
		delete(e.held, chatID)
		e.mu.Unlock()
		e.promptWith(ctx, chatID, text, b)
		return true
	}
	e.mu.Unlock()
	return false
}

// flushFiles ends a chat's window: its files are fetched (voice notes
// transcribed) and, with words, queued as one prompt; without words they
// wait for the person's next message.
func (e *Engine) flushFiles(chatID string) {
	ctx := e.agentCtx
	e.mu.Lock()
	g := e.held[chatID]
	if g == nil || len(g.files) == 0 {
		e.mu.Unlock()
		return
	}
	files, texts := g.files, g.texts
	g.files, g.texts = nil, nil
	if g.timer != nil {
		g.timer.Stop()
		g.timer = nil
	}
	e.mu.Unlock()
	if ctx.Err() != nil {
		return
	}
	b, spoken := e.fetchAll(ctx, chatID, files)
	if b.empty() && len(spoken) == 0 {
		// Words written for files the agent cannot get would mislead it.
		if len(texts) > 0 {
			e.say(ctx, chatID, "Your words went with those files, so they were not sent to the agent either; send them again as text if you like.")
		}
		e.mu.Lock()
		if e.held[chatID] == g && len(g.files) == 0 && g.ready.empty() {
			delete(e.held, chatID)
		}
		e.mu.Unlock()
		return
	}
	texts = append(texts, spoken...)
	text := strings.Join(texts, "\n\n")
	e.mu.Lock()
	b = g.ready.merge(b)
	g.ready = nil
	if text == "" && !b.empty() {
		g.ready = b
		e.mu.Unlock()
		e.say(ctx, chatID, fmt.Sprintf("Got %s. What should the agent do with %s? Your next message goes with %s.",
			b.names(), pronoun(b), pronoun(b)))
		return
	}
	if e.held[chatID] == g && len(g.files) == 0 {
		delete(e.held, chatID)
	}
	e.mu.Unlock()
	if text == "" {
		return // nothing could be taken; the person was told why
	}
	e.promptWith(ctx, chatID, text, b)
}

// promptWith queues text and its files as the chat's next turn.
func (e *Engine) promptWith(ctx context.Context, chatID, text string, b *bundle) {
	c := e.chatFor(ctx, chatID)
	e.mu.Lock()
	c.lastPrompt = text
	e.mu.Unlock()
	if b.empty() {
		b = nil
	}
	e.enqueue(ctx, chatID, queued{text: text, files: b})
}

func (b *bundle) names() string {
	var names []string
	for _, f := range append(append([]fetched(nil), b.images...), b.files...) {
		names = append(names, f.name)
	}
	return strings.Join(names, ", ")
}

func pronoun(b *bundle) string {
	if len(b.images)+len(b.files) == 1 {
		return "it"
	}
	return "them"
}

// displayName names a file for people: its name, or what it is.
func displayName(f connectors.File) string {
	switch {
	case f.Name != "":
		return f.Name
	case f.Voice:
		return "a voice note"
	case strings.HasPrefix(f.MediaType, "image/"):
		return "a picture"
	}
	return "a file"
}

// sessionTools returns the MCP servers a new session gets and how to tie
// their credential to its chat (a no-op without SessionTools).
func (e *Engine) sessionTools() ([]agent.MCPServer, func(string)) {
	if e.opts.files.tools == nil {
		return nil, func(string) {}
	}
	servers, bind := e.opts.files.tools.Session()
	if bind == nil {
		bind = func(string) {}
	}
	return servers, bind
}
