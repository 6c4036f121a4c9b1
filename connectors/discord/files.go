package discord

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/bwmarrin/discordgo"

	"github.com/leashd/leashd/connectors"
)

// maxUpload is what Discord lets a bot post in one message without
// server boosts: 25 MiB.
const maxUpload = 25 << 20

// filesOf turns a message's attachments into connectors.Files, each
// downloaded from its CDN URL when fetched. A voice message (the
// IS_VOICE_MESSAGE flag) and an audio clip are voice notes.
func (c *Connector) filesOf(m *discordgo.Message) []connectors.File {
	var out []connectors.File
	voiceMsg := m.Flags&discordgo.MessageFlagsIsVoiceMessage != 0
	for _, a := range m.Attachments {
		if a == nil {
			continue
		}
		f := connectors.File{Name: a.Filename, MediaType: a.ContentType, Size: int64(a.Size),
			Voice: voiceMsg || strings.HasPrefix(a.ContentType, "audio/")}
		u, err := url.Parse(a.URL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			f.Refused = "Discord gave no address to download it from"
		}
		link := a.URL
		f.Fetch = func(ctx context.Context, limit int64) ([]byte, error) { return c.download(ctx, link, limit) }
		out = append(out, f)
	}
	return out
}

// download fetches an attachment from Discord's CDN, at most limit bytes.
// The CDN needs no token, so none is sent (the request goes through the
// session's client, which adds none outside discordgo's own calls).
func (c *Connector) download(ctx context.Context, link string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return nil, fmt.Errorf("discord: the attachment's address: %w", err)
	}
	resp, err := c.s.Client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("discord: downloading the attachment: %s", c.redact(err.Error()))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("discord: downloading the attachment answered %s", resp.Status)
	}
	if resp.ContentLength > limit {
		return nil, fmt.Errorf("%w: %d bytes", connectors.ErrTooLarge, resp.ContentLength)
	}
	return connectors.ReadLimited(resp.Body, limit)
}

// SendFile implements connectors.FileSender: the file is posted as a
// message's attachment (multipart) in the chat's DM or thread, the
// caption as its text. A file over Discord's 25 MiB is refused before
// it is sent.
func (c *Connector) SendFile(ctx context.Context, chatID string, f connectors.OutFile) error {
	ref, err := parseChat(chatID)
	if err != nil {
		return err
	}
	if len(f.Data) > maxUpload {
		return fmt.Errorf("%w: %d bytes, over Discord's limit of 25 MiB for bots", connectors.ErrTooLarge, len(f.Data))
	}
	if len(f.Data) == 0 {
		return errors.New("the file is empty; Discord takes no empty files")
	}
	name := f.Name
	if strings.TrimSpace(name) == "" {
		name = "file"
	}
	msg := &discordgo.MessageSend{Content: truncate(f.Caption, maxContent), AllowedMentions: noMentions()}
	err = c.call(ctx, func(o ...discordgo.RequestOption) error {
		// A fresh reader each try: a rate-limited try has read the last.
		msg.Files = []*discordgo.File{{Name: name, ContentType: f.MediaType, Reader: bytes.NewReader(f.Data)}}
		_, err := c.s.ChannelMessageSendComplex(ref.channel, msg, o...)
		return err
	})
	if err != nil {
		var rest *discordgo.RESTError
		if errors.As(err, &rest) && rest.Response != nil && rest.Response.StatusCode == http.StatusRequestEntityTooLarge {
			return fmt.Errorf("%w: Discord refused %d bytes", connectors.ErrTooLarge, len(f.Data))
		}
		return fmt.Errorf("discord: sending a file: %s", c.redact(err.Error()))
	}
	c.countOut()
	return nil
}
