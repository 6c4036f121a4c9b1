package terminal

import "context"

// Progress implements connectors.Progresser: a long turn's signs of life
// show dimmed under the spinner while the turn runs ("" takes them away).
func (c *Connector) Progress(_ context.Context, chatID, text string) error {
	if c.mine(chatID) {
		c.push(outEvent{kind: outProgress, text: text})
	}
	return nil
}
