package fakeapi

import (
	"encoding/base64"
	"fmt"
)

// ImageSource is an image block's source as the Messages API takes it:
// {"type":"base64","media_type":"image/png","data":"…"}.
type ImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

// Image is a picture the model received.
type Image struct {
	MediaType string
	Data      []byte // decoded
}

// UserImages are the image blocks of the request's user messages, in
// order, decoded; a block that is not valid base64 is an error naming it.
func (r *Request) UserImages() ([]Image, error) {
	var out []Image
	for i, m := range r.Messages {
		if m.Role != "user" {
			continue
		}
		for j, b := range m.Content {
			if b.Type != "image" {
				continue
			}
			if b.Source == nil || b.Source.Type != "base64" {
				return nil, fmt.Errorf("message %d block %d: an image block without a base64 source", i, j)
			}
			data, err := base64.StdEncoding.DecodeString(b.Source.Data)
			if err != nil {
				return nil, fmt.Errorf("message %d block %d: %w", i, j, err)
			}
			out = append(out, Image{MediaType: b.Source.MediaType, Data: data})
		}
	}
	return out, nil
}
