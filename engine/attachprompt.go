package engine

import (
	"context"
	"fmt"
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
	paths, problems := saveInbox(dir, b.id, save)
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
