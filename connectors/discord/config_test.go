package discord

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/leashd/leashd/connectors"
	"github.com/leashd/leashd/interactions"
)

// Bad settings are all reported at once, each naming its variable, the
// value and what is accepted.
func TestConfigValidate(t *testing.T) {
	require.NoError(t, Config{}.Validate(connectors.Host{}))
	require.NoError(t, Config{BotToken: "abc", AllowedUsers: []string{"123456789012345678"}, ApiURL: "http://127.0.0.1:9/"}.Validate(connectors.Host{}))
	err := Config{BotToken: "Bot abc", AllowedUsers: []string{"alice"}, AllowedRoles: []string{"12x"}, Approvers: []string{"<@12>"}, ApiURL: "ftp://x"}.Validate(connectors.Host{})
	require.Error(t, err)
	for _, want := range []string{`LEASHD_DISCORD_ALLOWED_USERS: "alice" is invalid`, `LEASHD_DISCORD_ALLOWED_ROLES: "12x"`, `LEASHD_DISCORD_APPROVERS: "<@12>"`,
		"Copy ID", "without \"Bot \"", `LEASHD_DISCORD_API_URL="ftp://x"`} {
		assert.Contains(t, err.Error(), want)
	}
	err = Config{AllowedUsers: []string{"1"}}.Validate(connectors.Host{})
	assert.ErrorContains(t, err, "without LEASHD_DISCORD_BOT_TOKEN")
	assert.Equal(t, []string{"abc"}, Config{BotToken: "abc"}.Secrets())
	assert.Empty(t, Config{}.Secrets())
}

// Whatever an interaction holds — ten options with labels of 200 bytes,
// long descriptions, a long question — what is posted fits Discord: at
// most 2,000 characters, 5 rows of 5 buttons, labels of 80, menu options
// of 100.
func TestRenderFitsDiscordsLimits(t *testing.T) {
	var opts []interactions.Choice
	for i := range 10 {
		opts = append(opts, interactions.Choice{Label: strings.Repeat(string(rune('a'+i)), 200), Description: strings.Repeat("d", 500)})
	}
	for _, multi := range []bool{false, true} {
		it := interactions.Interaction{ID: strings.Repeat("i", 40), ChatID: "discord:1", Kind: interactions.KindQuestion, Header: strings.Repeat("h", 100),
			Question: strings.Repeat("why? ", 3000), Options: opts, MultiSelect: multi}
		msgs := render(it, place{}, []string{opts[1].Label})
		for _, m := range msgs {
			assert.LessOrEqual(t, len([]rune(m.content)), maxContent)
		}
		last := msgs[len(msgs)-1]
		require.NotEmpty(t, last.components)
		assert.LessOrEqual(t, len(last.components), maxRows)
		up := renderUpdate(interactions.Event{Type: interactions.EventResolved, Interaction: it,
			Resolution: interactions.Resolution{Status: interactions.StatusAnswered, Answer: strings.Repeat("x", 5000), By: "7"}}, place{})
		assert.LessOrEqual(t, len([]rune(up.content)), maxContent)
		assert.NotNil(t, up.components, "an empty list removes the buttons")
		assert.Empty(t, up.components)
	}
}

// Deeper headings become bold; code blocks are left alone.
func TestToDiscord(t *testing.T) {
	assert.Equal(t, "# Title\n**Deep**\n```\n#### kept\n```", toDiscord("# Title\n#### Deep\n```\n#### kept\n```"))
	parts := splitMarkdown("```\n"+strings.Repeat("code line\n", 400)+"```", maxContent)
	require.Greater(t, len(parts), 1)
	for _, p := range parts {
		assert.Equal(t, 0, strings.Count(p, "```")%2, "each part closes its code block")
		assert.LessOrEqual(t, len([]rune(p)), maxContent)
	}
}
