package engine

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/leashd/leashd/engine/agent"
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
	e.mu.Lock()
	dir := c.workDir
	e.mu.Unlock()
	paths, problems, onRunner := e.saveOnRunner(ctx, c.id, b.id, save)
	if !onRunner {
		paths, problems = saveInbox(dir, b.id, save)
	}
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

// saveOnRunner saves files in the inbox of the chat's runner, when its
// agent runs on one (the agent reads them there, on that machine's disk);
// onRunner false: it runs here.
func (e *Engine) saveOnRunner(ctx context.Context, chatID, id string, files []fetched) (paths []saved, problems []string, onRunner bool) {
	if !e.onRunner(chatID) {
		return nil, nil, false
	}
	e.mu.Lock()
	r := e.runners
	e.mu.Unlock()
	used := map[string]bool{}
	for _, f := range files {
		p := path.Join(inboxDir, id, uniqueName(used, f.name))
		if err := r.PutFile(ctx, chatID, p, f.data); err != nil {
			problems = append(problems, f.name+" could not be saved on the agent's runner: "+err.Error())
			continue
		}
		paths = append(paths, saved{path: p, mediaType: f.mediaType, size: len(f.data)})
	}
	return paths, problems, true
}
