package engine

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/leashd/leashd/engine/agent"
	"github.com/leashd/leashd/engine/internal/inbox"
)

// turnPrompt is the agent's prompt for text and the files sent with it:
// pictures as images when the session's agent takes them, everything else
// (and pictures for an agent that takes none) saved in the chat's inbox
// and named in the text.
func (e *Engine) turnPrompt(ctx context.Context, c *chat, sess agent.Session, text string, b *bundle) agent.Prompt {
	p := agent.Text(text)
	if b == nil {
		return p
	}
	takes := true
	if it, ok := sess.(agent.ImageTaker); ok {
		takes = it.TakesImages()
	}
	save := b.files
	if takes {
		for _, im := range b.images {
			p.Images = append(p.Images, agent.Image{MediaType: im.mediaType, Data: im.data})
		}
	} else {
		save = append(append([]fetched(nil), b.images...), b.files...)
	}
	if len(save) == 0 {
		return p
	}
	paths, problems := e.saveInbox(ctx, c, b.id, save)
	if len(problems) > 0 {
		e.say(ctx, c.id, "Not sent to the agent:\n• "+strings.Join(problems, "\n• "))
	}
	if len(paths) == 0 {
		return p
	}
	var list strings.Builder
	list.WriteString("\n\n[The person sent these files; they are saved in the working directory:")
	for _, f := range paths {
		fmt.Fprintf(&list, "\n- %s (%s, %s)", f.path, f.mediaType, byteSize(int64(f.size)))
	}
	list.WriteString("]")
	p.Text += list.String()
	return p
}

// saveInbox saves files under .leashd/inbox/<id>/ in the working
// directory of the chat's agent: here, or on its runner when it runs on
// one (the agent reads them there, on that machine's disk). It returns
// their paths relative to the working directory, and what went wrong.
func (e *Engine) saveInbox(ctx context.Context, c *chat, id string, files []fetched) (paths []saved, problems []string) {
	put, where, done, err := e.inboxOf(ctx, c)
	if err != nil {
		return nil, []string{err.Error()}
	}
	defer done()
	used := map[string]bool{}
	for _, f := range files {
		p := path.Join(inbox.Dir, id, uniqueName(used, f.name))
		if err := put(p, f.data); err != nil {
			problems = append(problems, f.name+" could not be saved"+where+": "+err.Error())
			continue
		}
		paths = append(paths, saved{path: p, mediaType: f.mediaType, size: len(f.data)})
	}
	return paths, problems
}

// inboxOf is how a file is put in the chat's inbox, where that is for
// the person (" on the agent's runner", or "" for here), and done, to
// call once all are.
func (e *Engine) inboxOf(ctx context.Context, c *chat) (put func(p string, data []byte) error, where string, done func(), err error) {
	e.mu.Lock()
	r, dir := e.runners, c.workDir
	e.mu.Unlock()
	if r != nil && r.OnRunner(c.id) {
		return func(p string, data []byte) error { return r.PutFile(ctx, c.id, p, data) }, " on the agent's runner", func() {}, nil
	}
	root, err := openWorkDir(dir)
	if err != nil {
		return nil, "", nil, err
	}
	return func(p string, data []byte) error {
		_, err := inbox.Write(root, p, bytes.NewReader(data))
		return err
	}, "", func() { root.Close() }, nil
}
