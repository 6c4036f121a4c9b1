package client_test

import (
	"context"
	"testing"

	"github.com/leashd/leashd/interactions"
	"github.com/leashd/leashd/interactions/client"
)

// BenchmarkRequestInput is one question over the API — POST, the
// coordinator, the web connector's presentation, a long-poll — answered
// as soon as it is asked.
func BenchmarkRequestInput(b *testing.B) {
	url, coord, stop := leashd(token)
	defer stop()
	events, unsub := coord.Subscribe()
	defer unsub()
	go func() {
		for ev := range events {
			if ev.Type == interactions.EventRequested {
				_, _ = coord.Reply(ev.Interaction.ID, interactions.Reply{Answers: []string{"Yes"}})
			}
		}
	}()
	c := client.New(url, token)
	req := interactions.InputRequest{ChatID: "bench", Prompt: "Go?", Options: []interactions.Choice{{Label: "Yes"}, {Label: "No"}}}
	b.ResetTimer()
	for b.Loop() {
		resp, err := c.RequestInput(context.Background(), req)
		if err != nil || resp.Value != "Yes" {
			b.Fatalf("%+v %v", resp, err)
		}
	}
}
