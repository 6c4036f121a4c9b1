package interactions_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/interactions"
)

// A tool approval's diff is bounded like its summary: an agent's is cut
// to MaxDiffBytes with a note and made UTF-8, a program's over it refused
// naming the field.
func TestDiffIsBounded(t *testing.T) {
	shown := make(chan interactions.Interaction, 1)
	c := interactions.New(interactions.WithPresenter(interactions.PresenterFunc(func(_ context.Context, it *interactions.Interaction) (string, error) {
		shown <- *it
		return "ref", nil
	})))
	huge := strings.Repeat("+x\n", interactions.MaxDiffBytes) + "\xff"
	_, _, err := c.Start(context.Background(), interactions.Interaction{ChatID: "c", Kind: interactions.KindToolApproval, ToolName: "Edit", Diff: huge}, 0)
	require.NoError(t, err)
	it := <-shown
	assert.LessOrEqual(t, len(it.Diff), interactions.MaxDiffBytes)
	assert.Contains(t, it.Diff, "bytes cut)")
	c.CancelPending("c", "done")

	_, _, err = c.Request(interactions.WithAsker(context.Background(), "api"),
		interactions.Interaction{ChatID: "c", Kind: interactions.KindToolApproval, ToolName: "Edit", Diff: huge})
	require.ErrorIs(t, err, interactions.ErrInvalid)
	assert.ErrorContains(t, err, "diff: must be UTF-8 of at most 32768 bytes")
}
